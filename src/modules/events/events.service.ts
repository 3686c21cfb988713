import { Prisma } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import type { WEBHOOK_EVENTS } from '../webhooks/webhooks.schemas.js';

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A change worth telling webhook endpoints about; `data` is the REST view of the object after it. */
export interface DomainEvent {
  type: WebhookEvent;
  data: unknown;
}

/**
 * Queues `events` in the deliveries outbox for every endpoint of the workspace
 * subscribed to them (an endpoint without an event list receives all). Called
 * inside the transaction of the change, so a committed change always has its
 * events and a rolled-back one never has; one statement however many events and
 * endpoints there are. Each row's id is the `webhook-id` of that event for that
 * endpoint. Returns how many deliveries were queued.
 */
export async function recordEvents(db: Db, workspaceId: string, events: DomainEvent[], at = new Date()): Promise<number> {
  if (events.length === 0) return 0;
  const timestamp = at.toISOString();
  const rows = events.map(
    (event, position) => Prisma.sql`(${position}::int, ${event.type}::text, ${JSON.stringify({ type: event.type, timestamp, data: event.data })}::json)`,
  );
  return db.$executeRaw`
    INSERT INTO deliveries (id, workspace_id, endpoint_id, event_type, payload)
    SELECT gen_random_uuid(), endpoint.workspace_id, endpoint.id, event.type, event.payload
      FROM webhook_endpoints AS endpoint
      JOIN (VALUES ${Prisma.join(rows)}) AS event(position, type, payload)
        ON coalesce(cardinality(endpoint.events), 0) = 0 OR event.type = ANY(endpoint.events)
     WHERE endpoint.workspace_id = ${workspaceId}::uuid
     ORDER BY event.position, endpoint.id`;
}
