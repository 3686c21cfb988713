import { Prisma, type Channel, type Message, type User } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import type { RequestContext } from '../../context/types.js';
import { actingChannel } from '../../context/request.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ValidationError } from '../../errors/domain.js';
import { NEWEST_FIRST, afterCursor, toPage, type Cursor, type Page } from '../../lib/pagination.js';
import { isUuid } from '../../lib/uuid.js';
import { characterCount, parseInput } from '../../lib/validation.js';
import { renderTemplate } from '../templates/templates.schemas.js';
import { conversationForSend, type Actor, type ActorView } from '../conversations/conversations.service.js';
import type { PrismaQuery } from '../../db/query.js';
import type { WriteGuard } from '../idempotency/idempotency.service.js';
import { recordEvents, type DomainEvent } from '../events/events.service.js';
import { MESSAGES, MESSAGE_LIMITS, messageFiltersSchema, sendMessageSchema, type SendMessageInput } from './messages.schemas.js';
import { chooseRecipient, resolveRecipient } from './recipients.js';

export const ENCRYPTED_PLACEHOLDER = 'Encrypted message hidden';

export type MessageRow = Message & { channel: Pick<Channel, 'name'>; senderUser: Pick<User, 'name'> | null };

export const messageInclude = { channel: { select: { name: true } }, senderUser: { select: { name: true } } } as const;

/** A message's content as views may show it: never an encrypted message's ciphertext. */
export function visibleBody(message: Pick<Message, 'isEncrypted' | 'body'>): string | null {
  return message.isEncrypted ? null : message.body;
}

/** Who a message is attributed to, with the name of the channel or user behind it. */
export function messageSender(
  message: Pick<Message, 'senderType' | 'senderChannelId' | 'senderUserId' | 'senderName'> & {
    channel: Pick<Channel, 'name'>;
    senderUser: Pick<User, 'name'> | null;
  },
): ActorView {
  if (message.senderType === 'channel') return { type: 'channel', id: message.senderChannelId, name: message.channel.name };
  if (message.senderType === 'user') return { type: 'user', id: message.senderUserId, name: message.senderUser?.name ?? message.senderName };
  return { type: 'external', id: null, name: message.senderName };
}

/**
 * The API view of a message. An encrypted message's content (the caller's
 * ciphertext) never leaves through a view: `body` is null and a placeholder is shown.
 */
export function messageView(message: MessageRow) {
  return {
    id: message.id,
    conversationId: message.conversationId,
    contactId: message.contactId,
    channelId: message.channelId,
    direction: message.direction,
    type: message.type,
    body: visibleBody(message),
    ...(message.isEncrypted ? { placeholder: ENCRYPTED_PLACEHOLDER } : {}),
    isEncrypted: message.isEncrypted,
    status: message.status,
    sender: messageSender(message),
    silent: message.silent,
    mediaUrls: message.mediaUrls,
    createdAt: message.createdAt.toISOString(),
  };
}

export type MessageView = ReturnType<typeof messageView>;

/** `from`: a workspace user's id or email, otherwise an external actor by that name; absent: the channel. */
async function resolveSender(tx: Db, workspaceId: string, channel: Channel, from: string | null | undefined): Promise<Actor> {
  if (!from) return { type: 'channel', id: channel.id, name: channel.name };
  const key = from.toLowerCase();
  const user = await tx.user.findFirst({ where: { workspaceId, ...(isUuid(key) ? { id: key } : { emailNormalized: key }) } });
  return user ? { type: 'user', id: user.id, name: user.name } : { type: 'external', id: null, name: from };
}

async function resolveContent(tx: Db, channel: Channel, input: SendMessageInput) {
  if (input.type === 'text') return { body: input.message!, templateId: null, templateParameters: undefined };
  const { name, language, parameters } = input.template!;
  const template = await tx.channelTemplate.findFirst({
    where: { channelId: channel.id, name, status: 'approved', ...(language ? { language } : {}) },
    orderBy: [{ language: 'asc' }],
  });
  if (!template) throw ValidationError.field('template.name', MESSAGES.templateUnknown);
  if (parameters.length !== template.parameterCount) {
    throw ValidationError.field('template.parameters', MESSAGES.templateParameterCount(template.parameterCount));
  }
  const body = renderTemplate(template.body, parameters);
  if (characterCount(body) > MESSAGE_LIMITS.text) throw ValidationError.field('template.parameters', MESSAGES.templateRenderedMax);
  return { body, templateId: template.id, templateParameters: parameters };
}

/** Attempts for a send that lost a race creating the same contact or conversation. */
const SEND_ATTEMPTS = 3;

/**
 * POST /messages (spec §4.2). Stores the message as `queued` and its delivery in
 * the same transaction (transactional outbox): a committed message is always
 * delivered, a rolled-back one never. Its events (a contact created for the
 * recipient, a conversation reopened, the message created) join the same outbox
 * in the same transaction.
 */
export async function sendMessage(ctx: RequestContext, body: unknown, guard?: WriteGuard<MessageRow>): Promise<MessageRow> {
  const channel = actingChannel(ctx.auth);
  const workspaceId = ctx.auth.workspace.id;
  const input = parseInput(sendMessageSchema, body);
  const { field, recipient } = chooseRecipient(input);

  for (let attempt = 1; ; attempt++) {
    try {
      const message = await ctx.prisma.$transaction(async (tx) => {
        await guard?.begin(tx);
        const events: DomainEvent[] = [];
        const content = await resolveContent(tx, channel, input);
        const contact = await resolveRecipient(tx, { workspaceId, channelId: channel.id, field, recipient, events });
        const sender = await resolveSender(tx, workspaceId, channel, input.from);
        const at = new Date();
        const conversation = await conversationForSend(tx, {
          workspaceId,
          channelId: channel.id,
          contactId: contact.id,
          silent: input.silent,
          actor: sender,
          at,
          events,
        });
        const message = await tx.message.create({
          data: {
            workspaceId,
            channelId: channel.id,
            conversationId: conversation.id,
            contactId: contact.id,
            direction: 'outbound',
            type: input.type,
            body: content.body,
            isEncrypted: input.is_encrypted,
            silent: input.silent,
            templateId: content.templateId,
            ...(content.templateParameters ? { templateParameters: content.templateParameters } : {}),
            mediaUrls: input.media_urls,
            senderType: sender.type,
            senderChannelId: sender.type === 'channel' ? sender.id : null,
            senderUserId: sender.type === 'user' ? sender.id : null,
            senderName: sender.name,
            status: 'queued',
            createdAt: at,
            deliveries: { create: { workspaceId } },
          },
          include: messageInclude,
        });
        events.push({ type: 'message.created', data: messageView(message) });
        await recordEvents(tx, workspaceId, events, at);
        await guard?.end(tx, message);
        return message;
      });
      ctx.onMessageQueued?.();
      const ids = { conversationId: message.conversationId, workspaceId, channelId: channel.id };
      ctx.events?.publish({ type: 'message.created', messageId: message.id, ...ids });
      ctx.events?.publish({ type: 'conversation.updated', ...ids });
      return message;
    } catch (error) {
      if (attempt < SEND_ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/** GET /messages: the acting channel's messages, newest first; search never sees encrypted content. */
export async function listMessages(
  ctx: RequestContext,
  params: { limit: number; cursor?: Cursor | undefined; filters: Record<string, string | undefined> },
  query: PrismaQuery = { include: messageInclude },
): Promise<Page<MessageRow>> {
  const channel = actingChannel(ctx.auth);
  const filters = parseInput(messageFiltersSchema, params.filters);
  const conversationId = filters.conversation_id?.toLowerCase();
  const contactId = filters.contact_id?.toLowerCase();
  let ids: string[] | undefined;
  if (filters.search) {
    // Full-text match through the GIN index, paged by the same keyset; encrypted
    // messages have no document, so they can never match.
    const { cursor } = params;
    const rows = await ctx.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM messages
       WHERE channel_id = ${channel.id}::uuid
         AND search_vector @@ plainto_tsquery('simple'::regconfig, ${filters.search})
         ${conversationId ? Prisma.sql`AND conversation_id = ${conversationId}::uuid` : Prisma.empty}
         ${contactId ? Prisma.sql`AND contact_id = ${contactId}::uuid` : Prisma.empty}
         ${cursor ? Prisma.sql`AND (created_at, id) < (${cursor.createdAt}, ${cursor.id}::uuid)` : Prisma.empty}
       ORDER BY created_at DESC, id DESC
       LIMIT ${params.limit + 1}`;
    ids = rows.map((row) => row.id);
  }
  const rows = await ctx.prisma.message.findMany({
    ...query,
    where: ids
      ? { id: { in: ids } }
      : {
          AND: [
            { workspaceId: ctx.auth.workspace.id, channelId: channel.id },
            conversationId ? { conversationId } : {},
            contactId ? { contactId } : {},
            afterCursor(params.cursor),
          ],
        },
    orderBy: NEWEST_FIRST,
    take: params.limit + 1,
  });
  return toPage(rows as MessageRow[], params.limit);
}
