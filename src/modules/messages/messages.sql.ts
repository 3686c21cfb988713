import { randomUUID } from 'node:crypto';
import { Prisma, type Channel, type Contact, type Message, type User } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import { KEYSET, isoSql, jsonObjectSql, viewFields, viewTable, type Columns } from '../../db/view.js';
import type { PageRequest } from '../../lib/pagination.js';
import { keysetSql } from '../../db/keyset.js';
import type { Actor, ActorView } from '../conversations/actor.schemas.js';
import { queueEventsSql, type QueuedEvent } from '../events/events.service.js';
import type { WriteGuard } from '../idempotency/idempotency.service.js';
import type { MediaView, MessageView, SendMessageInput } from './messages.schemas.js';
import { activeTraceparent } from '../../lib/tracing.js';

export const ENCRYPTED_PLACEHOLDER = 'Encrypted message hidden';

/** A message with the rows its sender is named from. */
export type MessageRow = Message & { channel: Pick<Channel, 'name'>; senderUser: Pick<User, 'name'> | null; senderContact?: Pick<Contact, 'name'> | null };

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
 * The rows the sender's SQL reads beside a message `alias` (written in code): its channel as
 * `channel`, its sender's user as `sender_user` and contact as `sender_contact` (or nulls).
 */
export function senderJoins(alias: string): Prisma.Sql {
  const message = Prisma.raw(alias);
  return Prisma.sql`JOIN channels AS channel ON channel.id = ${message}.channel_id
      LEFT JOIN users AS sender_user ON sender_user.id = ${message}.sender_user_id
      LEFT JOIN contacts AS sender_contact ON sender_contact.id = ${message}.sender_contact_id`;
}

const field = viewFields<MessageRow>();
const NAME = { select: { name: true } } as const;

/** What the view reads of the rows beside a message (its sender's names), as a Prisma include. */
export const MESSAGE_RELATIONS = { channel: NAME, senderUser: NAME, senderContact: NAME } as const;
const itemText = (key: string) => Prisma.sql`CASE WHEN jsonb_typeof(item.value -> ${key}::text) = 'string' THEN item.value ->> ${key}::text END`;

/**
 * The API view of a message. An encrypted message's content (the caller's ciphertext) never
 * leaves through a view: `body` is null and a placeholder is shown. In SQL the sender reads the
 * rows `senderJoins` names.
 */
export const messageTable = viewTable<MessageRow, MessageView>({
  id: field.column('id'),
  conversationId: field.column('conversationId'),
  contactId: field.column('contactId'),
  channelId: field.column('channelId'),
  direction: field.column('direction'),
  type: field.column('type'),
  body: field.derived(['isEncrypted', 'body'], visibleBody, {
    sql: (message) => Prisma.sql`CASE WHEN ${message}.is_encrypted THEN NULL::text ELSE ${message}.body END`,
  }),
  placeholder: field.derived(['isEncrypted'], (message) => (message.isEncrypted ? ENCRYPTED_PLACEHOLDER : undefined), {
    optional: true,
    sql: (message) => Prisma.sql`CASE WHEN ${message}.is_encrypted THEN ${ENCRYPTED_PLACEHOLDER}::text END`,
  }),
  isEncrypted: field.column('isEncrypted'),
  status: field.column('status'),
  failureReason: field.column('failureReason'),
  sender: field.derived(['senderType', 'senderChannelId', 'senderUserId', 'senderContactId', 'senderName', 'channel', 'senderUser', 'senderContact'], messageSender, {
    relations: MESSAGE_RELATIONS,
    sql: (message) => Prisma.sql`CASE ${message}.sender_type
      WHEN 'channel' THEN json_build_object('type', 'channel', 'id', ${message}.sender_channel_id, 'name', channel.name)
      WHEN 'user' THEN json_build_object('type', 'user', 'id', ${message}.sender_user_id, 'name', coalesce(sender_user.name, ${message}.sender_name))
      WHEN 'contact' THEN json_build_object('type', 'contact', 'id', ${message}.sender_contact_id, 'name', coalesce(sender_contact.name, ${message}.sender_name))
      ELSE json_build_object('type', 'external', 'id', NULL, 'name', ${message}.sender_name) END`,
  }),
  silent: field.column('silent'),
  mediaUrls: field.column('mediaUrls'),
  broadcastId: field.column('broadcastId'),
  media: field.derived(['media'], (message) => mediaView(message.media), {
    sql: (message) => Prisma.sql`CASE WHEN jsonb_typeof(${message}.media) = 'array' THEN coalesce((
      SELECT json_agg(json_build_object('index', item.position - 1, 'contentType', ${itemText('contentType')}, 'filename', ${itemText('filename')}) ORDER BY item.position)
        FROM jsonb_array_elements(${message}.media) WITH ORDINALITY AS item(value, position)), '[]'::json) ELSE '[]'::json END`,
  }),
  createdAt: field.timestamp('createdAt'),
});

/** A message about to be stored, with everything its row and view need except its conversation. */
export interface Outgoing {
  id: string;
  workspaceId: string;
  channel: Channel;
  contactId: string;
  input: SendMessageInput;
  content: { body: string; templateId: string | null; templateParameters: string[] | undefined };
  sender: Actor;
  at: Date;
  /** Events of the send before the message's own (a contact created, a conversation reopened). */
  events: QueuedEvent[];
  /** The broadcast making this message, if one is. */
  broadcastId?: string | null;
  /** When its delivery is due (a broadcast's turn for it); default at once. */
  runAt?: Date;
}

/** The stored row of `message` on `conversationId`, as the statement storing it wrote it. */
export function messageRow(message: Outgoing, conversationId: string): MessageRow {
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
    broadcastId: message.broadcastId ?? null,
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
 * last_message_at and last_message_id), with its delivery (the outbox), the contact's link to the
 * acting channel, and the send's events followed by `message.created`. When the
 * contact has no open conversation on the channel (or is no live contact of the
 * workspace), nothing is written and the answer is null.
 */
export async function storeMessage(
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
  const view = messageTable.view(messageRow(message, ''));
  const events = [...message.events, { type: 'message.created' as const, data: jsonObjectSql({ ...view, conversationId: Prisma.sql`message.conversation_id` }) }];
  // With an idempotency key outside a transaction: the conversation is locked first, the key
  // claimed (with its answer) only when there is one, and the write goes ahead only when claimed.
  const placeholder = guard ? randomUUID() : '';
  const update = guard
    ? Prisma.sql`
    chosen AS (SELECT id FROM conversations WHERE ${chosen} FOR UPDATE),
    claim AS (${guard.inlineClaim(messageRow(message, placeholder), placeholder, Prisma.sql`chosen`, Prisma.sql`chosen.id`)}),
    conversation AS (
      UPDATE conversations SET last_message_at = ${at}::timestamptz, last_message_id = ${message.id}::uuid, updated_at = ${at}::timestamptz
       WHERE id = (SELECT id FROM chosen) AND EXISTS (SELECT 1 FROM claim)
      RETURNING id),`
    : Prisma.sql`
    conversation AS (
      UPDATE conversations SET last_message_at = ${at}::timestamptz, last_message_id = ${message.id}::uuid, updated_at = ${at}::timestamptz
       WHERE ${chosen}
      RETURNING id),`;
  const [stored] = await sql<{ conversationId: string | null; queued: number | null; chosen: string | null }>(Prisma.sql`
    WITH ${update}
    message AS (
      INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, direction, type, body, is_encrypted, silent,
                            template_id, template_parameters, media_urls, sender_type, sender_channel_id, sender_user_id, sender_name,
                            status, broadcast_id, created_at, updated_at)
      SELECT ${message.id}::uuid, ${workspaceId}::uuid, ${channel.id}::uuid, conversation.id, ${contactId}::uuid, 'outbound',
             ${input.type}::message_type, ${content.body}, ${input.is_encrypted}, ${input.silent},
             ${content.templateId}::uuid, ${content.templateParameters ? JSON.stringify(content.templateParameters) : null}::jsonb,
             ${input.media_urls}::text[], ${sender.type}::actor_type,
             ${sender.type === 'channel' ? sender.id : null}::uuid, ${sender.type === 'user' ? sender.id : null}::uuid, ${sender.name},
             'queued', ${message.broadcastId ?? null}::uuid, ${at}::timestamptz, ${at}::timestamptz
        FROM conversation
      RETURNING id, conversation_id),
    delivery AS (
      INSERT INTO deliveries (id, workspace_id, message_id, run_at, trace_parent)
      SELECT gen_random_uuid(), ${workspaceId}::uuid, id, coalesce(${message.runAt ?? null}::timestamptz, now()), ${activeTraceparent()}::text FROM message),
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

/** The filters of a page of messages, as parsed. */
export type MessageFilters = { conversationId?: string | undefined; contactId?: string | undefined; search?: string | undefined };

/**
 * The columns of the messages of `channelIds` the filters keep, within the page's bounds, one past
 * the limit: newest first, or oldest first for a backward page (`keysetSql`).
 */
function pageSql(columns: Prisma.Sql, channelIds: readonly string[], filters: MessageFilters, params: PageRequest): Prisma.Sql {
  const keyset = keysetSql(params);
  // Full-text match through the GIN index, paged by the same keyset; encrypted messages have no
  // document, so they can never match.
  return Prisma.sql`
    SELECT ${columns} FROM messages
     WHERE ${channelIds.length === 1 ? Prisma.sql`channel_id = ${channelIds[0]}::uuid` : Prisma.sql`channel_id = ANY(${channelIds}::uuid[])`}
       ${filters.search ? Prisma.sql`AND search_vector @@ plainto_tsquery('simple'::regconfig, ${filters.search})` : Prisma.empty}
       ${filters.conversationId ? Prisma.sql`AND conversation_id = ${filters.conversationId}::uuid` : Prisma.empty}
       ${filters.contactId ? Prisma.sql`AND contact_id = ${filters.contactId}::uuid` : Prisma.empty}
       ${keyset.bounds}
     ORDER BY ${keyset.order}
     LIMIT ${params.limit + 1}`;
}

/**
 * GET /messages (and a GraphQL page of messages): a page of the acting channel's messages with
 * `columns` and, when `senders`, the names of their channel and of their sender's user or contact
 * (what the view's sender reads), in one statement.
 */
export async function messagePage(
  sql: RunSql,
  channelIds: readonly string[],
  filters: MessageFilters,
  params: PageRequest,
  columns: Columns<MessageRow>,
  senders: boolean,
): Promise<MessageRow[]> {
  const read = columns.with(KEYSET);
  if (!senders) return sql<MessageRow>(pageSql(read.sql(), channelIds, filters, params));
  const rows = await sql<MessageRow & SenderNames>(Prisma.sql`
    SELECT ${read.sql('m')}, channel.name AS "channelName", sender_user.name AS "senderUserName", sender_contact.name AS "senderContactName"
      FROM (${pageSql(read.bare(), channelIds, filters, params)}) AS m
      ${senderJoins('m')}
     ORDER BY ${keysetSql(params, 'm').order}`);
  for (const row of rows) {
    row.channel = { name: row.channelName };
    row.senderUser = row.senderUserName === null ? null : { name: row.senderUserName };
    row.senderContact = row.senderContactName === null ? null : { name: row.senderContactName };
  }
  return rows;
}

type SenderNames = { channelName: string; senderUserName: string | null; senderContactName: string | null };

/** The ids of a page of the acting channel's messages, for a read of their rows by Prisma. */
export async function messagePageIds(sql: RunSql, channelIds: readonly string[], filters: MessageFilters, params: PageRequest): Promise<string[]> {
  const rows = await sql<{ id: string }>(pageSql(Prisma.raw('id'), channelIds, filters, params));
  return rows.map((row) => row.id);
}
