import { getOperationAST, type DocumentNode } from 'graphql';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AppDeps } from '../context/deps.js';
import { describeError } from '../errors/log.js';
import { processMetrics } from './process.js';
import { FetchResponse } from '../lib/response.js';

/** Distinct GraphQL operation names given their own label; later new names count as `other`. */
export const MAX_OPERATION_NAMES = 100;
/** A plain GraphQL name of reasonable length; anything else a client sends counts as `other`. */
const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Methods reported as themselves; any other (a client may send any token) is `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'WS']);

export interface AppMetrics {
  registry: Registry;
  /**
   * The route label of a GraphQL operation: `graphql <name>`, `graphql anonymous` or `graphql
   * other`, a bounded set whatever clients send. Named only once the document is valid and its
   * caller authenticated, so that refused documents cannot use up the operation names.
   */
  operationRoute(document: DocumentNode, operationName: string | null | undefined): string;
  /**
   * Counts a request by route, method and status, and times it from `startedAt`
   * (performance.now()) when known.
   */
  observe(route: string, method: string, status: number, startedAt: number | undefined): void;
  /**
   * Counts a subscription event handed to `subscribers` subscribers: `executed` when its selection
   * was executed for them, otherwise they received a result executed for another subscriber of
   * their cohort (src/realtime/cohorts.ts).
   */
  subscriptionEvent(executed: boolean, subscribers: number): void;
  /** The Prometheus text of this app's and the process's metrics. */
  scrape(): Promise<Response>;
}

/** One registry per app, so that several apps in one process keep their own counts. */
export function createAppMetrics(deps: AppDeps): AppMetrics {
  const registry = new Registry();
  const labelNames = ['route', 'method', 'status'] as const;
  const requests = new Counter({
    name: 'connect_http_requests_total',
    help: 'Requests by route pattern (or GraphQL operation), method and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'connect_http_request_duration_seconds',
    help: 'Time from receiving a request to its response headers, by route pattern (or GraphQL operation), method and status.',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const subscriptionResults = new Counter({
    name: 'connect_subscription_results_total',
    help: 'Subscription events handed to subscribers: one per event and subscriber.',
    registers: [registry],
  });
  const subscriptionExecutions = new Counter({
    name: 'connect_subscription_executions_total',
    help: "Executions of a subscription's selection for an event: one per event and cohort.",
    registers: [registry],
  });

  new Gauge({
    name: 'connect_delivery_queue_depth',
    help: 'Deliveries due now and not claimed by a worker, by kind (message, event).',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      // Read at scrape time: one count on the partial index of pending deliveries.
      this.reset();
      const { db, logger } = deps;
      try {
        const rows = await db.health.race(db.prisma.$queryRaw<{ messages: number; events: number }[]>`
          SELECT count(*) FILTER (WHERE message_id IS NOT NULL)::int AS messages,
                 count(*) FILTER (WHERE message_id IS NULL)::int AS events
            FROM deliveries
           WHERE status = 'pending' AND run_at <= now() AND (locked_until IS NULL OR locked_until < now())`);
        // Unknown while the database is down: no sample rather than a false zero.
        if (rows === 'unavailable') return;
        this.set({ kind: 'message' }, rows[0]?.messages ?? 0);
        this.set({ kind: 'event' }, rows[0]?.events ?? 0);
      } catch (error) {
        logger.warn({ err: describeError(error) }, 'metrics: could not count queued deliveries');
      }
    },
  });

  new Gauge({
    name: 'connect_subscription_sources',
    help:
      'Subscription sources open, each with its credential watched: one per subscriber, or one for all the ' +
      'subscribers of a selection and credential written to directly (src/realtime/delivery.ts).',
    registers: [registry],
    collect() {
      this.set(deps.credentialWatch?.size ?? 0);
    },
  });

  new Gauge({
    name: 'connect_db_pool_connections',
    help: 'Database connections by state (in_use, idle).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { total, idle } = deps.db.poolStats();
      this.set({ state: 'in_use' }, total - idle);
      this.set({ state: 'idle' }, idle);
    },
  });
  new Gauge({
    name: 'connect_db_pool_waiting',
    help: 'Queries waiting for a free database connection.',
    registers: [registry],
    collect() {
      this.set(deps.db.poolStats().waiting);
    },
  });

  return {
    registry,
    ...requestMetrics(requests, duration),
    subscriptionEvent(executed, subscribers) {
      subscriptionResults.inc(subscribers);
      if (executed) subscriptionExecutions.inc();
    },
    async scrape() {
      const process = processMetrics();
      const text = (await registry.metrics()) + (await process.metrics());
      return new FetchResponse(text, { status: 200, headers: { 'content-type': registry.contentType } });
    },
  };
}

function requestMetrics(
  requests: Counter<'route' | 'method' | 'status'>,
  duration: Histogram<'route' | 'method' | 'status'>,
): Pick<AppMetrics, 'operationRoute' | 'observe'> {
  const operationRoutes = new Map<string, string>();
  const statuses = new Map<number, string>();

  const statusLabel = (status: number): string => {
    let label = statuses.get(status);
    if (label === undefined) statuses.set(status, (label = String(status)));
    return label;
  };

  return {
    operationRoute(document, operationName) {
      const name = getOperationAST(document, operationName ?? undefined)?.name?.value;
      if (!name) return 'graphql anonymous';
      const known = operationRoutes.get(name);
      if (known) return known;
      if (!OPERATION_NAME.test(name) || operationRoutes.size >= MAX_OPERATION_NAMES) return 'graphql other';
      const route = `graphql ${name}`;
      operationRoutes.set(name, route);
      return route;
    },
    observe(route, method, status, startedAt) {
      const labels = [route, METHODS.has(method) ? method : 'other', statusLabel(status)] as const;
      requests.labels(...labels).inc();
      if (startedAt !== undefined) duration.labels(...labels).observe((performance.now() - startedAt) / 1000);
    },
  };
}
