import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { rateLimitHeaders } from '../context/rate-limit.js';
import { methodNotAllowed, routeNotFound } from './exchange.js';
import type { RouteTable } from './routes.js';
import { requestIdOf } from './request-id.js';
import { beginRequest, type RequestState, type ServerContext } from './state.js';
import { FetchResponse } from '../lib/response.js';

export interface RoutingOptions {
  table: RouteTable;
  logger: Logger;
  /** Resolves a credential route's caller from the request headers, recording its rate-limit count on `state`. */
  authenticate(headers: Headers, state: RequestState): Promise<RequestState['caller']>;
  /** Counts and times a request by route, method and status (src/metrics). */
  observe(route: string, method: string, status: number, startedAt: number | undefined): void;
  /** Whether CORS is on: every answer then depends on the Origin header. */
  varyOnOrigin: boolean;
}

/** A HEAD answer: GET's status and headers without its body, which is let go of (a streamed file is not left half-read). */
async function headOf(response: Response): Promise<Response> {
  await response.body?.cancel();
  return new FetchResponse(null, { status: response.status, headers: response.headers });
}

/**
 * The server's one request path, on yoga's own hooks. `onRequest` gives each request its state
 * and its route from the one table; a credential route's caller is authenticated and counted
 * there, before anything of the request is read; a route answers, or (GraphQL) hands the request
 * on to yoga's pipeline. `onResponse` does for every answer, whoever gave it, what every answer
 * needs: its `X-Request-Id`, the rate-limit headers of what was counted, `Vary: Origin` while CORS
 * is on, the request metrics, and the access line (method, path without its query string, status,
 * duration), logged by the request's own logger like every line of the request.
 */
export function routingPlugin(options: RoutingOptions): Plugin<Record<string, unknown>, ServerContext> {
  const { table, logger, varyOnOrigin } = options;
  return {
    async onRequest({ request, url, endResponse, serverContext }) {
      const state = beginRequest(serverContext, url.pathname, request, logger);
      const match = table.find(request.method, url.pathname);
      if (!match) return endResponse(routeNotFound());
      if ('allow' in match) return endResponse(methodNotAllowed(match.allow));
      const { route, params } = match;
      state.route = route.label;
      try {
        if (route.auth === 'credential') state.caller = await options.authenticate(request.headers, state);
        const answer = await route.handle({ request, url, params, state });
        if (answer) endResponse(request.method === 'HEAD' ? await headOf(answer) : answer);
      } catch (error) {
        endResponse(route.refuse(error, state.log, request));
      }
    },
    onResponse({ request, response, serverContext }) {
      const state = serverContext.state;
      // Every answer names its request; one given before any route is looked up (a CORS preflight) gets its own id.
      const requestId = state?.requestId ?? requestIdOf(request.headers);
      response.headers.set('x-request-id', requestId);
      if (state?.rateLimit) {
        for (const [name, value] of Object.entries(rateLimitHeaders(state.rateLimit.state, state.rateLimit.exceeded))) response.headers.set(name, value);
      }
      if (varyOnOrigin) {
        const vary = response.headers.get('vary') ?? '';
        if (!/(^|,)\s*origin\s*(,|$)/i.test(vary)) response.headers.set('vary', vary ? `${vary}, Origin` : 'Origin');
      }
      // An answer yoga gives before any route is looked up (a CORS preflight) has no state: counted by its path.
      const path = state?.path ?? new URL(request.url).pathname;
      const route = state?.route ?? (path === '/graphql' ? 'graphql' : 'unmatched');
      options.observe(route, request.method, response.status, state?.startedAt);
      if (logger.isLevelEnabled('info')) {
        const ms = state ? Math.round(performance.now() - state.startedAt) : undefined;
        (state?.log ?? logger).info({ method: request.method, path, status: response.status, ms, ...(state ? {} : { requestId }) }, 'request');
      }
    },
  };
}
