import type { AppDeps } from '../context/types.js';
import { authenticateRequest, requestContext } from '../context/authenticate.js';
import { actingChannel } from '../context/request.js';
import { restErrorResponse } from '../errors/rest.js';
import { labelRoute } from '../metrics/labels.js';
import { HttpError, json, readJson } from './http.js';
import { ServiceUnavailableError } from '../errors/domain.js';
import { RestRouter } from './router.js';
import { registerChannelRoutes } from '../modules/channels/channels.routes.js';
import { registerContactRoutes } from '../modules/contacts/contacts.routes.js';
import { registerConversationRoutes } from '../modules/conversations/conversations.routes.js';
import { registerMessageRoutes } from '../modules/messages/messages.routes.js';
import { registerTemplateRoutes } from '../modules/templates/templates.routes.js';

export const API_PREFIX = '/api/connect';

export function createRestRouter(): RestRouter {
  const router = new RestRouter();
  registerChannelRoutes(router);
  registerContactRoutes(router);
  registerTemplateRoutes(router);
  registerMessageRoutes(router);
  registerConversationRoutes(router);
  return router;
}

/** Serves one request under /api/connect: route, authenticate, run, map errors. HEAD is GET without its body. */
export function createRestHandler(deps: AppDeps) {
  const router = createRestRouter();
  const serve = async (request: Request, url: URL): Promise<Response> => {
    try {
      const path = url.pathname.slice(API_PREFIX.length) || '/';
      const found = router.find(request.method, path);
      if (!found) return json(404, { status: 'error', message: 'Route not found.' });
      if ('allow' in found) throw new HttpError(405, 'Method not allowed.', { allow: found.allow.join(', ') });
      labelRoute(request, found.route.pattern);
      const auth = await authenticateRequest(deps, request);
      if (found.route.actsAsChannel) actingChannel(auth);
      const response = await deps.db.health.race(
        found.route.handler({
          request,
          url,
          params: found.params,
          ctx: requestContext(deps, auth),
          body: () => readJson(request, deps.env.BODY_LIMIT_BYTES),
        }),
      );
      if (response === 'unavailable') throw new ServiceUnavailableError();
      return response;
    } catch (error) {
      return restErrorResponse(error, deps.logger);
    }
  };
  return async (request: Request, url: URL): Promise<Response> => {
    const response = await serve(request, url);
    return request.method === 'HEAD' ? new Response(null, { status: response.status, headers: response.headers }) : response;
  };
}
