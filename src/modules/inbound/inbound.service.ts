import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { EventBus } from '../../context/services.js';
import { isUniqueViolation } from '../../db/errors.js';
import { deriveE164 } from '../../lib/phone.js';
import { uuid7 } from '../../lib/uuid.js';
import { characterCount } from '../../lib/validation.js';
import type { InboundMessage, InboundStatus } from '../../providers/provider.js';
import { conversationForSend, type Actor } from '../conversations/conversations.service.js';
import { recordEvents, type QueuedEvent } from '../events/events.service.js';
import { resolveRecipient } from '../messages/recipients.js';
import { messageOptOutSql, optInSql, optOutSql } from '../contacts/opt-outs.js';
import { MESSAGE_RELATIONS, messageTable, type MessageRow } from '../messages/messages.sql.js';

/**
 * What replies and delivery statuses do to the domain, whatever provider brought them
 * (docs/channels.md): a message from a contact lands on a conversation of its channel; a status moves
 * an outbound message forward. Provider-neutral: the events come parsed.
 */

export interface InboundContext {
  prisma: PrismaClient;
  logger: Logger;
  /** Where GraphQL subscriptions hear of a new message. */
  events?: EventBus | undefined;
}

/** The channel an event is applied to. */
export interface InboundChannel {
  id: string;
  workspaceId: string;
  name: string;
}

/** The most an inbound message's body keeps, in characters (as an encrypted message may hold). */
export const INBOUND_BODY_MAX = 65_536;
/** The most a provider's message id is stored as; a longer one is stored as its SHA-256 (hex). */
const PROVIDER_ID_MAX = 255;
/** A contact's name column. */
const NAME_MAX = 255;

/** U+0000 and unpaired UTF-16 surrogates, which text columns cannot store: each becomes U+FFFD. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text a provider sent, storable as it is: U+0000 and lone surrogates replaced with U+FFFD. */
export function storableText(value: string): string {
  return value.replace(UNSTORABLE, '\ufffd');
}

/** At most `max` characters (code points) of `value`: a surrogate pair is never split. */
function truncated(value: string, max: number): string {
  // A string of at most `max` UTF-16 units has at most `max` characters.
  if (value.length <= max) return value;
  const characters = Array.from(value);
  return characters.length <= max ? value : characters.slice(0, max).join('');
}

/**
 * A provider's message id as stored (and looked up): as sent when it fits the column, otherwise
 * its SHA-256 in hex, so that however long an id a provider sends, a repeat of it is still the same.
 */
export function storedProviderId(providerId: string): string {
  return providerId.length <= PROVIDER_ID_MAX ? providerId : createHash('sha256').update(providerId).digest('hex');
}

/** Attempts for a message that lost a race creating the same contact or conversation. */
const ATTEMPTS = 3;

/**
 * Stores a message a contact sent, once: the provider's id is claimed in the transaction that
 * stores the message, so a repeated webhook, a retried event or a concurrent copy finds it taken
 * (a unique key, not a read-then-write) and stores nothing. The contact is matched by phone, then
 * email, or created and linked to the channel; the conversation is the contact's open one, else
 * its latest closed one, reopened by the contact, else a new one. A message that answers one of
 * the channel's messages (an email's In-Reply-To/References, as `thread`) prefers that message's
 * conversation over the latest closed one.
 */
export async function receiveMessage(ctx: InboundContext, channel: InboundChannel, received: InboundMessage): Promise<'stored' | 'duplicate'> {
  const message = storableMessage(received);
  const phone = message.from.phone ? (deriveE164(message.from.phone) ?? message.from.phone) : undefined;
  const email = message.from.email?.trim() || undefined;
  // A contact's name is 2–255 characters: a longer profile name is cut there; a shorter one leaves the phone or email as the name.
  const given = message.from.name ? truncated(message.from.name.trim(), NAME_MAX).trim() : undefined;
  const name = given && characterCount(given) >= 2 ? given : undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const stored = await ctx.prisma.$transaction(async (tx) => {
        const id = uuid7();
        const claimed = await tx.$queryRaw<{ message_id: string }[]>`
          INSERT INTO provider_message_ids (channel_id, provider_id, message_id, part)
          VALUES (${channel.id}::uuid, ${message.providerId}, ${id}::uuid, 0)
          ON CONFLICT DO NOTHING
          RETURNING message_id`;
        if (claimed.length === 0) return null;
        const events: QueuedEvent[] = [];
        const contact = await resolveRecipient(tx, {
          workspaceId: channel.workspaceId,
          field: 'from',
          recipient: { ...(phone ? { phone } : {}), ...(email ? { email } : {}), ...(name ? { name } : {}) },
          events,
        });
        const actor: Actor = { type: 'contact', id: contact.id, name: contact.name };
        const preferred = message.thread?.length ? await threadConversation(tx, channel.id, contact.id, message.thread) : undefined;
        const conversation = await conversationForSend(tx, {
          workspaceId: channel.workspaceId,
          channelId: channel.id,
          contactId: contact.id,
          silent: false,
          actor,
          at: message.at,
          events,
          preferred,
        });
        const row = (await tx.message.create({
          data: {
            id,
            workspaceId: channel.workspaceId,
            channelId: channel.id,
            conversationId: conversation.id,
            contactId: contact.id,
            direction: 'inbound',
            type: 'text',
            body: message.body,
            senderType: 'contact',
            senderContactId: contact.id,
            senderName: contact.name,
            status: 'received',
            media: message.media.map((item, index) => ({ index, contentType: item.contentType, filename: item.filename, ref: item.ref })),
            ...(message.meta ? { providerMeta: message.meta as Prisma.InputJsonObject } : {}),
            createdAt: message.at,
          },
          include: MESSAGE_RELATIONS,
        })) as MessageRow;
        await tx.$executeRaw`
          UPDATE conversations
             SET last_message_at = GREATEST(coalesce(last_message_at, ${message.at}::timestamptz), ${message.at}::timestamptz),
                 last_message_id = CASE WHEN last_message_at IS NULL OR last_message_at <= ${message.at}::timestamptz THEN ${id}::uuid ELSE last_message_id END,
                 unread_count = unread_count + CASE WHEN last_read_at IS NULL OR last_read_at < ${message.at}::timestamptz THEN 1 ELSE 0 END,
                 updated_at = now()
           WHERE id = ${conversation.id}::uuid`;
        await tx.$executeRaw`INSERT INTO contact_channels (contact_id, channel_id) VALUES (${contact.id}::uuid, ${channel.id}::uuid) ON CONFLICT DO NOTHING`;
        // A keyword the provider treats as an opt-out (or opt-in) opts the contact out of (or back in to) the channel.
        if (message.optOut) {
          await tx.$executeRaw(message.optOut === 'out' ? optOutSql(contact.id, channel.id, message.at, 'keyword') : optInSql(contact.id, channel.id));
        }
        await recordEvents(tx, channel.workspaceId, [...events, { type: 'message.created', data: messageTable.view(row) }]);
        return row;
      });
      if (!stored) return 'duplicate';
      const ids = { conversationId: stored.conversationId, workspaceId: channel.workspaceId, channelId: channel.id };
      ctx.events?.publish({ type: 'message.created', messageId: stored.id, ...ids });
      ctx.events?.publish({ type: 'conversation.updated', ...ids });
      return 'stored';
    } catch (error) {
      // Another copy created the same contact or conversation first: the next attempt finds it.
      if (attempt < ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/**
 * An inbound message as it can be stored, whatever the provider sent: every text with U+0000 and
 * lone surrogates replaced, the body cut at INBOUND_BODY_MAX characters, the provider's id hashed
 * when it is longer than its column. Nothing a person can send fails the event.
 */
function storableMessage(message: InboundMessage): InboundMessage {
  const text = (value: string | undefined) => (value === undefined ? undefined : storableText(value));
  const from = { phone: text(message.from.phone), email: text(message.from.email), name: text(message.from.name) };
  return {
    ...message,
    providerId: storedProviderId(message.providerId),
    from: Object.fromEntries(Object.entries(from).filter(([, value]) => value !== undefined)),
    body: truncated(storableText(message.body), INBOUND_BODY_MAX),
    media: message.media.map((item) => ({
      ref: storableText(item.ref),
      contentType: item.contentType === null ? null : storableText(item.contentType),
      filename: item.filename === null ? null : storableText(item.filename),
    })),
  };
}

/**
 * The conversation of the channel's message a reply answers: the first of `thread` (provider ids,
 * nearest first) that is a message of this channel, inbound or outbound, on a conversation of this
 * contact. An outbound message is found by its provider id; an inbound email by its Message-ID as
 * kept with it (its provider id identifies repeats, not threads). Undefined when none is.
 */
async function threadConversation(tx: Prisma.TransactionClient, channelId: string, contactId: string, thread: string[]): Promise<string | undefined> {
  const found = await tx.$queryRaw<{ provider_id: string; conversation_id: string }[]>`
    SELECT p.provider_id, m.conversation_id
      FROM provider_message_ids p JOIN messages m ON m.id = p.message_id
     WHERE p.channel_id = ${channelId}::uuid AND p.provider_id = ANY(${thread}::text[]) AND m.contact_id = ${contactId}::uuid
    UNION ALL
    SELECT m.provider_meta->>'messageId', m.conversation_id
      FROM messages m
     WHERE m.contact_id = ${contactId}::uuid AND m.channel_id = ${channelId}::uuid AND m.direction = 'inbound'
       AND m.provider_meta->>'messageId' = ANY(${thread}::text[])`;
  return thread.map((id) => found.find((row) => row.provider_id === id)?.conversation_id).find(Boolean);
}

/** How a status ended: applied, older than what the message already has, or for a message not found here. */
export type StatusResult = 'applied' | 'stale' | 'unknown' | 'other-channel';

/** The order statuses move in; `failed` applies only to a message not yet delivered. */
const RANK = Prisma.sql`CASE status WHEN 'queued' THEN 0 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 9 END`;
const TARGET_RANK: Record<InboundStatus['status'], number> = { sent: 1, delivered: 2, failed: 2, read: 3 };

/**
 * Moves an outbound message forward only (`queued < sent < delivered < read`; `failed` unless it
 * is already delivered or read, and nothing after `failed`): a status older than the message's
 * changes nothing. A change emits `message.status_changed`. A provider id this channel does not
 * know is `unknown` (the caller retries it: the send may not be recorded yet), or `other-channel`
 * when it is another channel's.
 */
export async function applyStatus(ctx: InboundContext, channel: InboundChannel, status: InboundStatus): Promise<StatusResult> {
  const owners = await ctx.prisma.$queryRaw<{ channel_id: string; message_id: string }[]>`
    SELECT channel_id, message_id FROM provider_message_ids WHERE provider_id = ${storedProviderId(status.providerId)}`;
  const own = owners.find((owner) => owner.channel_id === channel.id);
  if (!own) return owners.length ? 'other-channel' : 'unknown';
  // A failure the provider gives because the recipient opted out opts the contact out, whatever the status does.
  if (status.optedOut) await ctx.prisma.$executeRaw(messageOptOutSql(own.message_id, status.at));
  const reason = status.error ? storableText(truncated(`${status.error.code}: ${status.error.text}`, 1024)) : null;
  const applied = await ctx.prisma.$transaction(async (tx) => {
    const changed = await tx.$executeRaw`
      UPDATE messages
         SET status = ${status.status}::message_status,
             failure_reason = CASE WHEN ${status.status} = 'failed' THEN ${reason} ELSE failure_reason END,
             failed_at = CASE WHEN ${status.status} = 'failed' THEN ${status.at}::timestamptz ELSE failed_at END,
             updated_at = now()
       WHERE id = ${own.message_id}::uuid AND direction = 'outbound' AND ${RANK} < ${TARGET_RANK[status.status]}`;
    if (changed === 0) return 'stale' as const;
    const row = (await tx.message.findUniqueOrThrow({ where: { id: own.message_id }, include: MESSAGE_RELATIONS })) as MessageRow;
    await recordEvents(tx, channel.workspaceId, [{ type: 'message.status_changed', data: messageTable.view(row) }]);
    return row;
  });
  if (applied === 'stale') return 'stale';
  // Committed: subscriptions hear of the new status.
  ctx.events?.publish({
    type: 'message.updated',
    messageId: applied.id,
    conversationId: applied.conversationId,
    workspaceId: channel.workspaceId,
    channelId: applied.channelId,
    broadcastId: applied.broadcastId,
  });
  return 'applied';
}
