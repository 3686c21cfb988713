import type { ProviderDescriptor, SendOutcome } from './provider.js';

/**
 * A provider's rate-limit answer, read the same way for every provider (docs/broadcasts.md#rate-limit-answers):
 * HTTP 429 from any provider, or an error code its descriptor lists in `limits.rateLimitedCodes`.
 */

/** The longest wait a `Retry-After` is taken at: a later one (a misread date, a day) waits this long. */
export const MAX_RETRY_AFTER_MS = 3600_000;

/** A rate-limit answer: the provider's `Retry-After` as given, if any (read with `retryAfterMs`). */
export interface RateLimit {
  retryAfter: string | null;
}

/**
 * A `Retry-After` value in milliseconds from `now`: whole seconds, or an HTTP date (past: 0),
 * at most MAX_RETRY_AFTER_MS; null when absent or unreadable.
 */
export function retryAfterMs(value: string | null | undefined, now: number): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** Whether an attempt's outcome is the provider saying "too many": then what it said of waiting. */
export function rateLimitOf(outcome: SendOutcome, descriptor: Pick<ProviderDescriptor, 'limits'> | undefined): RateLimit | null {
  if (outcome.kind === 'sent' || !outcome.reply) return null;
  const { reply } = outcome;
  const code = outcome.kind === 'failed' ? outcome.code : reply.code;
  const codes = descriptor?.limits?.rateLimitedCodes ?? [];
  if (reply.status !== 429 && !(code !== undefined && codes.includes(code))) return null;
  return { retryAfter: reply.retryAfter ?? null };
}
