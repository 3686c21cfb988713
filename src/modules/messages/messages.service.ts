import { randomUUID } from 'node:crypto';
import { Prisma, type Channel, type Contact, type Message, type User } from '../../generated/prisma/client.js';
import { sqlOn, type Db } from '../../db/types.js';
import type { RunSql } from '../../db/database.js';
import type { RequestContext } from '../../context/types.js';
import { actingChannel } from '../../context/request.js';
import { isLockTimeout, isUniqueViolation } from '../../db/errors.js';
import { ForbiddenError, ValidationError } from '../../errors/domain.js';
import { NEWEST_FIRST, afterCursor, toPage, type Cursor, type Page } from '../../lib/pagination.js';
import { deriveE164 } from '../../lib/phone.js';
import { isUuid, uuid7 } from '../../lib/uuid.js';
import { characterCount, parseInput } from '../../lib/validation.js';
import { renderTemplate } from '../templates/templates.schemas.js';
import { conversationForSend, type Actor } from '../conversations/conversations.service.js';
import type { ActorView } from '../conversations/conversations.schemas.js';
import type { PrismaQuery } from '../../db/query.js';
import type { WriteGuard } from '../idempotency/idempotency.service.js';
import { isoSql, jsonObjectSql, queueEventsSql, type DomainEvent } from '../events/events.service.js';
import { MESSAGES, MESSAGE_LIMITS, type MediaView, type MessageView, type Recipient, messageFiltersSchema, sendMessageSchema, type SendMessageInput } from './messages.schemas.js';
import { chooseRecipient, resolveRecipient } from './recipients.js';
import { isoTimestamp } from '../../lib/time.js';

export const ENCRYPTED_PLACEHOLDER = 'Encrypted message hidden';

export type MessageRow = Message & { channel: Pick<Channel, 'name'>; senderUser: Pick<User, 'name'> | null; senderContact?: Pick<Contact, 'name'> | null };

/** What `messageView` reads of a message row. */
type MessageViewRow = Pick<
  MessageRow,
  | 'id' | 'conversationId' | 'contactId' | 'channelId' | 'direction' | 'type' | 'body' | 'isEncrypted' | 'status' | 'failureReason'
  | 'senderType' | 'senderChannelId' | 'senderUserId' | 'senderContactId' | 'senderName' | 'silent' | 'mediaUrls' | 'media' | 'createdAt'
  | 'channel' | 'senderUser' | 'senderContact'
>;

export const messageInclude = {
  channel: { select: { name: true } },
  senderUser: { select: { name: true } },
  senderContact: { select: { name: true } },
} as const;

/** A message's content as views may show it: never an encrypted message's ciphertext. */
export function visibleBody(message: Pick<Message, 'isEncrypted' | 'body'>): string | null {
  return message.isEncrypted ? null : message.body;
}

/** Who a message is attributed to, with the name of the channel or user behind it. */
export function messageSender(
  message: Pick<Message, 'senderType' | 'senderChannelId' | 'senderUserId' | 'senderContactId' | 'senderName'> & {
    channel: Pick<Channel, 'name'>;
    senderUser: Pick<User, 'name'> | null;
    senderContact?: Pick<Contact, 'name'> | null;
  },
): ActorView {
  if (message.senderType === 'channel') return { type: 'channel', id: message.senderChannelId, name: message.channel.name };
  if (message.senderType === 'user') return { type: 'user', id: message.senderUserId, name: message.senderUser?.name ?? message.senderName };
  if (message.senderType === 'contact') return { type: 'contact', id: message.senderContactId, name: message.senderContact?.name ?? message.senderName };
  return { type: 'external', id: null, name: message.senderName };
}

/** Files received with a message, as views list them: never where the provider keeps them. */
export function mediaView(media: Message['media']): MediaView[] {
  if (!Array.isArray(media)) return [];
  return media.map((item, index) => {
    const entry = (item ?? {}) as { contentType?: unknown; filename?: unknown };
    return {
      index,
      contentType: typeof entry.contentType === 'string' ? entry.contentType : null,
      filename: typeof entry.filename === 'string' ? entry.filename : null,
    };
  });
}

/**
 * The API view of a message. An encrypted message's content (the caller's
 * ciphertext) never leaves through a view: `body` is null and a placeholder is shown.
 */
export function messageView(message: MessageViewRow): MessageView {
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
    failureReason: message.failureReason,
    sender: messageSender(message),
    silent: message.silent,
    mediaUrls: message.mediaUrls,
    media: mediaView(message.media),
    createdAt: isoTimestamp(message.createdAt),
  };
}

/**
 * SQL yielding `messageView` of a row as JSON, for events queued by the statement that changes
 * the message: `message` is a FROM item with the messages table's columns, `channel` the row
 * of its channel, `sender_user` and `sender_contact` the rows of its sender (or nulls).
 */
export function messageViewSql(): Prisma.Sql {
  const sender = Prisma.sql`CASE message.sender_type
      WHEN 'channel' THEN json_build_object('type', 'channel', 'id', message.sender_channel_id, 'name', channel.name)
      WHEN 'user' THEN json_build_object('type', 'user', 'id', message.sender_user_id, 'name', coalesce(sender_user.name, message.sender_name))
      WHEN 'contact' THEN json_build_object('type', 'contact', 'id', message.sender_contact_id, 'name', coalesce(sender_contact.name, message.sender_name))
      ELSE json_build_object('type', 'external', 'id', NULL, 'name', message.sender_name) END`;
  const text = (field: string) => Prisma.sql`CASE WHEN jsonb_typeof(item.value -> ${field}::text) = 'string' THEN item.value ->> ${field}::text END`;
  const media = Prisma.sql`CASE WHEN jsonb_typeof(message.media) = 'array' THEN coalesce((
      SELECT json_agg(json_build_object('index', item.position - 1, 'contentType', ${text('contentType')}, 'filename', ${text('filename')}) ORDER BY item.position)
        FROM jsonb_array_elements(message.media) WITH ORDINALITY AS item(value, position)), '[]'::json) ELSE '[]'::json END`;
  const view = (encrypted: boolean) =>
    jsonObjectSql({
      id: Prisma.sql`message.id`,
      conversationId: Prisma.sql`message.conversation_id`,
      contactId: Prisma.sql`message.contact_id`,
      channelId: Prisma.sql`message.channel_id`,
      direction: Prisma.sql`message.direction`,
      type: Prisma.sql`message.type`,
      body: encrypted ? Prisma.sql`NULL::text` : Prisma.sql`message.body`,
      ...(encrypted ? { placeholder: ENCRYPTED_PLACEHOLDER } : {}),
      isEncrypted: Prisma.sql`message.is_encrypted`,
      status: Prisma.sql`message.status`,
      failureReason: Prisma.sql`message.failure_reason`,
      sender,
      silent: Prisma.sql`message.silent`,
      mediaUrls: Prisma.sql`to_json(message.media_urls)`,
      media,
      createdAt: isoSql(Prisma.sql`message.created_at`),
    });
  return Prisma.sql`CASE WHEN message.is_encrypted THEN ${view(true)} ELSE ${view(false)} END`;
}

/** `from`: a workspace user's id or email, otherwise an external actor by that name; absent: the channel. */
async function resolveSender(tx: Db, workspaceId: string, channel: Channel, from: string | null | undefined): Promise<Actor> {
  if (!from) return channelSender(channel);
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

/** A message about to be stored, with everything its row and view need except its conversation. */
interface Outgoing {
  id: string;
  workspaceId: string;
  channel: Channel;
  contactId: string;
  input: SendMessageInput;
  content: Awaited<ReturnType<typeof resolveContent>>;
  sender: Actor;
  at: Date;
  /** Events of the send before the message's own (a contact created, a conversation reopened). */
  events: DomainEvent[];
}

/** The stored row of `message` on `conversationId`, as the statement storing it wrote it. */
function messageRow(message: Outgoing, conversationId: string): MessageRow {
  const { input, content, sender, at } = message;
  return {
    id: message.id,
    workspaceId: message.workspaceId,
    channelId: message.channel.id,
    conversationId,
    contactId: message.contactId,
    direction: 'outbound',
    type: input.type,
    body: content.body,
    isEncrypted: input.is_encrypted,
    silent: input.silent,
    templateId: content.templateId,
    templateParameters: content.templateParameters ?? null,
    mediaUrls: input.media_urls,
    senderType: sender.type,
    senderChannelId: sender.type === 'channel' ? sender.id : null,
    senderUserId: sender.type === 'user' ? sender.id : null,
    senderName: sender.name,
    senderContactId: null,
    status: 'queued',
    deliveryAttempts: 0,
    lastError: null,
    failureReason: null,
    media: [],
    providerMeta: null,
    sentAt: null,
    failedAt: null,
    createdAt: at,
    updatedAt: at,
    channel: { name: message.channel.name },
    senderUser: sender.type === 'user' ? { name: sender.name } : null,
    senderContact: null,
  };
}

/** Where a message goes: a conversation already chosen (and locked), or the contact's open one on the channel. */
type ConversationChoice = { id: string } | { open: true };

/**
 * Stores a message in one statement: on the chosen conversation (bumping its
 * last_message_at), with its delivery (the outbox), the contact's link to the
 * acting channel, and the send's events followed by `message.created`. When the
 * contact has no open conversation on the channel (or is no live contact of the
 * workspace), nothing is written and the answer is null.
 */
async function storeMessage(
  sql: RunSql,
  message: Outgoing,
  conversation: ConversationChoice,
  guard?: WriteGuard<MessageRow>,
): Promise<{ row: MessageRow; queued: number } | null | 'taken'> {
  const { workspaceId, channel, contactId, input, content, sender, at } = message;
  const chosen =
    'id' in conversation
      ? Prisma.sql`id = ${conversation.id}::uuid`
      : Prisma.sql`channel_id = ${channel.id}::uuid AND contact_id = ${contactId}::uuid AND status = 'open'
          AND EXISTS (SELECT 1 FROM contacts WHERE id = ${contactId}::uuid AND workspace_id = ${workspaceId}::uuid AND deleted_at IS NULL)`;
  // The view is known before the statement but for the conversation, which the statement chooses.
  const view = messageView(messageRow(message, ''));
  const events = [...message.events, { type: 'message.created' as const, data: jsonObjectSql({ ...view, conversationId: Prisma.sql`message.conversation_id` }) }];
  // With an idempotency key outside a transaction: the conversation is locked first, the key
  // claimed (with its answer) only when there is one, and the write goes ahead only when claimed.
  const placeholder = guard ? randomUUID() : '';
  const update = guard
    ? Prisma.sql`
    chosen AS (SELECT id FROM conversations WHERE ${chosen} FOR UPDATE),
    claim AS (${guard.inlineClaim(messageRow(message, placeholder), placeholder, Prisma.sql`chosen`, Prisma.sql`chosen.id`)}),
    conversation AS (
      UPDATE conversations SET last_message_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
       WHERE id = (SELECT id FROM chosen) AND EXISTS (SELECT 1 FROM claim)
      RETURNING id),`
    : Prisma.sql`
    conversation AS (
      UPDATE conversations SET last_message_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
       WHERE ${chosen}
      RETURNING id),`;
  const [stored] = await sql<{ conversationId: string | null; queued: number | null; chosen: string | null }>(Prisma.sql`
    WITH ${update}
    message AS (
      INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, direction, type, body, is_encrypted, silent,
                            template_id, template_parameters, media_urls, sender_type, sender_channel_id, sender_user_id, sender_name,
                            status, created_at, updated_at)
      SELECT ${message.id}::uuid, ${workspaceId}::uuid, ${channel.id}::uuid, conversation.id, ${contactId}::uuid, 'outbound',
             ${input.type}::message_type, ${content.body}, ${input.is_encrypted}, ${input.silent},
             ${content.templateId}::uuid, ${content.templateParameters ? JSON.stringify(content.templateParameters) : null}::jsonb,
             ${input.media_urls}::text[], ${sender.type}::actor_type,
             ${sender.type === 'channel' ? sender.id : null}::uuid, ${sender.type === 'user' ? sender.id : null}::uuid, ${sender.name},
             'queued', ${at}::timestamptz, ${at}::timestamptz
        FROM conversation
      RETURNING id, conversation_id),
    delivery AS (
      INSERT INTO deliveries (id, workspace_id, message_id) SELECT gen_random_uuid(), ${workspaceId}::uuid, id FROM message),
    link AS (
      INSERT INTO contact_channels (contact_id, channel_id) SELECT ${contactId}::uuid, ${channel.id}::uuid FROM message
      ON CONFLICT DO NOTHING),
    queued AS (${queueEventsSql(workspaceId, events, at, Prisma.sql`message`)} RETURNING 1)
    SELECT message.conversation_id AS "conversationId", (SELECT count(*) FROM queued)::int AS queued,
           ${guard ? Prisma.sql`(SELECT id FROM chosen)` : Prisma.sql`NULL::uuid`} AS chosen
      FROM (SELECT 1) AS once LEFT JOIN message ON true`);
  if (stored?.conversationId) return { row: messageRow(message, stored.conversationId), queued: stored.queued ?? 0 };
  // A conversation was there to write to, but another request holds the key.
  return stored?.chosen ? 'taken' : null;
}

/**
 * POST /messages (spec §4.2). Stores the message as `queued` and its delivery in
 * the same transaction (transactional outbox): a committed message is always
 * delivered, a rolled-back one never. Its events (a contact created for the
 * recipient, a conversation reopened, the message created) join the same outbox
 * in the same transaction.
 *
 * The common send — text from the channel to a contact's id that has an open
 * conversation on the channel — is one statement (with an idempotency key, one
 * statement between the key's claim and its answer). Anything else, or that
 * statement finding no open conversation, takes the full path in a transaction.
 */
export async function sendMessage(ctx: RequestContext, body: unknown, guard?: WriteGuard<MessageRow>): Promise<MessageRow> {
  const channel = actingChannel(ctx.auth);
  const workspaceId = ctx.auth.workspace.id;
  const input = parseInput(sendMessageSchema, body);
  const { field, recipient } = chooseRecipient(input);
  // A session sends as its user, whom `from` may name and nobody else (CONTRACT §7).
  const asUser = sessionSender(ctx, input.from);
  // The one-statement path skips the recipient checks a provider needs: a webhook channel's sends only.
  const direct = channel.provider === 'webhook' && input.type === 'text' && (!input.from || asUser) && 'contactId' in recipient ? recipient.contactId : null;

  for (let attempt = 1; ; attempt++) {
    try {
      const at = new Date();
      const outgoing = { id: uuid7(), workspaceId, channel, input, at, events: [] as DomainEvent[] };
      const onOpenConversation = async (sql: RunSql, inline?: WriteGuard<MessageRow>) => {
        const stored = await storeMessage(
          sql,
          { ...outgoing, contactId: direct!, content: { body: input.message!, templateId: null, templateParameters: undefined }, sender: asUser ?? channelSender(channel) },
          { open: true },
          inline,
        );
        if (stored === 'taken') return inline!.replay();
        if (stored) inline?.answered(stored.row);
        return stored;
      };
      const sent =
        (direct ? await onOpenConversation(ctx.sql, guard).catch(inlineWaited) : null) ??
        (await ctx.prisma.$transaction(async (tx) => {
          await guard?.begin(tx);
          const sent = await sendInTransaction(tx, { ...outgoing, field, recipient, asUser });
          await guard?.end(tx, sent.row);
          return sent;
        }));
      ctx.onMessageQueued?.();
      const ids = { conversationId: sent.row.conversationId, workspaceId, channelId: channel.id };
      ctx.events?.publish({ type: 'message.created', messageId: sent.row.id, ...ids });
      ctx.events?.publish({ type: 'conversation.updated', ...ids });
      return sent.row;
    } catch (error) {
      if (attempt < SEND_ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/**
 * The one-statement send waits for its conversation's lock as any send does, but at most 100 ms
 * for what it locks after it (a concurrent claim of its key, the contact's channel link): past
 * that it takes the transaction, which tells a request still in flight (409) from a slow one.
 */
function inlineWaited(error: unknown): null {
  if (isLockTimeout(error)) return null;
  throw error;
}

function channelSender(channel: Channel): Actor {
  return { type: 'channel', id: channel.id, name: channel.name };
}

/**
 * The sender of a session's message: its user, always. `from` may name that user (by id or
 * email), and nobody else: ForbiddenError. Null for a backend credential, whose `from` decides.
 */
function sessionSender(ctx: RequestContext, from: string | null | undefined): Actor | null {
  const user = ctx.auth.credential.user;
  if (!user) return null;
  const named = from?.trim().toLowerCase();
  if (named && named !== user.id && named !== user.email.toLowerCase()) {
    throw new ForbiddenError('A session sends as its own user: `from` may name that user only.');
  }
  return { type: 'user', id: user.id, name: user.name };
}

/** The full send: content, recipient and sender resolved, the conversation chosen and locked, then the message stored. */
async function sendInTransaction(
  tx: Prisma.TransactionClient,
  message: Omit<Outgoing, 'contactId' | 'content' | 'sender'> & { field: string; recipient: Recipient; asUser: Actor | null },
): Promise<{ row: MessageRow; queued: number }> {
  const { workspaceId, channel, input, at, events, field, recipient, asUser } = message;
  const content = await resolveContent(tx, channel, input);
  const contact = await resolveRecipient(tx, { workspaceId, field, recipient, events });
  await checkReachable(tx, channel, contact, field, input.type);
  const sender = asUser ?? (await resolveSender(tx, workspaceId, channel, input.from));
  const conversation = await conversationForSend(tx, { workspaceId, channelId: channel.id, contactId: contact.id, silent: input.silent, actor: sender, at, events });
  const { asUser: _, ...outgoing } = message;
  const stored = await storeMessage(sqlOn(tx), { ...outgoing, contactId: contact.id, content, sender }, conversation);
  // The conversation was chosen and locked in this transaction, so the message was stored.
  return stored as { row: MessageRow; queued: number };
}

/** How each provider names itself in a refusal, and what it needs of a recipient. */
const REACHES: Partial<Record<Channel['provider'], { label: string; needs: 'phone' | 'email' }>> = {
  whatsapp_cloud: { label: 'WhatsApp', needs: 'phone' },
  twilio: { label: 'SMS', needs: 'phone' },
  smtp: { label: 'email', needs: 'email' },
};

/** WhatsApp's customer-service window: free-form messages only within 24 hours of the contact's last message. */
const WHATSAPP_WINDOW_MS = 24 * 3600_000;

/**
 * A recipient the channel's provider cannot reach is the caller's error (CONTRACT §6): a phone with
 * an E.164 form for WhatsApp and SMS, an email for email, never a group; and on WhatsApp a text needs the contact to
 * have written on this channel within 24 hours (templates always go).
 */
async function checkReachable(tx: Db, channel: Channel, contact: Contact, field: string, type: SendMessageInput['type']): Promise<void> {
  const reach = REACHES[channel.provider];
  if (!reach) return;
  if (contact.isGroup) throw ValidationError.field(field, MESSAGES.recipientIsGroup(reach.label));
  if (reach.needs === 'phone' && !contact.phone) throw ValidationError.field(field, MESSAGES.recipientNeedsPhone(reach.label));
  // A phone stored before numbers were checked may have no international form: the provider could not dial it.
  if (reach.needs === 'phone' && !deriveE164(contact.phone!)) throw ValidationError.field(field, MESSAGES.recipientNeedsE164(reach.label));
  if (reach.needs === 'email' && !contact.email) throw ValidationError.field(field, MESSAGES.recipientNeedsEmail(reach.label));
  if (channel.provider !== 'whatsapp_cloud' || type !== 'text') return;
  const since = new Date(Date.now() - WHATSAPP_WINDOW_MS);
  const [recent] = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM messages
     WHERE contact_id = ${contact.id}::uuid AND channel_id = ${channel.id}::uuid AND direction = 'inbound' AND created_at > ${since}::timestamptz
     LIMIT 1`;
  if (!recent) throw ValidationError.field('type', MESSAGES.outsideWindow);
}

/** What the REST list reads: the rows `messageView` needs (`viewPage`). */
const MESSAGE_VIEW_QUERY = { include: messageInclude } as const satisfies PrismaQuery;

/** The columns of the acting channel's messages the filters keep, newest first from the cursor: one past the limit. */
function pageQuery(
  columns: Prisma.Sql,
  channelId: string,
  filters: { conversationId?: string | undefined; contactId?: string | undefined; search?: string | undefined },
  params: { limit: number; cursor?: Cursor | undefined },
): Prisma.Sql {
  const { cursor } = params;
  // Full-text match through the GIN index, paged by the same keyset; encrypted messages have no
  // document, so they can never match.
  return Prisma.sql`
    SELECT ${columns} FROM messages
     WHERE channel_id = ${channelId}::uuid
       ${filters.search ? Prisma.sql`AND search_vector @@ plainto_tsquery('simple'::regconfig, ${filters.search})` : Prisma.empty}
       ${filters.conversationId ? Prisma.sql`AND conversation_id = ${filters.conversationId}::uuid` : Prisma.empty}
       ${filters.contactId ? Prisma.sql`AND contact_id = ${filters.contactId}::uuid` : Prisma.empty}
       ${cursor ? Prisma.sql`AND (created_at, id) < (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)` : Prisma.empty}
     ORDER BY created_at DESC, id DESC
     LIMIT ${params.limit + 1}`;
}

const VIEW_COLUMNS = Prisma.raw(
  'id, conversation_id, contact_id, channel_id, direction, type, body, is_encrypted, status, failure_reason, sender_type, sender_channel_id, sender_user_id, sender_contact_id, sender_name, silent, media_urls, media, created_at',
);

type ViewColumns = Omit<MessageViewRow, 'channel' | 'senderUser' | 'senderContact'> & { channelName: string; senderUserName: string | null; senderContactName: string | null };

/**
 * A page of the acting channel's messages with what `messageView` reads, in one statement: the
 * messages the filters keep with the names of their channel and of their sender's user or contact.
 */
async function viewPage(sql: RunSql, channel: Pick<Channel, 'id'>, filters: Parameters<typeof pageQuery>[2], params: { limit: number; cursor?: Cursor | undefined }): Promise<MessageViewRow[]> {
  const rows = await sql<ViewColumns>(Prisma.sql`
    SELECT m.id, m.conversation_id AS "conversationId", m.contact_id AS "contactId", m.channel_id AS "channelId", m.direction, m.type,
           m.body, m.is_encrypted AS "isEncrypted", m.status, m.failure_reason AS "failureReason", m.sender_type AS "senderType",
           m.sender_channel_id AS "senderChannelId", m.sender_user_id AS "senderUserId", m.sender_contact_id AS "senderContactId",
           m.sender_name AS "senderName", m.silent, m.media_urls AS "mediaUrls", m.media, m.created_at AS "createdAt",
           channel.name AS "channelName", sender_user.name AS "senderUserName", sender_contact.name AS "senderContactName"
      FROM (${pageQuery(VIEW_COLUMNS, channel.id, filters, params)}) AS m
      JOIN channels AS channel ON channel.id = m.channel_id
      LEFT JOIN users AS sender_user ON sender_user.id = m.sender_user_id
      LEFT JOIN contacts AS sender_contact ON sender_contact.id = m.sender_contact_id
     ORDER BY m.created_at DESC, m.id DESC`);
  return rows.map((row) => {
    const view = row as ViewColumns & Pick<MessageViewRow, 'channel' | 'senderUser' | 'senderContact'>;
    view.channel = { name: row.channelName };
    view.senderUser = row.senderUserName === null ? null : { name: row.senderUserName };
    view.senderContact = row.senderContactName === null ? null : { name: row.senderContactName };
    return view;
  });
}

/** GET /messages: the acting channel's messages, newest first; search never sees encrypted content. */
export async function listMessages(ctx: RequestContext, params: { limit: number; cursor?: Cursor | undefined; filters: Record<string, string | undefined> }): Promise<Page<MessageViewRow>>;
export async function listMessages(ctx: RequestContext, params: { limit: number; cursor?: Cursor | undefined; filters: Record<string, string | undefined> }, query: PrismaQuery): Promise<Page<MessageRow>>;
export async function listMessages(
  ctx: RequestContext,
  params: { limit: number; cursor?: Cursor | undefined; filters: Record<string, string | undefined> },
  query: PrismaQuery = MESSAGE_VIEW_QUERY,
): Promise<Page<MessageViewRow | MessageRow>> {
  const channel = actingChannel(ctx.auth);
  const parsed = parseInput(messageFiltersSchema, params.filters);
  const filters = { conversationId: parsed.conversation_id?.toLowerCase(), contactId: parsed.contact_id?.toLowerCase(), search: parsed.search };
  if (query === MESSAGE_VIEW_QUERY) return toPage(await viewPage(ctx.sql, channel, filters, params), params.limit);
  const { conversationId, contactId } = filters;
  let ids: string[] | undefined;
  if (filters.search) {
    const rows = await ctx.sql<{ id: string }>(pageQuery(Prisma.raw('id'), channel.id, filters, params));
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
