import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

/**
 * Metrics of the process rather than of one app: Node's own (CPU, memory, event
 * loop, GC) and the delivery worker's attempts. The worker is built beside the app,
 * not by it, so its counters live here and every app's /metrics includes them.
 * Not prom-client's global registry, which any dependency may write to.
 */
export const processRegistry = new Registry();

export type DeliveryKind = 'message' | 'event';
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';

export const deliveryAttempts = new Counter<'kind' | 'outcome'>({
  name: 'connect_delivery_attempts_total',
  help: 'Delivery attempts by kind (message, event) and outcome (delivered, retry, failed).',
  labelNames: ['kind', 'outcome'],
  registers: [processRegistry],
});

let defaultsCollected = false;

/** Starts Node's default metrics on first use, so that merely importing this module starts no observers. */
export function processMetrics(): Registry {
  if (!defaultsCollected) {
    defaultsCollected = true;
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
