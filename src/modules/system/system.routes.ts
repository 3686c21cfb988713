import type { Logger } from 'pino';
import type { AppDeps } from '../../context/deps.js';
import { restErrorResponse } from '../../rest/errors.js';
import { json } from '../../http/exchange.js';
import type { HttpRoute } from '../../http/routes.js';
import type { AppMetrics } from '../../metrics/metrics.js';

/**
 * Process and database probes for orchestrators, and Prometheus metrics; no
 * authentication, so /metrics belongs on a network only the scraper reaches.
 */
export function systemRoutes(deps: AppDeps, metrics: AppMetrics): HttpRoute[] {
  const probe = (path: string, handle: HttpRoute['handle']): HttpRoute => ({
    method: 'GET',
    path,
    label: `GET ${path}`,
    auth: 'none',
    refuse: (error, log) => restErrorResponse(error, log),
    handle,
  });
  return [
    probe('/healthz', async () => json(200, { status: 'ok' })),
    probe('/metrics', () => metrics.scrape()),
    probe('/readyz', async () => {
      // A database known to be down answers at once; otherwise one probe, bounded by its timeout.
      const { health } = deps.db;
      const ok = health.isDown ? false : await health.check();
      return ok ? json(200, { status: 'ok', database: deps.db.kind }) : json(503, { status: 'error', message: 'Service unavailable' });
    }),
  ];
}
