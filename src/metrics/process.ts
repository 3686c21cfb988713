import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

/**
 * Metrics of the process rather than of one app: Node's own (CPU, memory, event
 * loop, GC) and the delivery worker's attempts. The worker is built beside the app,
 * not by it, so its counters live here and every app's /metrics includes them.
 * Not prom-client's global registry, which any dependency may write to.
 */
export const processRegistry = new Registry();

export type DeliveryKind = 'message' | 'event' | 'inbound';
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';

export const deliveryAttempts = new Counter<'kind' | 'outcome'>({
  name: 'connect_delivery_attempts_total',
  help: 'Delivery attempts by kind (message, event, inbound: processing a stored inbound event) and outcome (delivered, retry, failed).',
  labelNames: ['kind', 'outcome'],
  registers: [processRegistry],
});

/** Provider webhooks as they arrive, by provider and outcome (accepted, or why refused). */
export const inboundReceived = new Counter<'provider' | 'outcome'>({
  name: 'connect_inbound_events_total',
  help:
    'Provider webhooks received, by provider and outcome: accepted (stored), verified (handshake), ' +
    'not_found, bad_signature, too_large, malformed, forbidden.',
  labelNames: ['provider', 'outcome'],
  registers: [processRegistry],
});

/** What processing the stored inbound events made of their messages and statuses. */
export const inboundProcessed = new Counter<'provider' | 'outcome'>({
  name: 'connect_inbound_items_total',
  help:
    'Inbound messages and statuses processed, by provider and outcome: message, duplicate, ' +
    'status_applied, status_stale, status_unknown, status_other_channel, unrouted, unsupported (not ' +
    'taken: a Twilio message from a sender that is not a phone number).',
  labelNames: ['provider', 'outcome'],
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
