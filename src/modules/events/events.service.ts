import { Prisma } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import type { WEBHOOK_EVENTS } from '../webhooks/webhooks.schemas.js';
import { activeTraceparent } from '../../lib/tracing.js';

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * A change worth telling webhook endpoints about, queued in the outbox (the event bus's
 * `DomainEvent`, src/realtime/bus.ts, is what subscribers hear); `data` is the REST view of the
 * object after it — as a value, or as SQL yielding JSON when the statement that
 * makes the change is the one that knows the object (see `queueEventsSql`).
 */
export interface QueuedEvent {
  type: WebhookEvent;
  data: unknown;
}

/**
 * The INSERT queueing `events` in the deliveries outbox for every endpoint of the
 * workspace subscribed to them (an endpoint without an event list receives all):
 * one statement however many events and endpoints there are, run alone
 * (`recordEvents`) or as a data-modifying CTE of the statement that makes the
 * change, so that the change and its events commit together or not at all.
 * `source` is a FROM item (a CTE of that statement) the events' SQL data may
 * refer to; without a row in it nothing is queued. Each row's id is the
 * `webhook-id` of that event for that endpoint.
 */
export function queueEventsSql(workspaceId: string, events: QueuedEvent[], at: Date, source?: Prisma.Sql): Prisma.Sql {
  const timestamp = at.toISOString();
  const rows = events.map((event, position) => {
    const payload =
      event.data instanceof Prisma.Sql
        ? Prisma.sql`json_build_object('type', ${event.type}::text, 'timestamp', ${timestamp}::text, 'data', ${event.data})`
        : Prisma.sql`${JSON.stringify({ type: event.type, timestamp, data: event.data })}::json`;
    return Prisma.sql`(${position}::int, ${event.type}::text, ${payload})`;
  });
  return Prisma.sql`
    INSERT INTO deliveries (id, workspace_id, endpoint_id, event_type, payload, trace_parent)
    SELECT gen_random_uuid(), endpoint.workspace_id, endpoint.id, event.type, event.payload, ${activeTraceparent()}::text
      FROM ${source ? Prisma.sql`${source} CROSS JOIN` : Prisma.empty} webhook_endpoints AS endpoint
     CROSS JOIN LATERAL (VALUES ${Prisma.join(rows)}) AS event(position, type, payload)
     WHERE endpoint.workspace_id = ${workspaceId}::uuid
       AND (coalesce(cardinality(endpoint.events), 0) = 0 OR event.type = ANY(endpoint.events))
     ORDER BY event.position, endpoint.id`;
}

/**
 * Queues `events` by themselves, inside the transaction of the change (so a
 * committed change always has its events and a rolled-back one never has).
 * Returns how many deliveries were queued.
 */
export async function recordEvents(db: Db, workspaceId: string, events: QueuedEvent[], at = new Date()): Promise<number> {
  if (events.length === 0) return 0;
  return db.$executeRaw(queueEventsSql(workspaceId, events, at));
}
