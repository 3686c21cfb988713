/**
 * The route label of a request, set by whoever recognised it (the REST router, the
 * probes, GraphQL execution) and read when the response leaves. Keyed by the
 * request object, so any number of apps can share it.
 */
const routes = new WeakMap<Request, string>();

export function labelRoute(request: Request, route: string): void {
  routes.set(request, route);
}

export function routeLabel(request: Request): string | undefined {
  return routes.get(request);
}
