import type { Logger } from 'pino';
import { describeError } from '../../errors/log.js';
import { INTERNAL_ERROR_BODY } from '../../errors/rest.js';
import type { AppMetrics } from '../../metrics/metrics.js';
import { directResponder, nodeHeaders, readNodeBody, type DirectRoute } from '../../rest/node.js';
import { WEBHOOKS_PREFIX, type InboundRoutes } from './inbound.routes.js';
import { json, type WebhookCall } from './webhook-call.js';

/**
 * Provider webhooks served straight from node:http, past the fetch adapter and yoga's plugins:
 * no Request or Response objects, the answer written with one `end`. What those plugins do for a
 * webhook is done here the same way — the request metrics by route, method and status, the access
 * log line (method, path, status, ms), `Vary: Origin` while CORS is on — and the routes are the
 * same code as the app's (inbound.routes.ts). Only POST and GET without an Origin header come here:
 * anything a browser could send (CORS answers) or another method goes through the app as before.
 */
export function directWebhooks(routes: InboundRoutes, options: { logger: Logger; metrics: AppMetrics; varyOnOrigin: boolean }): DirectRoute {
  const { logger, metrics, varyOnOrigin } = options;
  const send = directResponder({ logger, observe: metrics.observe, varyOnOrigin });
  return (request, response) => {
    const target = request.url ?? '';
    const method = request.method ?? '';
    if (!target.startsWith(WEBHOOKS_PREFIX) || (method !== 'POST' && method !== 'GET') || request.headers.origin !== undefined) return false;
    // The URL as the fetch adapter parses it: a path that normalises out of /webhooks/ is the app's.
    const url = new URL(target, 'http://localhost');
    if (!url.pathname.startsWith(WEBHOOKS_PREFIX)) return false;
    const exchange = { method, path: url.pathname, route: undefined as string | undefined, startedAt: performance.now() };
    const headers = nodeHeaders(request);
    const call: WebhookCall = {
      method,
      url,
      header: (name) => headers.get(name),
      body: (limit) => readNodeBody(request, limit),
      label: (name) => {
        exchange.route = name;
      },
    };
    routes.serve(call).then(
      (answer) => send(response, exchange, answer),
      (error: unknown) => {
        logger.error({ err: describeError(error) }, 'inbound webhook failed');
        send(response, exchange, json(500, INTERNAL_ERROR_BODY));
      },
    );
    return true;
  };
}
