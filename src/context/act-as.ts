import type { Channel } from '../generated/prisma/client.js';
import { AuthenticationError, TokenExpiredError } from '../errors/domain.js';
import type { AuthContext, ResolvedCredential } from './types.js';

/**
 * The request's caller from a resolved credential and its X-Channel-Uuid: the named channel,
 * which must be one the credential can act as, or without the header its only channel. An
 * expired credential is TokenExpiredError.
 */
export function actAs(resolved: ResolvedCredential, channelHeader: string | null, now: number = Date.now()): AuthContext {
  const { workspace, credential, channels, connectionId, expiresAt, mintedByExpiresAt } = resolved;
  // Told apart from any other refusal, so that a client knows to refresh (docs/browser-apps.md).
  if (expiresAt && expiresAt.getTime() <= now) throw new TokenExpiredError();
  // A session outlives its minting credential by no moment, even one kept in the cache.
  if (mintedByExpiresAt && mintedByExpiresAt.getTime() <= now) throw new AuthenticationError();
  let channel: Channel | null;
  if (channelHeader !== null) {
    const wanted = channelHeader.trim().toLowerCase();
    channel = channels.find((c) => c.id === wanted) ?? null;
    if (!channel) throw new AuthenticationError();
  } else {
    channel = channels.length === 1 ? channels[0]! : null;
  }
  return { workspace, credential, channels, channel, connectionId, expiresAt, mintedByExpiresAt };
}
