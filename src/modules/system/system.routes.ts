import type { AppDeps } from '../../context/deps.js';
import { json } from '../../rest/http.js';
import { labelRoute } from '../../metrics/labels.js';
import type { AppMetrics } from '../../metrics/metrics.js';

/**
 * Process and database probes for orchestrators, and Prometheus metrics; no
 * authentication, so /metrics belongs on a network only the scraper reaches.
 */
export function systemRoute(deps: AppDeps, request: Request, url: URL, metrics?: AppMetrics): Promise<Response> | null {
  if (request.method !== 'GET' && request.method !== 'HEAD') return null;
  if (url.pathname === '/healthz') {
    labelRoute(request, 'GET /healthz');
    return Promise.resolve(json(200, { status: 'ok' }));
  }
  if (url.pathname === '/metrics' && metrics) {
    labelRoute(request, 'GET /metrics');
    return metrics.scrape();
  }
  if (url.pathname === '/readyz') {
    labelRoute(request, 'GET /readyz');
    // A database known to be down answers at once; otherwise one probe, bounded by its timeout.
    const { health } = deps.db;
    return (health.isDown ? Promise.resolve(false) : health.check()).then((ok) =>
      ok ? json(200, { status: 'ok', database: deps.db.kind }) : json(503, { status: 'error', message: 'Service unavailable' }),
    );
  }
  return null;
}
