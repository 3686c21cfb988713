import { toUserErrors } from '../../graphql/errors.js';
import { accepted, payloadOf } from '../../graphql/results.js';
import type { Payload } from '../../graphql/user-errors.js';
import type { GraphQLContext } from '../../graphql/builder.js';
import { idempotencyKey, idempotencyScope, runIdempotent, type WriteGuard } from './idempotency.service.js';

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
