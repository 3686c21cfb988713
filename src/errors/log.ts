import type { Logger } from 'pino';
import { DomainError } from './domain.js';
import { isGraphQLError } from './graphql-error.js';

/**
 * An unexpected error as it may be logged: its type, code, a one-line summary of
 * its message (first and last lines: Prisma puts a source excerpt in between) and
 * its stack frames. Nothing else of the message is kept, because client errors
 * can echo query arguments there (a message body, a token).
 */
export function describeError(error: unknown) {
  if (typeof error !== 'object' || error === null) return { type: typeof error };
  const e = error as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown; constructor?: { name?: string } };
  const lines = String(e.message ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const summary = lines.length > 1 ? `${lines[0]} … ${lines[lines.length - 1]}` : (lines[0] ?? '');
  const frames = String(e.stack ?? '')
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '));
  const type = typeof e.name === 'string' && e.name !== 'Object' ? e.name : (e.constructor?.name ?? 'Error');
  return {
    type,
    ...(e.code !== undefined ? { code: String(e.code) } : {}),
    message: summary.slice(0, 500),
    stack: frames.slice(0, 15).join('\n'),
  };
}

export function logUnexpected(logger: Logger, error: unknown): void {
  logger.error({ err: describeError(error) }, 'unexpected failure');
}

/** Masked GraphQL errors and the unexpected failures they hide, until the request's logger has logged them. */
const hidden = new WeakMap<object, object>();
const unlogged = new WeakSet<object>();

/**
 * Notes that `masked` hides the unexpected failure `original` in a GraphQL answer: it is logged
 * once, by the logger of the request whose answer carries it (`logMaskedFailures`), so that the line
 * has the request's id.
 */
export function hideFailure(masked: object, original: unknown): void {
  if (typeof original !== 'object' || original === null) return;
  hidden.set(masked, original);
  unlogged.add(original);
}

/** Logs on the request's logger the unexpected failures that `errors` (a GraphQL answer's) hide. */
export function logMaskedFailures(log: Logger, errors: readonly unknown[] | undefined): void {
  for (const error of errors ?? []) {
    const original = typeof error === 'object' && error !== null ? hidden.get(error) : undefined;
    if (original && unlogged.delete(original)) logUnexpected(log, original);
  }
}

/**
 * The logger yoga uses. Yoga reports every error it masks through `error`; the
 * expected ones (domain errors, GraphQL validation) are the client's business
 * and go to debug, the others are logged once as unexpected failures.
 */
export function yogaLogger(logger: Logger) {
  const first = (args: unknown[]) => args[0];
  return {
    debug: (...args: unknown[]) => logger.debug({ detail: String(first(args)) }, 'graphql'),
    info: (...args: unknown[]) => logger.info({ detail: String(first(args)) }, 'graphql'),
    warn: (...args: unknown[]) => logger.warn({ detail: String(first(args)) }, 'graphql'),
    error: (...args: unknown[]) => {
      const error = first(args);
      const original = (error as { originalError?: unknown } | null)?.originalError ?? error;
      if (original instanceof DomainError || isGraphQLError(original)) {
        logger.debug({ detail: (original as Error).message }, 'graphql request error');
        return;
      }
      // A failure hidden in an answer is logged by that answer's request; one no answer carries
      // (a stream's) is logged here once the answer had its turn.
      if (typeof original === 'object' && original !== null && unlogged.has(original)) {
        setImmediate(() => unlogged.delete(original) && logUnexpected(logger, original));
        return;
      }
      logUnexpected(logger, original);
    },
  };
}
