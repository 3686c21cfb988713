import type { ConversationStateChangeType } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import type { RequestContext } from '../../context/types.js';
import { actingChannel } from '../../context/request.js';
import { NotFoundError, ValidationError } from '../../errors/domain.js';
import { keysetOrder, keysetWhere, toPage, type Page, type PageRequest } from '../../lib/pagination.js';
import { isUuid } from '../../lib/uuid.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PrismaQuery } from '../../db/query.js';
import { pageArgs, type RowLoad } from '../../db/view.js';
import { parseInput } from '../../lib/validation.js';
import { conversationFiltersSchema } from './conversations.schemas.js';
import { CONVERSATION_RELATIONS, conversationTable, type ConversationRow } from './conversations.sql.js';
import { recordEvents, type DomainEvent } from '../events/events.service.js';

/** Who did something: the acting channel, a workspace user, a named external actor, or a contact (a reply). */
export type Actor =
  | { type: 'channel'; id: string; name: string }
  | { type: 'user'; id: string; name: string }
  | { type: 'external'; id: null; name: string }
  | { type: 'contact'; id: string; name: string };

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
 * The conversation a send lands on (CONTRACT §3): the open one of this contact and
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
    events?: DomainEvent[];
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
      include: CONVERSATION_RELATIONS,
    });
    input.events?.push({ type: 'conversation.reopened', data: conversationTable.view(reopened) });
    return reopened;
  }
  const created = await tx.conversation.create({
    data: { workspaceId, channelId, contactId, status: 'open', lastMessageAt: input.at },
  });
  await recordChange(tx, created.id, 'opened', input.actor);
  return created;
}

/** Who a change is recorded as made by: a session's user (CONTRACT §7), else the acting channel. */
function channelActor(ctx: RequestContext): Actor {
  const channel = actingChannel(ctx.auth);
  const user = ctx.auth.credential.user;
  if (user) return { type: 'user', id: user.id, name: user.name };
  return { type: 'channel', id: channel.id, name: channel.name };
}

/** A conversation of the acting channel, or NotFound (malformed ids included). */
export async function getConversation(
  ctx: RequestContext,
  id: string,
  query: PrismaQuery = conversationTable.query,
): Promise<ConversationRow> {
  const channel = actingChannel(ctx.auth);
  const conversation = isUuid(id)
    ? await ctx.prisma.conversation.findFirst({
        ...query,
        where: { id: id.toLowerCase(), workspaceId: ctx.auth.workspace.id, channelId: channel.id },
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
  const actor = channelActor(ctx);
  const { id: conversationId } = await getConversation(ctx, id, { select: { id: true } });
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
      const updated = await tx.conversation.update({
        where: { id: conversationId },
        data: target === 'closed' ? { status: 'closed', closedAt: new Date() } : { status: 'open', closedAt: null },
        include: CONVERSATION_RELATIONS,
      });
      const type = target === 'closed' ? 'conversation.closed' : 'conversation.reopened';
      queued = await recordEvents(tx, ctx.auth.workspace.id, [{ type, data: conversationTable.view(updated) }]);
      return true;
    });
  } catch (error) {
    // A concurrent reopen or send opened another conversation of the pair first.
    if (isUniqueViolation(error)) throw conflict();
    throw error;
  }
  if (queued > 0) ctx.onMessageQueued?.();
  if (changed) ctx.events?.publish({ type: 'conversation.updated', conversationId, workspaceId: ctx.auth.workspace.id, channelId: actingChannel(ctx.auth).id });
  return getConversation(ctx, conversationId, query);
}

/** What GET /conversations reads of each conversation: what its view reads. */
const CONVERSATION_VIEW: RowLoad<ConversationRow> = { query: conversationTable.query };

/** Conversations of the acting channel, newest first (a backward page from the end), each with what `load` says. */
export async function listConversations(
  ctx: RequestContext,
  params: PageRequest & { status?: string | null; contactId?: string | null },
  load: RowLoad<ConversationRow> = CONVERSATION_VIEW,
): Promise<Page<ConversationRow>> {
  const channel = actingChannel(ctx.auth);
  const filters = parseInput(conversationFiltersSchema, { status: params.status ?? undefined, contact_id: params.contactId ?? undefined });
  const rows = await ctx.prisma.conversation.findMany({
    ...pageArgs(load),
    where: {
      AND: [
        { workspaceId: ctx.auth.workspace.id, channelId: channel.id },
        filters.status ? { status: filters.status } : {},
        filters.contact_id ? { contactId: filters.contact_id.toLowerCase() } : {},
        keysetWhere(params),
      ],
    },
    orderBy: keysetOrder(params),
    take: params.limit + 1,
  });
  return toPage(rows as ConversationRow[], params);
}
