import { Prisma, type Conversation, type ConversationStateChange, type User } from '../../generated/prisma/client.js';
import { PLAN_FOR_ANY_VALUE, type RunSql } from '../../db/database.js';
import { isoSql, joinedSql, viewFields, viewTable, type Joinable, type JoinedLoad } from '../../db/view.js';
import { PAGE_POSITION, type Cursor, type PageRequest } from '../../lib/pagination.js';
import { messageTable, senderJoins, type MessageRow } from '../messages/messages.sql.js';
import type { ActorView, ConversationSort, ConversationView } from './conversations.schemas.js';

export type StateChangeRow = ConversationStateChange & { actorUser?: Pick<User, 'name'> | null };

export type ConversationRow = Conversation & {
  stateChanges: StateChangeRow[];
  assignee: Pick<User, 'id' | 'name' | 'email'> | null;
  lastMessage: MessageRow | null;
};

/** Who made a state change; a user's current name wins over the name recorded then. */
export function stateChangeActor(
  change: Pick<StateChangeRow, 'actorType' | 'actorChannelId' | 'actorUserId' | 'actorContactId' | 'actorName' | 'actorUser'>,
): ActorView {
  return {
    type: change.actorType,
    id:
      change.actorType === 'channel'
        ? change.actorChannelId
        : change.actorType === 'user'
          ? change.actorUserId
          : change.actorType === 'contact'
            ? change.actorContactId
            : null,
    name: change.actorUser?.name ?? change.actorName,
  };
}

/** What the view reads of a message: its columns and its sender's names. */
const LAST_MESSAGE_QUERY = messageTable.query;

/** What the view reads of the rows beside a conversation: its state changes in order, each with its user's name; its assignee; its newest message. */
export const CONVERSATION_RELATIONS = {
  stateChanges: { orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }], include: { actorUser: { select: { name: true } } } },
  assignee: { select: { id: true, name: true, email: true } },
  lastMessage: LAST_MESSAGE_QUERY,
};

const change = viewFields<StateChangeRow>();

/** A state change as a conversation's view lists it. */
const stateChangeTable = viewTable<StateChangeRow, ConversationView['stateChanges'][number]>({
  type: change.column('type'),
  at: change.timestamp('createdAt'),
  actor: change.derived(['actorType', 'actorChannelId', 'actorUserId', 'actorContactId', 'actorName', 'actorUser'], stateChangeActor, {
    relations: CONVERSATION_RELATIONS.stateChanges.include,
  }),
});

const field = viewFields<ConversationRow>();

/**
 * The API view of a conversation with its history of state changes, its assignee and its newest
 * message. In SQL (a page of the inbox in one statement) each relation is a subquery of its own row.
 */
export const conversationTable = viewTable<ConversationRow, ConversationView>({
  id: field.column('id'),
  status: field.column('status'),
  contactId: field.column('contactId'),
  channelId: field.column('channelId'),
  assignee: field.derived(['assignee'], (conversation) => conversation.assignee && { id: conversation.assignee.id, name: conversation.assignee.name, email: conversation.assignee.email }, {
    relations: { assignee: CONVERSATION_RELATIONS.assignee },
    sql: (row) => Prisma.sql`(SELECT json_build_object('id', assignee.id, 'name', assignee.name, 'email', assignee.email) FROM users AS assignee WHERE assignee.id = ${row}.assignee_id)`,
  }),
  labels: field.column('labels'),
  unreadCount: field.column('unreadCount'),
  lastReadAt: field.timestamp('lastReadAt'),
  lastMessage: field.derived(['lastMessage'], (conversation) => (conversation.lastMessage ? messageTable.view(conversation.lastMessage) : null), {
    relations: { lastMessage: LAST_MESSAGE_QUERY },
    sql: (row) => Prisma.sql`(SELECT ${messageTable.sql('last_message')} FROM messages AS last_message ${senderJoins('last_message')} WHERE last_message.id = ${row}.last_message_id)`,
  }),
  lastMessageAt: field.timestamp('lastMessageAt'),
  closedAt: field.timestamp('closedAt'),
  createdAt: field.timestamp('createdAt'),
  stateChanges: field.derived(['stateChanges'], (conversation) => conversation.stateChanges.map(stateChangeTable.view), {
    relations: { stateChanges: CONVERSATION_RELATIONS.stateChanges },
    sql: (row) => Prisma.sql`coalesce((
      SELECT json_agg(json_build_object(
               'type', change.type,
               'at', ${isoSql(Prisma.sql`change.created_at`)},
               'actor', json_build_object(
                 'type', change.actor_type,
                 'id', CASE change.actor_type WHEN 'channel' THEN change.actor_channel_id WHEN 'user' THEN change.actor_user_id WHEN 'contact' THEN change.actor_contact_id END,
                 'name', coalesce(actor_user.name, change.actor_name)))
             ORDER BY change.created_at, change.id)
        FROM conversation_state_changes AS change
        LEFT JOIN users AS actor_user ON actor_user.id = change.actor_user_id
       WHERE change.conversation_id = ${row}.id), '[]'::json)`,
  }),
});

/** The filters of a page of conversations, as resolved: the channels listed and the rest. */
export interface ConversationPageFilters {
  channelIds: string[];
  status?: 'open' | 'closed' | undefined;
  contactId?: string | undefined;
  /** A user's id, or null for unassigned conversations. */
  assigneeId?: string | null | undefined;
  unread?: boolean | undefined;
  label?: string | undefined;
  search?: string | undefined;
  sort: ConversationSort;
}

/** The LIKE pattern matching `text` anywhere. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A value the planner is not shown (it is read by a sub-select when the statement runs): a custom
 * plan then costs what the generic plan does, and PostgreSQL settles on the generic plan of a
 * prepared statement after its first five runs instead of planning each run afresh.
 */
const unseen = (value: string | number, type: 'text' | 'int') => Prisma.sql`(SELECT ${value}::${Prisma.raw(type)})`;

/**
 * The filtered page of conversations within the page's bounds, one past the limit, with all their
 * columns and their order key as `key`: newest (conversation or activity) first, or for a backward
 * page oldest first (`toPage` flips it).
 */
function pageRowsSql(workspaceId: string, filters: ConversationPageFilters, params: PageRequest): Prisma.Sql {
  const { cursor, before } = params;
  const key = filters.sort === 'last_message' ? Prisma.raw('c.last_message_at') : Prisma.raw('c.created_at');
  const order = params.backward ? Prisma.sql`${key} ASC, c.id ASC` : Prisma.sql`${key} DESC, c.id DESC`;
  // The search's words (full text) and its substring pattern (ILIKE).
  const search = filters.search ? { words: unseen(filters.search, 'text'), pattern: unseen(containing(filters.search), 'text') } : undefined;
  return Prisma.sql`
        SELECT c.*, ${key} AS key FROM conversations AS c
         WHERE c.workspace_id = ${workspaceId}::uuid
           AND ${
             // One channel (the usual case) is an equality, so its index serves the order too.
             filters.channelIds.length === 1 ? Prisma.sql`c.channel_id = ${filters.channelIds[0]}::uuid` : Prisma.sql`c.channel_id = ANY(${filters.channelIds}::uuid[])`
           }
           ${filters.status ? Prisma.sql`AND c.status = ${filters.status}::conversation_status` : Prisma.empty}
           ${filters.contactId ? Prisma.sql`AND c.contact_id = ${filters.contactId}::uuid` : Prisma.empty}
           ${filters.assigneeId === null ? Prisma.sql`AND c.assignee_id IS NULL` : filters.assigneeId ? Prisma.sql`AND c.assignee_id = ${filters.assigneeId}::uuid` : Prisma.empty}
           ${filters.unread ? Prisma.sql`AND c.unread_count > 0` : Prisma.empty}
           ${filters.label ? Prisma.sql`AND c.labels @> ARRAY[${filters.label}]::text[]` : Prisma.empty}
           ${
             search
               ? // Messages through their full-text index (encrypted ones have none), contacts through their trigram
                 // indexes, each into an array; the conversations then by those arrays' keys (their id, their contact:
                 // two index scans, OR'd as bitmaps) and sorted. The planner sizes an array alike whatever the term, so
                 // every term gets this plan (read from its matches, never by walking the channel's conversations in
                 // order) and the statement can be prepared: no parsing per request, no plan a term could turn. The
                 // term, the patterns and the limit are `unseen`, so that its plan is reused rather than made afresh.
                 Prisma.sql`AND ${Prisma.raw(PLAN_FOR_ANY_VALUE)} (c.id = ANY(ARRAY(
                                   SELECT m.conversation_id FROM messages AS m
                                    WHERE m.workspace_id = ${workspaceId}::uuid AND m.search_vector @@ plainto_tsquery('simple'::regconfig, ${search.words})))
                             OR c.contact_id = ANY(ARRAY(
                                   SELECT contact.id FROM contacts AS contact
                                    WHERE contact.workspace_id = ${workspaceId}::uuid AND (contact.name ILIKE ${search.pattern} OR contact.email ILIKE ${search.pattern})
                                   UNION ALL
                                   SELECT phone.contact_id FROM contact_phones AS phone
                                    WHERE phone.workspace_id = ${workspaceId}::uuid AND phone.number ILIKE ${search.pattern})))`
               : Prisma.empty
           }
           ${cursor ? Prisma.sql`AND (${key}, c.id) < (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)` : Prisma.empty}
           ${before ? Prisma.sql`AND (${key}, c.id) > (${before.createdAt}::timestamptz, ${before.id}::uuid)` : Prisma.empty}
         ORDER BY ${order}
         LIMIT ${search ? unseen(params.limit + 1, 'int') : params.limit + 1}`;
}

/** The order of the rows of `pageRowsSql` read by a statement around it, as `page`. */
const pageOrder = (params: PageRequest) => (params.backward ? Prisma.sql`page.key ASC, page.id ASC` : Prisma.sql`page.key DESC, page.id DESC`);

/**
 * A page of conversations in one statement: the ids and keys of the filtered page, one past the
 * limit, each (`withView`) with its whole view built in SQL (assignee, labels, unread count, newest
 * message with its sender, state changes).
 */
export async function conversationPage(
  sql: RunSql,
  workspaceId: string,
  filters: ConversationPageFilters,
  params: PageRequest,
  withView: boolean,
): Promise<{ id: string; createdAt: Date; view: ConversationView }[]> {
  const rows = await sql<{ id: string; key: Date; view: ConversationView }>(Prisma.sql`
    SELECT page.id, page.key, ${withView ? conversationTable.sql('page') : Prisma.sql`NULL::json`} AS view
      FROM (${pageRowsSql(workspaceId, filters, params)}) AS page
     ORDER BY ${pageOrder(params)}`);
  return rows.map((row) => ({ id: row.id, createdAt: new Date(row.key), view: row.view }));
}

/**
 * The to-one relations a page of conversations may read in its own statement: its assignee, its
 * contact, and its newest message with the rows its sender is named from.
 */
export const CONVERSATION_JOINS = {
  assignee: { table: 'users', on: 'assigneeId' },
  contact: { table: 'contacts', on: 'contactId' },
  lastMessage: {
    table: 'messages',
    on: 'lastMessageId',
    joins: {
      channel: { table: 'channels', on: 'channelId' },
      senderUser: { table: 'users', on: 'senderUserId' },
      senderContact: { table: 'contacts', on: 'senderContactId' },
    },
  },
} as const satisfies Record<string, Joinable>;

/**
 * A page of conversations as rows (GraphQL), in one statement: the filtered page of `pageRowsSql`
 * with the columns and joined relations `load` reads, each row carrying the position its page
 * continues from (its order key).
 */
export async function conversationRows(
  sql: RunSql,
  workspaceId: string,
  filters: ConversationPageFilters,
  params: PageRequest,
  load: JoinedLoad<ConversationRow>,
): Promise<ConversationRow[]> {
  const read = joinedSql(load, 'page');
  const rows = await sql<Record<string, unknown> & { pageKey: Date | null }>(Prisma.sql`
    SELECT page.key AS "pageKey", ${read.select}
      FROM (${pageRowsSql(workspaceId, filters, params)}) AS page
      ${read.joins}
     ORDER BY ${pageOrder(params)}`);
  return rows.map((row) => {
    const conversation = read.shape(row) as ConversationRow & { [PAGE_POSITION]?: Cursor };
    // A conversation without a message yet has no activity time: its page continues from its creation.
    conversation[PAGE_POSITION] = { createdAt: row.pageKey ?? conversation.createdAt, id: conversation.id };
    return conversation;
  });
}

/** SQL yielding the view of conversation `id` as JSON (an event's data, read by the statement that queues it). */
export function conversationViewSql(id: string): Prisma.Sql {
  return Prisma.sql`(SELECT ${conversationTable.sql('conversation')} FROM conversations AS conversation WHERE conversation.id = ${id}::uuid)`;
}
