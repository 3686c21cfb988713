import type { Logger } from 'pino';
import type { AppDeps } from '../context/deps.js';
import { requestContext } from '../context/authenticate.js';
import { actingChannel } from '../context/request.js';
import { requireScope } from '../context/scopes.js';
import { restErrorResponse } from './errors.js';
import { ServiceUnavailableError, ValidationError } from '../errors/domain.js';
import { isRecord, parseInput } from '../lib/validation.js';
import { endConnection } from '../http/state.js';
import { readJson } from '../http/exchange.js';
import type { HttpRoute } from '../http/routes.js';
import { API_PREFIX, OPENAPI_PATH, type RouteDeclaration } from './route.js';
import type { WebhookDeclaration } from '../providers/provider.js';
import { openApiResponse } from './openapi.js';

/** Query parameters as an object of the first value of each. */
function queryObject(params: URLSearchParams): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of params) if (!(key in query)) query[key] = value;
  return query;
}

export const NO_BODY_MESSAGE = 'This request takes no body: send none, or {}.';

function expectNoBody(body: unknown): void {
  if (body === undefined || (isRecord(body) && Object.keys(body).length === 0)) return;
  throw ValidationError.field('body', NO_BODY_MESSAGE);
}

/**
 * The answer of `handled`, or ServiceUnavailableError as soon as the database is known to be out of
 * reach (docs/conventions.md: 503 within 2 s). An answer that comes after the 503 is let go of: a streamed
 * body (a provider's file) is not left open.
 */
async function whileDatabaseUp(deps: AppDeps, handled: Promise<Response>): Promise<Response> {
  const response = await deps.db.health.race(handled);
  if (response !== 'unavailable') return response;
  handled.then((late) => late.body?.cancel(), () => {}).catch(() => {});
  throw new ServiceUnavailableError();
}

/**
 * A REST route as an entry of the route table: its caller authenticated by the table, then the
 * acting channel, the parameters, the query and the body checked against its declaration before
 * its handler runs, and every failure answered by the one REST error mapping.
 */
function restRoute(deps: AppDeps, route: RouteDeclaration): HttpRoute {
  const refuse = (error: unknown, log: Logger) => restErrorResponse(error, log);
  return {
    method: route.method,
    path: `${API_PREFIX}${route.path}`,
    label: `${route.method} ${route.path}`,
    auth: 'credential',
    refuse,
    async handle({ request, url, params: matched, state }) {
      try {
        const auth = state.caller!;
        // The scope the route declares, before anything of the request is read (docs/browser-apps.md).
        requireScope(auth.credential, route.scope);
        if (route.actsAsChannel ?? true) actingChannel(auth);
        // Path parameters are strings the route matched; whether an id names anything
        // (a malformed one included) is the service's 404, never a 422.
        const params = route.params ? route.params.parse(matched) : {};
        // Validated after authentication: only a known caller learns what is wrong with its request.
        const query = route.query ? parseInput(route.query, queryObject(url.searchParams)) : {};
        const body = () => readJson(request, Math.max(route.bodyLimitBytes ?? 0, deps.env.BODY_LIMIT_BYTES));
        // A route that takes no body reads what was sent all the same: none or `{}` is ignored, anything else refused.
        if (!route.body && request.method !== 'GET' && request.method !== 'HEAD') expectNoBody(await body());
        const ctx = requestContext(deps, auth);
        const run = () => whileDatabaseUp(deps, route.handler({ request, url, params, query, ctx, body, endConnection: () => endConnection(state) }));
        // The handler's span beneath the HTTP server span, named by its route (docs/operations.md#tracing).
        const path = `${API_PREFIX}${route.path}`;
        return await (deps.tracing ? deps.tracing.span(`${route.method} ${path}`, { 'http.route': path }, run) : run());
      } catch (error) {
        return refuse(error, state.log);
      }
    },
  };
}

/** A provider webhook as an entry of the route table: no credential, its signature checked by its handler. */
function webhookRoute<Parts>(deps: AppDeps, route: WebhookDeclaration<Parts>, parts: Parts): HttpRoute {
  const refuse = (error: unknown, log: Logger) => restErrorResponse(error, log);
  const label = `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`;
  const run = (call: Parameters<HttpRoute['handle']>[0]) => whileDatabaseUp(deps, route.handler(call, parts));
  return {
    method: route.method,
    path: route.path,
    label,
    auth: 'signature',
    refuse,
    handle: (call) => {
      const answer = deps.tracing ? deps.tracing.span(label, { 'http.route': route.path }, () => run(call)) : run(call);
      return answer.catch((error: unknown) => refuse(error, call.state.log));
    },
  };
}

/**
 * The route-table entries of the REST API (with its OpenAPI document, which lists the provider
 * webhooks beside it) and of the provider webhooks.
 */
export function restRoutes<Parts>(
  deps: AppDeps,
  declarations: { rest: readonly RouteDeclaration[]; webhooks: readonly WebhookDeclaration<Parts>[]; webhookParts: Parts },
): HttpRoute[] {
  const openApi = openApiResponse(declarations);
  const document: HttpRoute = {
    method: 'GET',
    path: `${API_PREFIX}${OPENAPI_PATH}`,
    label: `GET ${API_PREFIX}${OPENAPI_PATH}`,
    auth: 'none',
    refuse: (error, log) => restErrorResponse(error, log),
    handle: async () => openApi(),
  };
  const webhooks = declarations.webhooks.map((route) => webhookRoute(deps, route, declarations.webhookParts));
  return [document, ...declarations.rest.map((route) => restRoute(deps, route)), ...webhooks];
}
