import { Prisma, type ConversationStateChangeType } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import type { AuthContext, RequestContext } from '../../context/types.js';
import { readableChannelIds } from '../../context/request.js';
import { NotFoundError, ValidationError } from '../../errors/domain.js';
import { PAGE_POSITION, toPage, type Cursor, type Page, type PageRequest } from '../../lib/pagination.js';
import { isUuid } from '../../lib/uuid.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PrismaQuery } from '../../db/query.js';
import { parseInput } from '../../lib/validation.js';
import { KEYSET, pageArgs, type JoinedLoad, type RowLoad } from '../../db/view.js';
import {
  LABEL_LIMITS,
  assignConversationSchema,
  conversationFiltersSchema,
  markReadSchema,
  updateLabelsSchema,
  type ConversationSort,
  type ConversationView,
} from './conversations.schemas.js';
import { conversationPage, conversationRows, conversationTable, conversationViewSql, type ConversationPageFilters, type ConversationRow } from './conversations.sql.js';
import { recordEvents, type QueuedEvent } from '../events/events.service.js';
import type { Actor } from './actor.schemas.js';
import { activeTraceparent } from '../../lib/tracing.js';

/** Who did something: the acting channel, a workspace user, a named external actor, or a contact (a reply). */
export type { Actor };

export function actorColumns(actor: Actor) {
  return {
    actorType: actor.type,
    actorChannelId: actor.type === 'channel' ? actor.id : null,
    actorUserId: actor.type === 'user' ? actor.id : null,
    actorContactId: actor.type === 'contact' ? actor.id : null,
    actorName: actor.name,
  };
}

async function recordChange(db: Db, conversationId: string, type: ConversationStateChangeType, actor: Actor) {
  await db.conversationStateChange.create({ data: { conversationId, type, ...actorColumns(actor) } });
}

/**
 * The conversation a send lands on (docs/conventions.md, Views): the open one of this contact and
 * channel; else the `preferred` closed one or the latest, kept closed when `silent`, otherwise
 * reopened with a `reopened` state change (and `conversation.reopened` added to
 * `events`); else a new open conversation. The chosen row is locked for the rest
 * of the transaction; the statement storing the message sets its last_message_at.
 */
export async function conversationForSend(
  tx: Db,
  input: {
    workspaceId: string;
    channelId: string;
    contactId: string;
    silent: boolean;
    actor: Actor;
    at: Date;
    events?: QueuedEvent[];
    /** A conversation of this channel and contact to prefer over other closed ones (the thread an email answers). */
    preferred?: string | undefined;
  },
): Promise<{ id: string }> {
  const { workspaceId, channelId, contactId } = input;
  const [latest] = await tx.$queryRaw<{ id: string; status: 'open' | 'closed' }[]>`
    SELECT id, status FROM conversations
     WHERE channel_id = ${channelId}::uuid AND contact_id = ${contactId}::uuid
     ORDER BY (status = 'open') DESC, (id = ${input.preferred ?? null}::uuid) IS TRUE DESC, created_at DESC, id DESC
     LIMIT 1
     FOR UPDATE`;
  if (latest && (latest.status === 'open' || input.silent)) return { id: latest.id };
  if (latest) {
    await recordChange(tx, latest.id, 'reopened', input.actor);
    const reopened = await tx.conversation.update({
      where: { id: latest.id },
      data: { status: 'open', closedAt: null, lastMessageAt: input.at },
      select: { id: true },
    });
    input.events?.push({ type: 'conversation.reopened', data: conversationViewSql(reopened.id) });
    return reopened;
  }
  const created = await tx.conversation.create({
    data: { workspaceId, channelId, contactId, status: 'open', lastMessageAt: input.at },
  });
  await recordChange(tx, created.id, 'opened', input.actor);
  return created;
}

/** Who a change to a conversation of `channelId` is recorded as made by: a session's user (docs/browser-apps.md), else that channel. */
function changeActor(ctx: RequestContext, channelId: string): Actor {
  const user = ctx.auth.credential.user;
  if (user) return { type: 'user', id: user.id, name: user.name };
  const channel = ctx.auth.channels.find((candidate) => candidate.id === channelId)!;
  return { type: 'channel', id: channel.id, name: channel.name };
}

/**
 * Whether the conversation (its assignee's id) is assigned to the caller's user: a session's user;
 * a backend credential has none, so never (docs/inbox.md).
 */
export function isAssignedTo(assigneeId: string | null | undefined, auth: AuthContext): boolean {
  return !!assigneeId && auth.credential.user?.id === assigneeId;
}

/**
 * A conversation the caller can read, or NotFound (malformed ids included): of the acting channel,
 * or — for a credential of several channels that named none — of any of them, its own channel
 * deciding (docs/inbox.md).
 */
export async function getConversation(
  ctx: RequestContext,
  id: string,
  query: PrismaQuery = conversationTable.query,
): Promise<ConversationRow> {
  const channelIds = readableChannelIds(ctx.auth);
  const conversation = isUuid(id)
    ? await ctx.prisma.conversation.findFirst({
        ...query,
        where: { id: id.toLowerCase(), workspaceId: ctx.auth.workspace.id, channelId: channelIds.length === 1 ? channelIds[0]! : { in: channelIds } },
      })
    : null;
  if (!conversation) throw new NotFoundError('Conversation');
  return conversation as ConversationRow;
}

/** Closes or reopens a conversation; already in that state is a no-op without a state change. */
export async function setConversationStatus(
  ctx: RequestContext,
  id: string,
  target: 'open' | 'closed',
  query?: PrismaQuery,
): Promise<ConversationRow> {
  const { id: conversationId, channelId } = await getConversation(ctx, id, { select: { id: true, channelId: true } });
  const actor = changeActor(ctx, channelId);
  const conflict = () =>
    ValidationError.field('id', 'The contact already has an open conversation on this channel.');
  let changed: boolean;
  let queued = 0;
  try {
    changed = await ctx.prisma.$transaction(async (tx) => {
      const [row] = await tx.$queryRaw<{ status: 'open' | 'closed'; channel_id: string; contact_id: string }[]>`
        SELECT status, channel_id, contact_id FROM conversations WHERE id = ${conversationId}::uuid FOR UPDATE`;
      if (!row || row.status === target) return false;
      if (target === 'open') {
        // Only one conversation per contact and channel may be open.
        const open = await tx.conversation.findFirst({
          where: { channelId: row.channel_id, contactId: row.contact_id, status: 'open' },
          select: { id: true },
        });
        if (open) throw conflict();
      }
      await recordChange(tx, conversationId, target === 'closed' ? 'closed' : 'reopened', actor);
      await tx.conversation.update({
        where: { id: conversationId },
        data: target === 'closed' ? { status: 'closed', closedAt: new Date() } : { status: 'open', closedAt: null },
        select: { id: true },
      });
      const type = target === 'closed' ? 'conversation.closed' : 'conversation.reopened';
      queued = await recordEvents(tx, ctx.auth.workspace.id, [{ type, data: conversationViewSql(conversationId) }]);
      return true;
    });
  } catch (error) {
    // A concurrent reopen or send opened another conversation of the pair first.
    if (isUniqueViolation(error)) throw conflict();
    throw error;
  }
  if (queued > 0) ctx.onMessageQueued?.();
  if (changed) ctx.events?.publish({ type: 'conversation.updated', conversationId, workspaceId: ctx.auth.workspace.id, channelId });
  return getConversation(ctx, conversationId, query);
}

/** The filters of a list of conversations as a caller gives them (REST query names). */
export interface ConversationListParams extends PageRequest {
  status?: string | null | undefined;
  contactId?: string | null | undefined;
  /** A user's id or email, or `none`. */
  assignee?: string | null | undefined;
  unread?: boolean | null | undefined;
  label?: string | null | undefined;
  search?: string | null | undefined;
  sort?: string | null | undefined;
  channelId?: string | null | undefined;
}

const defined = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

/**
 * The filters of a list of conversations, checked and resolved: the channels listed are the
 * acting channel, or — for a credential of several channels that named none — all of them
 * (`channel_id` narrows to one it can act as); an assignee named by email is looked up.
 */
async function pageFilters(ctx: RequestContext, params: ConversationListParams): Promise<ConversationPageFilters> {
  const filters = parseInput(conversationFiltersSchema, {
    status: defined(params.status),
    contact_id: defined(params.contactId),
    assignee: defined(params.assignee),
    unread: params.unread == null ? undefined : String(params.unread),
    label: defined(params.label),
    search: defined(params.search),
    sort: defined(params.sort),
    channel_id: defined(params.channelId),
  });
  let channelIds = readableChannelIds(ctx.auth);
  if (filters.channel_id) {
    const wanted = filters.channel_id.toLowerCase();
    if (!channelIds.includes(wanted)) throw ValidationError.field('channel_id', 'The channel_id must be a channel this credential can act as.');
    channelIds = [wanted];
  }
  let assigneeId: string | null | undefined;
  if (filters.assignee !== undefined) {
    if (filters.assignee.toLowerCase() === 'none') assigneeId = null;
    else if (isUuid(filters.assignee)) assigneeId = filters.assignee.toLowerCase();
    else {
      const user = await findWorkspaceUser(ctx, filters.assignee);
      if (!user) throw ValidationError.field('assignee', 'The assignee must be a user of this workspace (id or email), or none.');
      assigneeId = user.id;
    }
  }
  return {
    channelIds,
    status: filters.status,
    contactId: filters.contact_id?.toLowerCase(),
    assigneeId,
    unread: filters.unread === 'true' ? true : undefined,
    label: filters.label?.toLowerCase(),
    search: filters.search || undefined,
    sort: (filters.sort ?? 'created') as ConversationSort,
  };
}

/**
 * GET /conversations: a page of the conversations the caller lists, newest first (or newest
 * activity first), each as its view — one statement however many rows.
 */
export async function listConversationViews(ctx: RequestContext, params: ConversationListParams): Promise<Page<{ id: string; createdAt: Date; view: ConversationView }>> {
  const filters = await pageFilters(ctx, params);
  const rows = await conversationPage(ctx.sql, ctx.auth.workspace.id, filters, params, true);
  return toPage(rows, params.limit);
}

/** Prisma `where` for the rows within a page's bounds (`after`, `before`) in the page's order. */
function keyBounds(sort: ConversationSort, page: PageRequest) {
  const key = sort === 'last_message' ? 'lastMessageAt' : 'createdAt';
  const beyond = (cursor: Cursor, op: 'lt' | 'gt') => ({ OR: [{ [key]: { [op]: cursor.createdAt } }, { [key]: cursor.createdAt, id: { [op]: cursor.id } }] });
  return [page.cursor ? beyond(page.cursor, 'lt') : {}, page.before ? beyond(page.before, 'gt') : {}];
}

const orderOf = (sort: ConversationSort, direction: 'asc' | 'desc') =>
  sort === 'last_message' ? [{ lastMessageAt: direction }, { id: direction }] : [{ createdAt: direction }, { id: direction }];

/** Reads of a page by column alone, as the joined reads they are (made once per list of columns). */
const unjoined = new WeakMap<object, JoinedLoad<ConversationRow>>();

/**
 * A page of conversations (GraphQL), each read as `load` says (what the selection reads): named
 * columns, or with them the assignee, contact and newest message (`CONVERSATION_JOINS`), are the
 * one statement REST's page is, filters and search included; another relation is Prisma's read of
 * the page's rows (a search first finds the page's ids in SQL).
 */
export async function listConversations(
  ctx: RequestContext,
  params: ConversationListParams,
  load: RowLoad<ConversationRow> | JoinedLoad<ConversationRow>,
): Promise<Page<ConversationRow>> {
  const filters = await pageFilters(ctx, params);
  if ('columns' in load) {
    let joined: JoinedLoad<ConversationRow> | undefined = 'joins' in load ? load : unjoined.get(load);
    if (!joined) unjoined.set(load, (joined = { columns: load.columns.with(KEYSET), joins: {} }));
    return toPage(await conversationRows(ctx.sql, ctx.auth.workspace.id, filters, params, joined), params);
  }
  if (filters.search) {
    const keys = await conversationPage(ctx.sql, ctx.auth.workspace.id, filters, params, false);
    const page = toPage(keys, params);
    if (page.items.length === 0) return { ...page, items: [] };
    const rows = (await ctx.prisma.conversation.findMany({ ...pageArgs(load), where: { id: { in: page.items.map((key) => key.id) } } })) as ConversationRow[];
    const byId = new Map(rows.map((row) => [row.id, row]));
    const items = page.items.flatMap((key) => {
      const row = byId.get(key.id) as (ConversationRow & { [PAGE_POSITION]?: Cursor }) | undefined;
      if (row) row[PAGE_POSITION] = { createdAt: key.createdAt, id: key.id };
      return row ? [row] : [];
    });
    return { ...page, items };
  }
  const query = pageArgs(load);
  const select = 'select' in query && query.select ? { ...query, select: { ...query.select, lastMessageAt: true } } : query;
  const rows = (await ctx.prisma.conversation.findMany({
    ...select,
    where: {
      AND: [
        { workspaceId: ctx.auth.workspace.id, channelId: filters.channelIds.length === 1 ? filters.channelIds[0]! : { in: filters.channelIds } },
        filters.status ? { status: filters.status } : {},
        filters.contactId ? { contactId: filters.contactId } : {},
        filters.assigneeId !== undefined ? { assigneeId: filters.assigneeId } : {},
        filters.unread ? { unreadCount: { gt: 0 } } : {},
        filters.label ? { labels: { has: filters.label } } : {},
        ...keyBounds(filters.sort, params),
      ],
    },
    orderBy: orderOf(filters.sort, params.backward ? 'asc' : 'desc'),
    take: params.limit + 1,
  })) as ConversationRow[];
  // The cursor is made of the page's order key: for newest activity, the time of the last message.
  if (filters.sort === 'last_message') {
    for (const row of rows) (row as ConversationRow & { [PAGE_POSITION]?: Cursor })[PAGE_POSITION] = { createdAt: row.lastMessageAt ?? row.createdAt, id: row.id };
  }
  return toPage(rows, params);
}

/** A workspace user by id or email (matched without case), or null. */
export async function findWorkspaceUser(ctx: RequestContext, idOrEmail: string): Promise<{ id: string; name: string; email: string } | null> {
  const value = idOrEmail.trim();
  const where = isUuid(value) ? { id: value.toLowerCase() } : { emailNormalized: idOrEmail.trim().toLowerCase() };
  return ctx.prisma.user.findFirst({ where: { workspaceId: ctx.auth.workspace.id, ...where }, select: { id: true, name: true, email: true } });
}

/** Runs a change to one conversation in a transaction holding its row, then announces it. */
async function changeConversation(
  ctx: RequestContext,
  id: string,
  change: (tx: Db, conversationId: string) => Promise<{ type: 'conversation.assigned' | 'conversation.read' | 'conversation.labels_changed'; after?: (tx: Db) => Promise<void> } | null>,
  query?: PrismaQuery,
): Promise<ConversationRow> {
  const { id: conversationId, channelId } = await getConversation(ctx, id, { select: { id: true, channelId: true } });
  let queued = 0;
  const changed = await ctx.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM conversations WHERE id = ${conversationId}::uuid FOR UPDATE`;
    const done = await change(tx, conversationId);
    if (!done) return false;
    queued = await recordEvents(tx, ctx.auth.workspace.id, [{ type: done.type, data: conversationViewSql(conversationId) }]);
    await done.after?.(tx);
    return true;
  });
  if (queued > 0 || changed) ctx.onMessageQueued?.();
  if (changed) ctx.events?.publish({ type: 'conversation.updated', conversationId, workspaceId: ctx.auth.workspace.id, channelId });
  return getConversation(ctx, conversationId, query);
}

/** POST /conversations/{id}/assign: assigns to a workspace user (id or email) or, with null, unassigns; a state change records it. */
export async function assignConversation(ctx: RequestContext, id: string, input: unknown, query?: PrismaQuery): Promise<ConversationRow> {
  const body = parseInput(assignConversationSchema, input);
  // The conversation first: an unknown conversation is a 404 whatever the body names.
  const { channelId } = await getConversation(ctx, id, { select: { id: true, channelId: true } });
  const user = body.user === null ? null : await findWorkspaceUser(ctx, body.user);
  if (body.user !== null && !user) throw ValidationError.field('user', 'The user must be a user of this workspace (id or email).');
  const actor = changeActor(ctx, channelId);
  return changeConversation(
    ctx,
    id,
    async (tx, conversationId) => {
      const current = await tx.conversation.findUniqueOrThrow({ where: { id: conversationId }, select: { assigneeId: true } });
      const target = user?.id ?? null;
      if (current.assigneeId === target) return null;
      await recordChange(tx, conversationId, target ? 'assigned' : 'unassigned', actor);
      await tx.conversation.update({ where: { id: conversationId }, data: { assigneeId: target } });
      return { type: 'conversation.assigned' };
    },
    query,
  );
}

/**
 * How a receipt queued for a conversation that already has one pending takes its place: the new
 * payload, its attempts afresh, taken from a worker attempting it (whose outcome is then not
 * recorded). The end of a receipt's INSERT, for read receipts and typing indicators alike.
 */
export const REPLACING_PENDING_RECEIPT = Prisma.sql`
    ON CONFLICT (conversation_id) WHERE status = 'pending'
    DO UPDATE SET payload = EXCLUDED.payload, attempts = 0, run_at = now(), locked_by = NULL, locked_until = NULL, last_error = NULL, updated_at = now()`;

/**
 * A receipt's message, as a LATERAL subquery: the latest inbound message of the conversation whose
 * id is `conversationId` (an SQL expression of the outer query), created at or before `through`
 * when given, with its `created_at` and the id its provider gave it on `channelId`'s channel.
 */
export function latestInboundSql(conversationId: Prisma.Sql, channelId: Prisma.Sql, through: Date | null = null): Prisma.Sql {
  return Prisma.sql`
    CROSS JOIN LATERAL (
           SELECT m.created_at,
                  (SELECT p.provider_id FROM provider_message_ids AS p WHERE p.message_id = m.id AND p.channel_id = ${channelId} ORDER BY p.part LIMIT 1) AS provider_id
             FROM messages AS m
            WHERE m.conversation_id = ${conversationId} AND m.direction = 'inbound'${through ? Prisma.sql` AND m.created_at <= ${through}::timestamptz` : Prisma.empty}
            ORDER BY m.created_at DESC, m.id DESC
            LIMIT 1) AS latest`;
}

/**
 * Queues, in the transaction that moved the conversation's read state from `previous` to
 * `through`, the read receipt of a channel whose provider takes them (`readReceipts`): the provider id of the latest
 * inbound message read, when that message is newly read and has one. A conversation has at most
 * one pending receipt: a newer read replaces the message it names and starts its attempts afresh,
 * and takes it from a worker attempting it (whose outcome is then not recorded), so the newest
 * read is the one reported. A receipt is retried like a message and never touches a message.
 */
async function queueReadReceipt(tx: Db, providers: string[], conversationId: string, previous: Date | null, through: Date): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO deliveries (id, workspace_id, conversation_id, payload, trace_parent)
    SELECT gen_random_uuid(), c.workspace_id, c.id, json_build_object('message_id', latest.provider_id), ${activeTraceparent()}::text
      FROM conversations AS c
      JOIN channels AS channel ON channel.id = c.channel_id AND channel.provider = ANY(${providers}::text[])
    ${latestInboundSql(Prisma.raw('c.id'), Prisma.raw('c.channel_id'), through)}
     WHERE c.id = ${conversationId}::uuid
       AND latest.provider_id IS NOT NULL
       AND (${previous}::timestamptz IS NULL OR latest.created_at > ${previous}::timestamptz)
    ${REPLACING_PENDING_RECEIPT}`;
}

/**
 * POST /conversations/{id}/read: the conversation is read up to `through` (a message of it;
 * default its latest message) — never back. Read state is the conversation's, not a user's. On a
 * channel whose provider takes read receipts, the receipt is queued with the change (the outbox
 * sends it; the answer never waits for it).
 */
export async function markConversationRead(ctx: RequestContext, id: string, input: unknown, query?: PrismaQuery): Promise<ConversationRow> {
  const body = parseInput(markReadSchema, input ?? {}) ?? {};
  const { id: conversationId } = await getConversation(ctx, id, { select: { id: true } });
  const receipts = ctx.providers.filter((provider) => provider.readReceipts).map((provider) => provider.name);
  let through: Date | null = null;
  if (body.through != null) {
    const message = isUuid(body.through)
      ? await ctx.prisma.message.findFirst({ where: { id: body.through.toLowerCase(), conversationId }, select: { createdAt: true } })
      : null;
    if (!message) throw ValidationError.field('through', 'The through message must be a message of this conversation.');
    through = message.createdAt;
  }
  return changeConversation(
    ctx,
    conversationId,
    async (tx) => {
      const [latest] = await tx.$queryRaw<{ at: Date | null; read: Date | null }[]>`
        SELECT (SELECT max(created_at) FROM messages WHERE conversation_id = ${conversationId}::uuid) AS at,
               (SELECT last_read_at FROM conversations WHERE id = ${conversationId}::uuid) AS read`;
      const target = through ?? latest?.at ?? null;
      if (!target || (latest?.read && latest.read >= target)) return null;
      await tx.$executeRaw`
        UPDATE conversations
           SET last_read_at = ${target}::timestamptz,
               unread_count = (SELECT count(*) FROM messages WHERE conversation_id = ${conversationId}::uuid AND direction = 'inbound' AND created_at > ${target}::timestamptz),
               updated_at = now()
         WHERE id = ${conversationId}::uuid`;
      return { type: 'conversation.read', after: (db: Db) => queueReadReceipt(db, receipts, conversationId, latest?.read ?? null, target) };
    },
    query,
  );
}

/** Runs a parse whose field errors are reported on their top-level field (`add`, not `add.3`). */
function topLevelErrors<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const errors: Record<string, string[]> = {};
    for (const [key, messages] of Object.entries(error.errors)) {
      const list = (errors[key.split('.')[0]!] ??= []);
      for (const message of messages) if (!list.includes(message)) list.push(message);
    }
    throw new ValidationError(errors);
  }
}

/**
 * POST /conversations/{id}/labels: adds and removes labels (trimmed, lowercased; at most 20).
 * The change is made on the locked row, so concurrent changes never lose one another.
 */
export async function updateConversationLabels(ctx: RequestContext, id: string, input: unknown, query?: PrismaQuery): Promise<ConversationRow> {
  const body = topLevelErrors(() => parseInput(updateLabelsSchema, input));
  const add = [...new Set(body.add ?? [])];
  const remove = new Set(body.remove ?? []);
  return changeConversation(
    ctx,
    id,
    async (tx, conversationId) => {
      const current = await tx.conversation.findUniqueOrThrow({ where: { id: conversationId }, select: { labels: true } });
      const next = [...new Set([...current.labels, ...add])].filter((label) => !remove.has(label)).sort();
      if (next.length > LABEL_LIMITS.perConversation && next.length > current.labels.length) {
        throw ValidationError.field('add', `A conversation has at most ${LABEL_LIMITS.perConversation} labels.`);
      }
      if (next.length === current.labels.length && next.every((label, i) => label === current.labels[i])) return null;
      await tx.conversation.update({ where: { id: conversationId }, data: { labels: next } });
      return { type: 'conversation.labels_changed' };
    },
    query,
  );
}
