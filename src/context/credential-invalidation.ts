import { Redis } from 'ioredis';
import { DEFAULT_REDIS_PREFIX } from '../lib/redis.js';

/** The announcements of changes to credentials (the event bus puts it under REDIS_PREFIX). */
export const CREDENTIAL_INVALIDATIONS = 'credential-invalidations';

/** The Redis channel on which changes to credentials are announced to every server process, under REDIS_PREFIX. */
export function credentialInvalidationChannel(prefix = DEFAULT_REDIS_PREFIX): string {
  return `${prefix}${CREDENTIAL_INVALIDATIONS}`;
}

/**
 * A change after which a resolved credential may admit less than it did: every cached credential
 * it could affect must be resolved again. A token (revoked), a credential by id (and the sessions
 * it minted), a channel (deactivated, changed), a connection (its channel links changed), the
 * sessions of a user, a whole workspace, or all.
 */
export type CredentialInvalidation =
  | { tokenHash: string }
  | { credentialId: string }
  | { channelId: string }
  | { connectionId: string }
  | { userId: string }
  | { workspaceId: string }
  | { all: true };

const KEYS = ['tokenHash', 'credentialId', 'channelId', 'connectionId', 'userId', 'workspaceId'] as const;

/**
 * Whether `change` could affect what `resolved` admits. A token hash names a credential this
 * cannot tell from a resolution (it keeps no hash), so it is taken to affect every one.
 */
export function affectsCredential(
  resolved: {
    workspace: { id: string };
    credential: { id: string; mintedById: string | null; user: { id: string } | null };
    channels: readonly { id: string }[];
    connectionId: string | null;
  },
  change: CredentialInvalidation,
): boolean {
  if ('all' in change || 'tokenHash' in change) return true;
  if ('credentialId' in change) return resolved.credential.id === change.credentialId || resolved.credential.mintedById === change.credentialId;
  if ('channelId' in change) return resolved.channels.some((channel) => channel.id === change.channelId);
  if ('connectionId' in change) return resolved.connectionId === change.connectionId;
  if ('userId' in change) return resolved.credential.user?.id === change.userId;
  return resolved.workspace.id === change.workspaceId;
}

/**
 * An announcement read from Redis. One that cannot be understood (another version's, a damaged
 * one) is taken as the broadest change: dropping every cached credential costs a statement per
 * caller, while ignoring a revocation would keep it working.
 */
export function parseInvalidation(message: string): CredentialInvalidation {
  try {
    const value: unknown = JSON.parse(message);
    if (value && typeof value === 'object') {
      for (const key of KEYS) {
        const id = (value as Record<string, unknown>)[key];
        if (typeof id === 'string' && id) return { [key]: id } as CredentialInvalidation;
      }
    }
  } catch {
    // falls through to the broadest change
  }
  return { all: true };
}

/**
 * Announces a change to every server process subscribed on `redisUrl`, for processes that share
 * no memory with the servers (the admin commands). Gives up after `timeoutMs`: the change itself
 * is already committed, and servers that miss it stop trusting their copy within AUTH_CACHE_MS.
 */
export async function publishInvalidation(
  redisUrl: string,
  change: CredentialInvalidation,
  { prefix = DEFAULT_REDIS_PREFIX, timeoutMs = 3000 }: { prefix?: string; timeoutMs?: number } = {},
): Promise<void> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Failures surface through connect() and publish(); without a listener ioredis would also print them.
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.publish(credentialInvalidationChannel(prefix), JSON.stringify(change));
    await redis.quit();
  } finally {
    redis.disconnect();
  }
}
