import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { RouteDeclaration } from './route.js';

const ROUTE_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;

export interface RestRoute {
  declaration: RouteDeclaration;
  /** Method and path pattern as declared (`PATCH /contacts/:contact`): the route's metrics label. */
  pattern: string;
}

/** Routes of the REST API, relative to /api/connect. */
export class RestRouter {
  // Ids of any length reach their route, so a malformed one is that resource's 404
  // after authentication, never a route miss; the server's header limit bounds the URL.
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, caseSensitive: true, maxParamLength: Number.MAX_SAFE_INTEGER });
  private readonly declared: RouteDeclaration[] = [];

  add(...declarations: RouteDeclaration[]): this {
    for (const declaration of declarations) {
      const route: RestRoute = { declaration, pattern: `${declaration.method} ${declaration.path}` };
      this.router.on(declaration.method, declaration.path, () => {}, route);
      this.declared.push(declaration);
    }
    return this;
  }

  /** Every declared route, in declaration order. */
  routes(): readonly RouteDeclaration[] {
    return this.declared;
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
