/**
 * A channel's pace after its provider's rate-limit answers (docs/broadcasts.md#rate-limit-answers),
 * as every process reads and writes it in the channel's `channel_pacing` row: the broadcast runner
 * paces by `currentRate`, and the delivery worker that receives a rate-limit answer records
 * `afterRateLimit` under the row's lock.
 */

/** How fast the rate climbs back after a halving: this share of the channel's own rate per clean second. */
export const CLIMB_PER_SECOND = 0.1;
/** The least a channel's rate is halved to, in messages a second. */
export const MIN_RATE_PER_SECOND = 0.1;
/**
 * Rate-limit answers within this long of the moment sending resumed after a halving are answers to
 * sends made before it (in flight together): they halve nothing more.
 */
export const SAME_EPISODE_MS = 1000;

/** What a channel's `channel_pacing` row says of its provider's rate limits. */
export interface PaceLimits {
  /** The rate the last halving set (null: never limited). */
  limited_rate: number | null;
  /** When sending resumed at that rate: the climb back starts there. */
  limited_at: Date | null;
  /** No message goes out on the channel before this (the provider's `Retry-After`). */
  blocked_until: Date | null;
}

const time = (value: Date | null) => (value === null ? null : new Date(value).getTime());

/**
 * The channel's rate at `now` (epoch ms): its own `max`, or — after a rate-limit answer — the
 * halved rate, climbing back by CLIMB_PER_SECOND × `max` for each second since sending resumed,
 * up to `max`.
 */
export function currentRate(max: number, pace: Pick<PaceLimits, 'limited_rate' | 'limited_at'>, now: number): number {
  const since = time(pace.limited_at);
  if (pace.limited_rate === null || since === null) return max;
  const climbed = pace.limited_rate + (max * CLIMB_PER_SECOND * Math.max(0, now - since)) / 1000;
  return Math.min(max, Math.max(MIN_RATE_PER_SECOND, climbed));
}

/** The channel's pace after a rate-limit answer, and when its next message may go out. */
export interface RateLimited {
  limitedRate: number;
  /** When sending resumes: the first message owed goes out then, the others one every 1 / limitedRate s after it. */
  resumeAt: number;
  limitedAt: number;
  blockedUntil: number | null;
}

/**
 * A rate-limit answer at `now` (epoch ms), with the provider's `Retry-After` if it gave one: the
 * rate it had climbed to is halved (not below MIN_RATE_PER_SECOND), unless the answer belongs to
 * the episode already counted (within SAME_EPISODE_MS of resuming); with a `Retry-After`, nothing
 * goes out on the channel before it has passed (a later block already set is kept), and without
 * one the next message waits one turn at the halved rate.
 */
export function afterRateLimit(max: number, pace: PaceLimits, now: number, retryAfterMs: number | null): RateLimited {
  const limitedAt = time(pace.limited_at);
  const blocked = time(pace.blocked_until);
  const sameEpisode = pace.limited_rate !== null && limitedAt !== null && now < limitedAt + SAME_EPISODE_MS;
  const limitedRate = sameEpisode ? pace.limited_rate! : Math.max(MIN_RATE_PER_SECOND, currentRate(max, pace, now) / 2);
  const blockedUntil = retryAfterMs === null ? blocked : Math.max(blocked ?? 0, now + retryAfterMs);
  const resumeAt = retryAfterMs === null ? Math.max(now + 1000 / limitedRate, blocked ?? 0) : blockedUntil!;
  return { limitedRate, resumeAt, limitedAt: Math.max(resumeAt, sameEpisode ? limitedAt! : 0), blockedUntil };
}
