import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { describeError } from '../errors/log.js';
import type { ResolvedCredential } from './types.js';
import {
  affectsCredential,
  credentialInvalidationChannel,
  parseInvalidation,
  type CredentialInvalidation,
} from './credential-invalidation.js';

/** Enough for every live credential of a large deployment; only credentials that authenticated are kept. */
export const DEFAULT_MAX_ENTRIES = 10_000;

export interface CredentialCache {
  /**
   * The credential `tokenHash` resolves to at `host`: the copy resolved within the last `ttlMs`
   * (never past the credential's expiry, nor a session's past its minting credential's), or else
   * what `load` answers. Only credentials that admit something are kept, never refusals. Concurrent misses for one key share one `load`.
   */
  resolve(host: string, tokenHash: string, load: () => Promise<ResolvedCredential | null>): Promise<ResolvedCredential | null>;
  /** Drops every kept credential `change` could affect, and any resolution still in flight. */
  invalidate(change: CredentialInvalidation): void;
  /** How many credentials are kept. */
  readonly size: number;
  dispose(): Promise<void>;
}

interface Entry {
  tokenHash: string;
  value: ResolvedCredential;
  /** Epoch ms from which the copy is no longer used: its resolution plus the TTL, or its expiry if sooner. */
  until: number;
}

function affects(entry: Entry, change: CredentialInvalidation): boolean {
  if ('tokenHash' in change) return entry.tokenHash === change.tokenHash;
  return affectsCredential(entry.value, change);
}

/** Kept copies are shared by concurrent requests: none of them may change one for the others. */
function frozen(value: ResolvedCredential): ResolvedCredential {
  Object.freeze(value.workspace);
  Object.freeze(value.credential.user);
  Object.freeze(value.credential.origins);
  Object.freeze(value.credential);
  value.channels.forEach((channel) => Object.freeze(channel));
  Object.freeze(value.channels);
  return Object.freeze(value);
}

/**
 * Resolved credentials kept for `ttlMs` (0: no cache, null is returned), at most `maxEntries`,
 * the least recently used dropped first. Without Redis, a change made by another process (the
 * admin commands) reaches this one when its copy lapses, within `ttlMs`. With `redisUrl`, changes
 * announced there drop the affected copies at once, and credentials are kept only while this
 * process listens: while Redis is unreachable every request reads its credential afresh.
 */
export function createCredentialCache(options: {
  ttlMs: number;
  redisUrl?: string | undefined;
  /** REDIS_PREFIX: the announcements' channel is under it. */
  redisPrefix?: string | undefined;
  logger: Logger;
  maxEntries?: number;
  now?: () => number;
}): CredentialCache | null {
  const { ttlMs, logger, maxEntries = DEFAULT_MAX_ENTRIES, now = Date.now } = options;
  if (ttlMs === 0) return null;
  // Map iteration follows insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Entry>();
  const loading = new Map<string, Promise<ResolvedCredential | null>>();
  // Bumped by every change: a resolution that started before one may have read what it undid.
  let generation = 0;
  let keeping = !options.redisUrl;

  const invalidate = (change: CredentialInvalidation) => {
    generation++;
    loading.clear();
    for (const [key, entry] of entries) if (affects(entry, change)) entries.delete(key);
  };

  const subscriber = options.redisUrl
    ? subscribe(options.redisUrl, options.redisPrefix, logger, {
        change: invalidate,
        listening(active) {
          keeping = active;
          // Announcements made while nobody listened are lost: what they described is read afresh.
          invalidate({ all: true });
        },
      })
    : undefined;

  return {
    resolve(host, tokenHash, load) {
      // A token hash is 64 hex characters: the host after it needs no separator.
      const key = tokenHash + host;
      const at = now();
      const entry = entries.get(key);
      if (entry) {
        entries.delete(key);
        if (at < entry.until) {
          entries.set(key, entry);
          return Promise.resolve(entry.value);
        }
      }
      const pending = loading.get(key);
      if (pending) return pending;
      const started = generation;
      const promise = load()
        .then((value) => {
          // A session lapses with its minting credential too; an expired credential is never kept.
          const until = value ? Math.min(at + ttlMs, value.expiresAt?.getTime() ?? Infinity, value.mintedByExpiresAt?.getTime() ?? Infinity) : 0;
          if (value && keeping && started === generation && until > at) {
            entries.set(key, { tokenHash, value: frozen(value), until });
            if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
          }
          return value;
        })
        .finally(() => {
          if (loading.get(key) === promise) loading.delete(key);
        });
      loading.set(key, promise);
      return promise;
    },
    invalidate,
    get size() {
      return entries.size;
    },
    async dispose() {
      entries.clear();
      await subscriber?.close();
    },
  };
}

/**
 * Listens for announced changes on Redis, telling `listening` each time it starts (subscribed on
 * a new connection) and stops (the connection lost) listening.
 */
function subscribe(
  redisUrl: string,
  prefix: string | undefined,
  logger: Logger,
  on: { change: (change: CredentialInvalidation) => void; listening: (now: boolean) => void },
) {
  // Subscribed by hand on each connection, so that listening starts only once Redis confirms it.
  const redis = new Redis(redisUrl, { autoResubscribe: false, maxRetriesPerRequest: null });
  const channelName = credentialInvalidationChannel(prefix);
  let listening = false;
  let outage = false;
  redis.on('message', (channel: string, message: string) => {
    if (channel === channelName) on.change(parseInvalidation(message));
  });
  redis.on('ready', () => {
    redis.subscribe(channelName).then(
      () => {
        listening = true;
        on.listening(true);
        if (outage) logger.info('credential announcements reachable again');
        outage = false;
      },
      (error: unknown) => logger.warn({ err: describeError(error) }, 'cannot subscribe to credential announcements'),
    );
  });
  redis.on('close', () => {
    if (!listening) return;
    listening = false;
    on.listening(false);
  });
  redis.on('error', (error) => {
    // Once per outage, however many reconnection attempts fail.
    if (outage) return;
    outage = true;
    logger.warn({ err: describeError(error) }, 'credential announcements unreachable: credentials are read on every request until Redis returns');
  });
  return {
    async close() {
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
}
