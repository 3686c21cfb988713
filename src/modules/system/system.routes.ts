import type { AppDeps } from '../../context/types.js';
import { json } from '../../rest/http.js';

// Probes must answer within 2 s (CONTRACT §2); leave room for the response itself.
const READY_TIMEOUT_MS = 1500;

async function databaseReachable(deps: AppDeps): Promise<boolean> {
  if (deps.db.health.isDown) return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([deps.db.prisma.$queryRaw`SELECT 1`.then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Process and database probes for orchestrators; no authentication. */
export function systemRoute(deps: AppDeps, request: Request, url: URL): Promise<Response> | null {
  if (request.method !== 'GET' && request.method !== 'HEAD') return null;
  if (url.pathname === '/healthz') return Promise.resolve(json(200, { status: 'ok' }));
  if (url.pathname === '/readyz') {
    return databaseReachable(deps).then((ok) =>
      ok ? json(200, { status: 'ok', database: deps.db.kind }) : json(503, { status: 'error', message: 'Service unavailable' }),
    );
  }
  return null;
}
