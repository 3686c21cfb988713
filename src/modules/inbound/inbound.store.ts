import type { ChannelProvider, PrismaClient } from '../../generated/prisma/client.js';
import { uuid7 } from '../../lib/uuid.js';

/**
 * Stores an inbound event as it arrived (a provider's webhook, an email) with the delivery that
 * will process it, in one statement: both or neither. Every way in (the webhook routes, the SMTP
 * listener) stores through here before it answers, so a crash after the answer loses nothing.
 */
export async function storeInboundEvent(
  prisma: Pick<PrismaClient, '$executeRaw'>,
  channel: { id: string; workspaceId: string },
  provider: ChannelProvider,
  headers: Record<string, string>,
  body: Buffer,
): Promise<void> {
  const id = uuid7();
  await prisma.$executeRaw`
    WITH event AS (
      INSERT INTO inbound_events (id, workspace_id, channel_id, provider, headers, body)
      VALUES (${id}::uuid, ${channel.workspaceId}::uuid, ${channel.id}::uuid, ${provider}::channel_provider, ${JSON.stringify(headers)}::jsonb, ${body})
      RETURNING id, workspace_id)
    INSERT INTO deliveries (id, workspace_id, inbound_event_id) SELECT ${uuid7()}::uuid, workspace_id, id FROM event`;
}
