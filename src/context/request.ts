import type { AuthContext } from './types.js';
import { ChannelSelectionError } from '../errors/domain.js';
import { hostName } from '../lib/host.js';

/**
 * The workspace hostname of a request: the Host header lowercased without port
 * (X-Forwarded-Host's first entry instead when the server sits behind a trusted proxy).
 * No header, an empty one or one that is no valid host name reaches no workspace: null.
 */
export function requestHost(headers: Pick<Headers, 'get'>, trustProxy: boolean): string | null {
  const forwarded = trustProxy ? headers.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined;
  return hostName(forwarded || headers.get('host'));
}

export function bearerToken(headers: Pick<Headers, 'get'>): string | null {
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(headers.get('authorization') ?? '');
  return match?.[1] ?? null;
}

/** The acting channel, required by every operation except listing channels. */
export function actingChannel(auth: AuthContext) {
  if (!auth.channel) throw new ChannelSelectionError();
  return auth.channel;
}
