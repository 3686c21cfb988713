import type { RequestContext } from '../context/types.js';
import { expectedRestError } from '../errors/rest.js';
import { idempotencyKey, requestHash, runIdempotent, type StoredResponse, type WriteGuard } from '../modules/idempotency/idempotency.service.js';
import { json } from './http.js';

/**
 * Answers a REST write, under its `Idempotency-Key` when the request has one: the
 * same key and body replay the first answer with `Idempotent-Replayed: true`.
 * Refusals below 500 are stored with the key (409 and 503 are not: a retry may
 * succeed); a 500 never is.
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
  const scope = { credentialId: ctx.auth.credential.id, route: options.route, key, requestHash: requestHash(options.body) };
  const { response, replayed } = await runIdempotent(ctx.prisma, scope, {
    field: 'Idempotency-Key',
    render: options.render,
    refuse: (error) => {
      const refusal = expectedRestError(error);
      return refusal && refusal.status < 500 && refusal.status !== 409 ? { status: refusal.status, body: refusal.body } : null;
    },
    run: options.run,
  });
  return json(response.status, response.body, replayed ? { 'idempotent-replayed': 'true' } : {});
}
