import type { AppDeps } from '../context/deps.js';
import { authenticateRequest, requestContext } from '../context/authenticate.js';
import { actingChannel } from '../context/request.js';
import { requireScope } from '../context/scopes.js';
import { restErrorResponse } from '../errors/rest.js';
import { labelRoute } from '../metrics/labels.js';
import { HttpError, json, readJson } from './http.js';
import { ServiceUnavailableError, ValidationError } from '../errors/domain.js';
import { isRecord, parseInput } from '../lib/validation.js';
import { RestRouter } from './router.js';
import { API_PREFIX, OPENAPI_PATH } from './route.js';
import { openApiResponse } from './openapi.js';
import { channelRoutes } from '../modules/channels/channels.routes.js';
import { contactRoutes } from '../modules/contacts/contacts.routes.js';
import { conversationRoutes } from '../modules/conversations/conversations.routes.js';
import { messageRoutes } from '../modules/messages/messages.routes.js';
import { templateRoutes } from '../modules/templates/templates.routes.js';
import { sessionRoutes } from '../modules/sessions/sessions.routes.js';
import { ServerResponse } from '../lib/response.js';

export function createRestRouter(): RestRouter {
  return new RestRouter().add(...channelRoutes, ...contactRoutes, ...templateRoutes, ...messageRoutes, ...conversationRoutes, ...sessionRoutes);
}

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

/** Serves one request under /api/connect: route, authenticate, run, map errors. HEAD is GET without its body. */
export function createRestHandler(deps: AppDeps) {
  const router = createRestRouter();
  const openApi = openApiResponse(router);
  const serve = async (request: Request, url: URL): Promise<Response> => {
    try {
      const path = url.pathname.slice(API_PREFIX.length) || '/';
      if (path === OPENAPI_PATH || path === `${OPENAPI_PATH}/`) {
        if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'Method not allowed.', { allow: 'GET, HEAD' });
        labelRoute(request, `GET ${API_PREFIX}${OPENAPI_PATH}`);
        return openApi();
      }
      const found = router.find(request.method, path);
      if (!found) return json(404, { status: 'error', message: 'Route not found.' });
      if ('allow' in found) throw new HttpError(405, 'Method not allowed.', { allow: found.allow.join(', ') });
      labelRoute(request, found.route.pattern);
      const auth = await authenticateRequest(deps, request);
      const route = found.route.declaration;
      // The scope the route declares, before anything of the request is read (CONTRACT §7).
      requireScope(auth.credential, route.scope);
      if (route.actsAsChannel ?? true) actingChannel(auth);
      // Path parameters are strings the route matched; whether an id names anything
      // (a malformed one included) is the service's 404, never a 422.
      const params = route.params ? route.params.parse(found.params) : {};
      // Validated after authentication: only a known caller learns what is wrong with its request.
      const query = route.query ? parseInput(route.query, queryObject(url.searchParams)) : {};
      const body = () => readJson(request, deps.env.BODY_LIMIT_BYTES);
      // A route that takes no body reads what was sent all the same: none or `{}` is ignored, anything else refused.
      if (!route.body && request.method !== 'GET' && request.method !== 'HEAD') expectNoBody(await body());
      const handled = route.handler({ request, url, params, query, ctx: requestContext(deps, auth), body });
      const response = await deps.db.health.race(handled);
      if (response === 'unavailable') {
        // An answer that comes after the 503 is let go of: a streamed body (a provider's file) is not left open.
        handled.then((late) => late.body?.cancel(), () => {}).catch(() => {});
        throw new ServiceUnavailableError();
      }
      return response;
    } catch (error) {
      return restErrorResponse(error, deps.logger);
    }
  };
  return async (request: Request, url: URL): Promise<Response> => {
    const response = await serve(request, url);
    if (request.method !== 'HEAD') return response;
    // A streamed body (a provider's file) is let go of, not left half-read.
    await response.body?.cancel();
    return new ServerResponse(null, { status: response.status, headers: response.headers });
  };
}
