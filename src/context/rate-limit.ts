import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitedError, type RateLimitState } from '../errors/domain.js';
import { closeRedis, DEFAULT_REDIS_PREFIX, logRedisOutages } from '../lib/redis.js';

const WINDOW_S = 60;

export interface RateLimiter {
  /** Counts one request of a credential; throws RateLimitedError over the budget. */
  consume(credentialId: string): Promise<RateLimitState>;
  /**
   * Resolves once the shared store answers (at once without Redis), or after `timeoutMs`: a
   * server that starts taking requests before then counts its first ones in memory, apart from
   * the other processes.
   */
  ready(timeoutMs: number): Promise<boolean>;
  dispose(): Promise<void>;
}

function state(limit: number, res: RateLimiterRes): RateLimitState {
  return { limit, remaining: Math.max(0, res.remainingPoints), resetS: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
}

/**
 * A budget of `perMinute` requests per credential, per fixed minute: shared by
 * every server process through Redis when `redisUrl` is given, in memory
 * otherwise, behind the same code path. While Redis cannot be reached each
 * process counts in memory instead, so an outage of Redis never refuses service; it is logged
 * once each way. Counts are kept under `prefix` (REDIS_PREFIX). `perMinute` 0 turns the limit off.
 */
export function createRateLimiter(options: { perMinute: number; redisUrl?: string | undefined; prefix?: string | undefined; logger: Logger }): RateLimiter | null {
  const { perMinute, logger } = options;
  if (perMinute === 0) return null;
  const settings = { points: perMinute, duration: WINDOW_S, keyPrefix: `${options.prefix ?? DEFAULT_REDIS_PREFIX}rate-limit` };
  let redis: Redis | undefined;
  let limiter: RateLimiterAbstract;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    logRedisOutages([redis], logger, 'rate limit store (Redis)', 'each process counts its own requests until it returns');
    limiter = new RateLimiterRedis({ ...settings, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(settings) });
  } else {
    limiter = new RateLimiterMemory(settings);
  }
  return {
    ready(timeoutMs) {
      if (!redis || redis.status === 'ready') return Promise.resolve(true);
      const client = redis;
      return new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(ok);
        };
        const onReady = () => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        client.once('ready', onReady);
      });
    },
    async consume(credentialId) {
      try {
        return state(perMinute, await limiter.consume(credentialId));
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw new RateLimitedError(state(perMinute, rejection));
        throw rejection;
      }
    },
    async dispose() {
      if (redis) await closeRedis(redis);
    },
  };
}

/** `RateLimit-Limit/Remaining/Reset` (seconds until the budget renews), and `Retry-After` once it is spent. */
export function rateLimitHeaders(limit: RateLimitState, exceeded: boolean): Record<string, string> {
  return {
    'ratelimit-limit': String(limit.limit),
    'ratelimit-remaining': String(limit.remaining),
    'ratelimit-reset': String(limit.resetS),
    ...(exceeded ? { 'retry-after': String(limit.resetS) } : {}),
  };
}

/** By the request (a fetch Request, or the object a request served from node:http is known by). */
const recorded = new WeakMap<object, { state: RateLimitState; exceeded: boolean }>();

/** Counts the request against its credential's budget and remembers the outcome for the response. */
export async function admitRequest(limiter: RateLimiter | null | undefined, request: object, credentialId: string): Promise<void> {
  if (!limiter) return;
  try {
    recorded.set(request, { state: await limiter.consume(credentialId), exceeded: false });
  } catch (error) {
    if (error instanceof RateLimitedError) recorded.set(request, { state: error.state, exceeded: true });
    throw error;
  }
}

/** The rate-limit headers of a request that was counted, for its response (REST and GraphQL alike). */
export function recordedRateLimitHeaders(request: object): Record<string, string> {
  const entry = recorded.get(request);
  return entry ? rateLimitHeaders(entry.state, entry.exceeded) : {};
}

/** Hands the count of a request on to the Request it continues as (one served from node:http, then by the app). */
export function carryRateLimit(from: object, to: object): void {
  const entry = recorded.get(from);
  if (entry) recorded.set(to, entry);
}
