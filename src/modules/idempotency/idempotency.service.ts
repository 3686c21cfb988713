import { createHash } from 'node:crypto';
import type { Db } from '../../db/types.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { Logger } from 'pino';
import type { RequestContext } from '../../context/types.js';
import { isLockTimeout } from '../../db/errors.js';
import { RequestInFlightError, ValidationError } from '../../errors/domain.js';
import { describeError } from '../../errors/log.js';

/** How long an answer is replayed. */
export const IDEMPOTENCY_TTL_HOURS = 24;

/**
 * How long a duplicate waits for the claim of a request still running before it
 * is answered 409: long enough to ride out the claim's own insert, short enough
 * that a retry of a slow request is told at once.
 */
const IN_FLIGHT_WAIT = '100ms';

export const IDEMPOTENCY_MESSAGES = {
  shape: 'The Idempotency-Key must be 1 to 255 printable ASCII characters.',
  reused: 'The Idempotency-Key was already used with a different request body.',
} as const;

/** The request a key guards: whose, which operation, which key, which body. */
export interface IdempotencyScope {
  credentialId: string;
  route: string;
  key: string;
  requestHash: string;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** Thrown inside a claiming transaction to abandon it: the answer already exists. */
class Replay {
  constructor(readonly response: StoredResponse) {}
}

/**
 * Hooks a service calls inside the transaction of its write, first and last; or, for a write that
 * is one statement outside any transaction, the claim and answer as a part of that statement.
 */
export interface WriteGuard<T> {
  begin(tx: Db): Promise<void>;
  end(tx: Db, result: T): Promise<void>;
  /**
   * The key's claim with its answer, as the body of a CTE of the write's own statement: one row is
   * inserted per row of `source` (the write goes ahead) and none without one. The answer is
   * `result` rendered, with each `placeholder` in it replaced by `column` (a value only the
   * statement knows, like the conversation it chose). It returns `id` when the key was claimed and
   * nothing when another request holds it. Waits for a concurrent claim at most IN_FLIGHT_WAIT (a
   * lock timeout then: the caller takes its transaction instead).
   */
  inlineClaim(result: T, placeholder: string, source: Prisma.Sql, column: Prisma.Sql): Prisma.Sql;
  /** After the statement of an inline claim that claimed the key: its result, the answer. */
  answered(result: T): void;
  /** After the statement of an inline claim that did not: the key's answer replayed (or the request refused). */
  replay(): Promise<never>;
}

/** `Idempotency-Key`: 1–255 printable ASCII characters (`field` names it in the 422). */
export function idempotencyKey(value: string | null | undefined, field: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (!/^[\x20-\x7e]{1,255}$/.test(value)) throw ValidationError.field(field, IDEMPOTENCY_MESSAGES.shape);
  return value;
}

/** Text written as is while hashing, as opposed to a value still to be serialised. */
class Raw {
  constructor(readonly text: string) {}
}

/**
 * SHA-256 of the body as JSON with object keys in order, so that equal bodies
 * hash equally however they were written. Iterative: a body may nest as deep as
 * the body limit allows, far beyond the call stack.
 */
export function requestHash(body: unknown): string {
  const hash = createHash('sha256');
  const work: unknown[] = [body];
  while (work.length) {
    const item = work.pop();
    if (item instanceof Raw) {
      hash.update(item.text);
    } else if (Array.isArray(item)) {
      work.push(new Raw(']'));
      for (let i = item.length - 1; i >= 0; i--) work.push(item[i] === undefined ? null : item[i], ...(i > 0 ? [new Raw(',')] : []));
      work.push(new Raw('['));
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      work.push(new Raw('}'));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, value] = entries[i]!;
        work.push(value, new Raw(`${JSON.stringify(key)}:`), ...(i > 0 ? [new Raw(',')] : []));
      }
      work.push(new Raw('{'));
    } else {
      hash.update(JSON.stringify(item) ?? 'null');
    }
  }
  return hash.digest('hex');
}

/**
 * The scope of a key: the credential, the operation and the channel it acts as —
 * a connection token sending as two channels has two sets of keys, so a key
 * reused on another channel runs there instead of replaying the first channel's answer.
 */
export function idempotencyScope(ctx: RequestContext, operation: string, key: string, body: unknown): IdempotencyScope {
  const channel = ctx.auth.channel?.id ?? 'any';
  return { credentialId: ctx.auth.credential.id, route: `${operation} ${channel}`, key, requestHash: requestHash(body) };
}

const fresh = () => new Date(Date.now() - IDEMPOTENCY_TTL_HOURS * 3600_000);

/** The stored answer for a key, if one is fresh; a different body is a 422 on `field`. */
async function stored(db: Db, scope: IdempotencyScope, field: string): Promise<StoredResponse | null> {
  const row = await db.idempotencyKey.findUnique({
    where: { credentialId_route_key: { credentialId: scope.credentialId, route: scope.route, key: scope.key } },
  });
  if (!row || row.createdAt < fresh() || row.responseStatus === null) return null;
  if (row.requestHash !== scope.requestHash) throw ValidationError.field(field, IDEMPOTENCY_MESSAGES.reused);
  return { status: row.responseStatus, body: row.responseBody };
}

/**
 * Claims the key in the write's transaction (INSERT … ON CONFLICT): its id, or
 * null when another request holds the key. A concurrent claim of the same key
 * blocks on the unique index until its transaction ends; still running after
 * IN_FLIGHT_WAIT, this request is refused with 409. An expired row is taken over.
 * One statement: the wait is limited for the insert only (set_config … true is
 * SET LOCAL), and the setting is reset once the insert is done.
 */
async function claim(tx: Db, scope: IdempotencyScope): Promise<string | null> {
  try {
    const [row] = await tx.$queryRaw<{ id: string | null }[]>`
      WITH claimed AS (
        INSERT INTO idempotency_keys (id, credential_id, route, key, request_hash)
        SELECT gen_random_uuid(), ${scope.credentialId}::uuid, ${scope.route}, ${scope.key}, ${scope.requestHash}
          FROM (SELECT set_config('lock_timeout', ${IN_FLIGHT_WAIT}, true)) AS waiting
        ON CONFLICT (credential_id, route, key) DO UPDATE
          SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = CURRENT_TIMESTAMP
          WHERE idempotency_keys.created_at < ${fresh()}
        RETURNING id)
      SELECT claimed.id, set_config('lock_timeout', NULL, true) AS lock_timeout
        FROM (SELECT 1) AS once LEFT JOIN claimed ON true`;
    return row?.id ?? null;
  } catch (error) {
    if (isLockTimeout(error)) throw new RequestInFlightError();
    throw error;
  }
}

/**
 * Runs a write under an idempotency key. `run` hands the guard to the service,
 * which calls it first and last inside its transaction, so the key commits
 * exactly when the write does; a key already answered is found by its claim and
 * replayed. A refusal `refuse` can render (a 4xx) is stored too, so a retry gets
 * the same answer; a failure it cannot (a 5xx) is not, so a retry runs again.
 */
export async function runIdempotent<T>(
  prisma: PrismaClient,
  scope: IdempotencyScope,
  options: {
    field: string;
    render: (result: T) => StoredResponse;
    refuse: (error: unknown) => StoredResponse | null;
    run: (guard: WriteGuard<T>) => Promise<T>;
  },
): Promise<{ response: StoredResponse; replayed: boolean }> {
  let id: string | undefined;
  let response: StoredResponse | undefined;
  /** Whether the write reached its transaction and claim, and whether another request held the key. */
  let claiming = false;
  let taken = false;
  const guard: WriteGuard<T> = {
    begin: async (tx) => {
      claiming = true;
      id = (await claim(tx, scope)) ?? undefined;
      if (id) return;
      taken = true;
      const answer = await stored(tx, scope, options.field);
      if (!answer) throw new RequestInFlightError();
      throw new Replay(answer);
    },
    end: async (tx, result) => {
      response = options.render(result);
      await tx.idempotencyKey.update({
        where: { id: id! },
        data: { responseStatus: response.status, responseBody: response.body as object },
        select: { id: true },
      });
    },
    inlineClaim: (result, placeholder, source, column) => {
      claiming = true;
      const answer = options.render(result);
      // No reset of lock_timeout: the statement is its own transaction.
      return Prisma.sql`
        INSERT INTO idempotency_keys (id, credential_id, route, key, request_hash, response_status, response_body)
        SELECT gen_random_uuid(), ${scope.credentialId}::uuid, ${scope.route}, ${scope.key}, ${scope.requestHash},
               ${answer.status}, replace(${JSON.stringify(answer.body)}, ${placeholder}, (${column})::text)::json
          FROM ${source}, (SELECT set_config('lock_timeout', ${IN_FLIGHT_WAIT}, true)) AS waiting
        ON CONFLICT (credential_id, route, key) DO UPDATE
          SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
              response_body = EXCLUDED.response_body, created_at = CURRENT_TIMESTAMP
          WHERE idempotency_keys.created_at < ${fresh()}
        RETURNING id`;
    },
    answered: (result) => {
      response = options.render(result);
    },
    replay: async () => {
      taken = true;
      const answer = await stored(prisma, scope, options.field);
      if (!answer) throw new RequestInFlightError();
      throw new Replay(answer);
    },
  };
  try {
    const result = await options.run(guard);
    return { response: response ?? options.render(result), replayed: false };
  } catch (error) {
    if (error instanceof Replay) return { response: error.response, replayed: true };
    if (error instanceof RequestInFlightError) {
      // The claim also waits on the row lock of a concurrent replay of an answered key (ON
      // CONFLICT … DO UPDATE locks the row even when it updates nothing): answered, it is a replay.
      const existing = await stored(prisma, scope, options.field);
      if (existing) return { response: existing, replayed: true };
      throw error;
    }
    const refusal = taken ? null : options.refuse(error);
    if (refusal && !claiming) {
      // Refused before its transaction (its input, say): an answer stored for the key still comes first.
      const existing = await stored(prisma, scope, options.field);
      if (existing) return { response: existing, replayed: true };
    }
    if (refusal) {
      // Keeping the refusal is a courtesy to retries; failing to keep it must not hide it.
      await prisma.$executeRaw`
        INSERT INTO idempotency_keys (id, credential_id, route, key, request_hash, response_status, response_body)
        VALUES (gen_random_uuid(), ${scope.credentialId}::uuid, ${scope.route}, ${scope.key}, ${scope.requestHash},
                ${refusal.status}, ${JSON.stringify(refusal.body)}::json)
        ON CONFLICT (credential_id, route, key) DO NOTHING`.catch(() => {});
    }
    throw error;
  }
}

/** Deletes answers older than the replay window. */
export async function purgeExpiredIdempotencyKeys(prisma: PrismaClient): Promise<number> {
  const { count } = await prisma.idempotencyKey.deleteMany({ where: { createdAt: { lt: fresh() } } });
  return count;
}

/**
 * Purges expired keys now and every hour. Expired keys are already ignored, so
 * this only keeps the table small; the timer never holds the process open.
 */
export function schedulePurge(prisma: PrismaClient, logger: Logger): void {
  const purge = () =>
    purgeExpiredIdempotencyKeys(prisma).then(
      (count) => count && logger.debug({ count }, 'purged expired idempotency keys'),
      (error: unknown) => logger.warn({ err: describeError(error) }, 'purging expired idempotency keys failed'),
    );
  void purge();
  setInterval(purge, 3600_000).unref();
}
