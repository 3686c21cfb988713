import type { AppDeps } from '../../context/types.js';
import { json } from '../../rest/http.js';

/** Process and database probes for orchestrators; no authentication. */
export function systemRoute(deps: AppDeps, request: Request, url: URL): Promise<Response> | null {
  if (request.method !== 'GET' && request.method !== 'HEAD') return null;
  if (url.pathname === '/healthz') return Promise.resolve(json(200, { status: 'ok' }));
  if (url.pathname === '/readyz') {
    // A database known to be down answers at once; otherwise one probe, bounded by its timeout.
    const { health } = deps.db;
    return (health.isDown ? Promise.resolve(false) : health.check()).then((ok) =>
      ok ? json(200, { status: 'ok', database: deps.db.kind }) : json(503, { status: 'error', message: 'Service unavailable' }),
    );
  }
  return null;
}
