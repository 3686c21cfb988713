import type { RequestContext } from '../../context/types.js';
import { expectedRestError } from '../../rest/errors.js';
import { idempotencyKey, idempotencyScope, runIdempotent, type StoredResponse, type WriteGuard } from './idempotency.service.js';
import { json } from '../../http/exchange.js';

/**
 * Answers a REST write, under its `Idempotency-Key` when the request has one: the
 * same key and body replay the first answer with `Idempotent-Replayed: true`.
 * Refusals below 500 are stored with the key; a 5xx never is, so a retry runs again.
 */
export async function idempotentWrite<T>(
  ctx: RequestContext,
  request: Request,
  options: { route: string; body: unknown; render: (result: T) => StoredResponse; run: (guard?: WriteGuard<T>) => Promise<T> },
): Promise<Response> {
  const key = idempotencyKey(request.headers.get('idempotency-key'), 'Idempotency-Key');
  if (key === undefined) {
    const { status, body } = options.render(await options.run());
    return json(status, body);
  }
  const scope = idempotencyScope(ctx, options.route, key, options.body);
  const { response, replayed } = await runIdempotent(ctx.prisma, scope, {
    field: 'Idempotency-Key',
    render: options.render,
    refuse: (error) => {
      const refusal = expectedRestError(error);
      return refusal && refusal.status < 500 ? { status: refusal.status, body: refusal.body } : null;
    },
    run: options.run,
  });
  return json(response.status, response.body, replayed ? { 'idempotent-replayed': 'true' } : {});
}
