import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { Logger } from 'pino';
import type { RequestState } from './state.js';

export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/**
 * How a route knows its caller: a credential of the workspace (`Authorization: Bearer …`,
 * authenticated before the route runs), a provider's signature over the request (checked by the
 * route, which alone knows the channel's secret), or none (probes, documentation).
 */
export type RouteAuth = 'credential' | 'signature' | 'none';

export interface RouteCall {
  request: Request;
  url: URL;
  /** Path parameters as the route's pattern matched them. */
  params: Record<string, string | undefined>;
  state: RequestState;
}

/** One entry of the table: everything the server answers is one of these. */
export interface HttpRoute {
  method: RouteMethod;
  /** The absolute path, with `:name` parameters. */
  path: string;
  /** The label of its requests in metrics (`GET /contacts/:contact`). */
  label: string;
  auth: RouteAuth;
  /**
   * The answer to a request refused before the route runs (authentication, rate limit, outage), in the route's own shape;
   * an unexpected failure is logged on `log`, the request's logger.
   */
  refuse: (error: unknown, log: Logger, request: Request) => Response;
  /** Answers the request; undefined hands it on to yoga's GraphQL handling. */
  handle(call: RouteCall): Promise<Response | undefined>;
}

export type RouteMatch = { route: HttpRoute; params: Record<string, string | undefined> } | { allow: string[] } | null;

/**
 * The one table of everything the server answers — REST, provider webhooks, GraphQL, probes,
 * documentation — and the one rule for what it does not: an unknown path is a 404, a known path
 * with another method a 405 naming the methods it has. HEAD is GET's (answered without a body).
 */
export class RouteTable {
  // Ids of any length reach their route, so a malformed one is that resource's 404 after
  // authentication, never a route miss; the server's request-line limit bounds the URL.
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, caseSensitive: true, maxParamLength: Number.MAX_SAFE_INTEGER });
  private readonly declared: HttpRoute[] = [];

  add(...routes: HttpRoute[]): this {
    for (const route of routes) {
      this.router.on(route.method, route.path, () => {}, route);
      this.declared.push(route);
    }
    return this;
  }

  /** Every route, in the order added. */
  routes(): readonly HttpRoute[] {
    return this.declared;
  }

  find(method: string, path: string): RouteMatch {
    const found = this.router.find((method === 'HEAD' ? 'GET' : method) as HTTPMethod, path);
    if (found) return { route: found.store as HttpRoute, params: found.params };
    const allow = ROUTE_METHODS.filter((m) => this.router.find(m, path)).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
    return allow.length ? { allow } : null;
  }
}
