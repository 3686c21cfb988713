import type { PrismaClient } from '../../generated/prisma/client.js';
import { isUuid } from '../../lib/uuid.js';
import type { EmailMeta, EmailStore } from '../../providers/smtp/email.js';

/** A stored `provider_meta` that is an email's (see src/providers/smtp/inbound.ts), or null. */
function emailMeta(value: unknown): EmailMeta | null {
  if (typeof value !== 'object' || value === null) return null;
  const { messageId, references, subject } = value as Record<string, unknown>;
  if (typeof messageId !== 'string' || !messageId) return null;
  return {
    messageId,
    references: Array.isArray(references) ? references.filter((id): id is string => typeof id === 'string') : [],
    subject: typeof subject === 'string' ? subject : null,
  };
}

/** What email needs of the database: the thread a reply goes under, and stored emails for their attachments. */
export function emailStore(prisma: PrismaClient): EmailStore {
  return {
    async thread(conversationId) {
      const [latest] = await prisma.$queryRaw<{ provider_meta: unknown }[]>`
        SELECT provider_meta FROM messages
         WHERE conversation_id = ${conversationId}::uuid AND direction = 'inbound' AND provider_meta ? 'messageId'
         ORDER BY created_at DESC, id DESC
         LIMIT 1`;
      return latest ? emailMeta(latest.provider_meta) : null;
    },
    async raw(channelId, eventId) {
      if (!isUuid(eventId)) return null;
      const event = await prisma.inboundEvent.findFirst({ where: { id: eventId, channelId, provider: 'smtp' }, select: { body: true } });
      return event ? Buffer.from(event.body.buffer, event.body.byteOffset, event.body.byteLength) : null;
    },
  };
}
