import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitedError, type RateLimitState } from '../errors/domain.js';
import { closeRedis, DEFAULT_REDIS_PREFIX, logRedisOutages } from '../lib/redis.js';

const WINDOW_S = 60;

/** Which budget a credential's requests count against: backend credentials', or browser sessions'. */
export type Budget = 'backend' | 'session';

export interface RateLimiter {
  /** Counts one request of a credential against its budget; throws RateLimitedError over it. */
  consume(credentialId: string, budget?: Budget): Promise<RateLimitState>;
  /**
   * Resolves once the shared store answers (at once without Redis), or after `timeoutMs`: a
   * server that starts taking requests before then counts its first ones in memory, apart from
   * the other processes.
   */
  ready(timeoutMs: number): Promise<boolean>;
  dispose(): Promise<void>;
}

/** A budget turned off: nothing is counted, and no headers are sent for it. */
const UNLIMITED: RateLimitState = Object.freeze({ limit: 0, remaining: 0, resetS: 0 });

function state(limit: number, res: RateLimiterRes): RateLimitState {
  return { limit, remaining: Math.max(0, res.remainingPoints), resetS: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
}

/**
 * A budget of `perMinute` requests per credential, per fixed minute — `sessionPerMinute` for each
 * browser session (default `perMinute`) —: shared by every server process through Redis when
 * `redisUrl` is given, in memory otherwise, behind the same code path. While Redis cannot be
 * reached each process counts in memory instead, so an outage of Redis never refuses service; it
 * is logged once each way. Counts are kept under `prefix` (REDIS_PREFIX). A budget of 0 turns its
 * limit off.
 */
export function createRateLimiter(options: {
  perMinute: number;
  sessionPerMinute?: number | undefined;
  redisUrl?: string | undefined;
  prefix?: string | undefined;
  logger: Logger;
}): RateLimiter | null {
  const { perMinute, sessionPerMinute = perMinute, logger } = options;
  if (perMinute === 0 && sessionPerMinute === 0) return null;
  const keyPrefix = `${options.prefix ?? DEFAULT_REDIS_PREFIX}rate-limit`;
  let redis: Redis | undefined;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    logRedisOutages([redis], logger, 'rate limit store (Redis)', 'each process counts its own requests until it returns');
  }
  const limiterOf = (points: number, keyPrefix: string): RateLimiterAbstract | null => {
    if (points === 0) return null;
    const settings = { points, duration: WINDOW_S, keyPrefix };
    return redis
      ? new RateLimiterRedis({ ...settings, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(settings) })
      : new RateLimiterMemory(settings);
  };
  const budgets: Record<Budget, { limit: number; limiter: RateLimiterAbstract | null }> = {
    backend: { limit: perMinute, limiter: limiterOf(perMinute, keyPrefix) },
    session: { limit: sessionPerMinute, limiter: limiterOf(sessionPerMinute, `${keyPrefix}-session`) },
  };
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
    async consume(credentialId, budget = 'backend') {
      const { limit, limiter } = budgets[budget];
      if (!limiter) return UNLIMITED;
      try {
        return state(limit, await limiter.consume(credentialId));
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw new RateLimitedError(state(limit, rejection));
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

/** What the rate limit counted a request as, for its answer's headers. */
export interface RateLimitRecord {
  state: RateLimitState;
  exceeded: boolean;
}

/**
 * Counts a request against its credential's budget, recording the outcome on `record` (the
 * request's state) for its answer; over the budget throws RateLimitedError.
 */
export async function admitRequest(
  limiter: RateLimiter | null | undefined,
  credentialId: string,
  record: { rateLimit?: RateLimitRecord },
  budget: Budget = 'backend',
): Promise<void> {
  if (!limiter) return;
  try {
    const counted = await limiter.consume(credentialId, budget);
    if (counted !== UNLIMITED) record.rateLimit = { state: counted, exceeded: false };
  } catch (error) {
    if (error instanceof RateLimitedError) record.rateLimit = { state: error.state, exceeded: true };
    throw error;
  }
}
