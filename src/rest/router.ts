import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { RequestContext } from '../context/types.js';

export interface RestRequest {
  request: Request;
  url: URL;
  params: Record<string, string | undefined>;
  ctx: RequestContext;
  /** The parsed JSON body (undefined when empty), within the body size limit. */
  body(): Promise<unknown>;
}

export type RestHandler = (req: RestRequest) => Promise<Response>;

export interface RestRoute {
  handler: RestHandler;
  /** Whether the route acts as one channel (and so needs X-Channel-Uuid for multi-channel credentials). */
  actsAsChannel: boolean;
  /** Method and path pattern as declared (`PATCH /contacts/:contact`): the route's metrics label. */
  pattern: string;
}

const ROUTE_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;

/** Routes of the REST API, relative to /api/connect. */
export class RestRouter {
  // Ids of any length reach their route, so a malformed one is that resource's 404
  // after authentication, never a route miss; the server's header limit bounds the URL.
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, caseSensitive: true, maxParamLength: Number.MAX_SAFE_INTEGER });
  private readonly declared: { method: HTTPMethod; path: string }[] = [];

  on(method: HTTPMethod, path: string, handler: RestHandler, options: { actsAsChannel?: boolean } = {}): this {
    const route: RestRoute = { handler, actsAsChannel: options.actsAsChannel ?? true, pattern: `${method} ${path}` };
    this.router.on(method, path, () => {}, route);
    this.declared.push({ method, path });
    return this;
  }

  /** Every declared route as method and path pattern (`PATCH /contacts/:contact`), in declaration order. */
  routes(): { method: HTTPMethod; path: string }[] {
    return this.declared.map((route) => ({ ...route }));
  }

  /**
   * The route for a method and path (HEAD is GET's, answered without a body by the
   * caller); for a known path with another method, the methods it allows.
   */
  find(method: string, path: string): { route: RestRoute; params: Record<string, string | undefined> } | { allow: string[] } | null {
    const found = this.router.find((method === 'HEAD' ? 'GET' : method) as HTTPMethod, path);
    if (found) return { route: found.store as RestRoute, params: found.params };
    const allow = ROUTE_METHODS.filter((m) => this.router.find(m, path)).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
    return allow.length ? { allow } : null;
  }
}
