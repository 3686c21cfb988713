import type { ChannelProvider, PrismaClient } from '../../generated/prisma/client.js';
import type { Database } from '../../db/database.js';
import { uuid7 } from '../../lib/uuid.js';

/** The event and the delivery that will process it, in one statement: both or neither. */
const STORE_EVENT = `
    WITH event AS (
      INSERT INTO inbound_events (id, workspace_id, channel_id, provider, headers, body)
      VALUES ($1::uuid, $2::uuid, $3::uuid, $4::channel_provider, $5::jsonb, $6)
      RETURNING id, workspace_id)
    INSERT INTO deliveries (id, workspace_id, inbound_event_id) SELECT $7::uuid, workspace_id, id FROM event`;

function storeParams(channel: { id: string; workspaceId: string }, provider: ChannelProvider, headers: Record<string, string>, body: Buffer): unknown[] {
  return [uuid7(), channel.workspaceId, channel.id, provider, JSON.stringify(headers), body, uuid7()];
}

/**
 * Stores an inbound event as it arrived (a provider's webhook, an email) with the delivery that
 * will process it, in one statement: both or neither. Every way in (the webhook routes, the SMTP
 * listener) stores through here before it answers, so a crash after the answer loses nothing.
 * This one runs inside the caller's transaction (`prisma` may be one).
 */
export async function storeInboundEvent(
  prisma: Pick<PrismaClient, '$executeRawUnsafe'>,
  channel: { id: string; workspaceId: string },
  provider: ChannelProvider,
  headers: Record<string, string>,
  body: Buffer,
): Promise<void> {
  await prisma.$executeRawUnsafe(STORE_EVENT, ...storeParams(channel, provider, headers, body));
}

/** The same, as a statement of its own on the database's pool (the webhook routes, one per request). */
export async function storeInboundWebhook(
  db: Pick<Database, 'execute'>,
  channel: { id: string; workspaceId: string },
  provider: ChannelProvider,
  headers: Record<string, string>,
  body: Buffer,
): Promise<void> {
  await db.execute(STORE_EVENT, storeParams(channel, provider, headers, body));
}
