import { NotFoundError } from '../errors/domain.js';
import { toUserErrors } from '../errors/graphql.js';
import type { Payload } from './user-errors.js';
import type { GraphQLContext } from './builder.js';
import { idempotencyKey, idempotencyScope, runIdempotent, type WriteGuard } from '../modules/idempotency/idempotency.service.js';

/** Reads answer null, never an error, for what the caller cannot see (other workspaces included). */
export async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/** A mutation's payload; expected failures become userErrors, anything else is thrown (and masked). */
async function payloadOf(run: () => Promise<Payload>, rename?: (field: string) => string): Promise<Payload> {
  try {
    return await run();
  } catch (error) {
    const userErrors = toUserErrors(error, rename);
    if (!userErrors) throw error;
    return { id: null, userErrors };
  }
}

/** A mutation's object as its payload: the id, and the row itself for the payload to resolve from. */
const accepted = (row: { id: string }): Payload => ({ id: row.id, userErrors: [], row });

/** Runs a mutation and answers its object, or the userErrors of an expected failure. */
export function asPayload(run: () => Promise<{ id: string }>, rename?: (field: string) => string): Promise<Payload> {
  return payloadOf(async () => accepted(await run()), rename);
}

/**
 * Runs a mutation as `asPayload` does, under its `idempotencyKey` when one is
 * given: the same key and input replay the first payload (the same object, or
 * the same userErrors); another input is a userError on `idempotencyKey`; a key
 * still in flight is a CONFLICT error. The semantics are REST's Idempotency-Key.
 */
export async function asIdempotentPayload<T extends { id: string }>(
  ctx: GraphQLContext,
  options: {
    operation: string;
    input: { idempotencyKey?: string | null | undefined } & Record<string, unknown>;
    run: (guard?: WriteGuard<T>) => Promise<T>;
    rename?: (field: string) => string;
  },
): Promise<Payload> {
  const { idempotencyKey: rawKey, ...input } = options.input;
  return payloadOf(async () => {
    const key = idempotencyKey(rawKey, 'idempotencyKey');
    if (key === undefined) return accepted(await options.run());
    let written: T | undefined;
    const { response, replayed } = await runIdempotent<T>(ctx.prisma, idempotencyScope(ctx, `graphql ${options.operation}`, key, input), {
      field: 'idempotencyKey',
      render: (result) => ({ status: 200, body: { id: result.id, userErrors: [] } }),
      refuse: (error) => {
        const userErrors = toUserErrors(error, options.rename);
        return userErrors ? { status: 200, body: { id: null, userErrors } } : null;
      },
      run: async (guard) => (written = await options.run(guard)),
    });
    // A replay has only the stored payload: its object is read again.
    return !replayed && written ? accepted(written) : (response.body as Payload);
  }, options.rename);
}

export const IDEMPOTENCY_KEY_DESCRIPTION =
  'Retries with the same key and input replay the first result for 24 hours (1–255 printable ASCII characters). A key is scoped to the credential and the channel it acts as: the same key for another channel is a new request.';
