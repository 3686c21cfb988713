import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import { pageLoader } from '../../graphql/rows.js';
import { connectionType, connectionComplexity, pageArgs, pageFromArgs } from '../../graphql/connection.js';
import { accepted, asPayload, orNull } from '../../graphql/results.js';
import { toUserErrors } from '../../graphql/errors.js';
import { payloadType, type Payload } from '../../graphql/user-errors.js';
import { UserObject } from '../users/users.graphql.js';
import { conversationEvents } from '../../context/request.js';
import { ActorType, ConversationStateChangeType, ConversationStatus } from '../../generated/prisma/enums.js';
import {
  assignConversation,
  getConversation,
  listConversations,
  markConversationRead,
  setConversationStatus,
  updateConversationLabels,
} from './conversations.service.js';
import { CONVERSATION_SORTS } from './conversations.schemas.js';
import { isAssignedTo } from './conversations.service.js';
import { CONVERSATION_JOINS, CONVERSATION_RELATIONS, stateChangeActor, type ConversationRow } from './conversations.sql.js';
import type { ActorView } from './conversations.schemas.js';

export const ActorTypeEnum = builder.enumType(ActorType, { name: 'ActorType' });
export const ConversationStatusEnum = builder.enumType(ConversationStatus, { name: 'ConversationStatus' });
const StateChangeTypeEnum = builder.enumType(ConversationStateChangeType, { name: 'StateChangeType' });
const ConversationSortEnum = builder.enumType('ConversationSort', {
  description: 'How conversations are ordered: `created` (newest conversation first) or `last_message` (newest activity first).',
  values: CONVERSATION_SORTS,
});

export const Actor = builder.objectRef<ActorView>('Actor').implement({
  description: 'Who did something: the channel, a workspace user, or an external actor (no id).',
  fields: (t) => ({
    type: t.field({ type: ActorTypeEnum, resolve: (a) => a.type }),
    id: t.exposeID('id', { nullable: true }),
    name: t.exposeString('name', { nullable: true }),
  }),
});

const StateChange = builder.prismaObject('ConversationStateChange', {
  name: 'StateChange',
  fields: (t) => ({
    type: t.expose('type', { type: StateChangeTypeEnum }),
    at: t.expose('createdAt', { type: 'DateTime' }),
    actor: t.field({ type: Actor, select: CONVERSATION_RELATIONS.stateChanges.include, resolve: (change) => stateChangeActor(change) }),
  }),
});

export const ConversationObject = builder.prismaObject('Conversation', {
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.expose('status', { type: ConversationStatusEnum }),
    contactId: t.exposeID('contactId'),
    channelId: t.exposeID('channelId'),
    assignee: t.field({
      type: UserObject,
      nullable: true,
      description: 'The workspace user the conversation is assigned to.',
      select: { assignee: { select: { id: true, name: true, email: true } } },
      resolve: (conversation) => conversation.assignee,
    }),
    assignedToMe: t.boolean({
      description: "Whether the conversation is assigned to the caller's user (a session's); false for backend credentials.",
      // The caller's user decides the value: subscribers of different users never share it (src/graphql/caller-reads.ts).
      reads: ['user'],
      select: { assigneeId: true },
      resolve: (conversation, _args, ctx) => isAssignedTo(conversation.assigneeId, ctx.auth),
    }),
    labels: t.exposeStringList('labels', { description: 'Lowercased, sorted.' }),
    unreadCount: t.exposeInt('unreadCount', { description: 'Inbound messages after lastReadAt.' }),
    lastReadAt: t.expose('lastReadAt', { type: 'DateTime', nullable: true }),
    lastMessage: t.relation('lastMessage', { nullable: true, description: 'The newest message.' }),
    lastMessageAt: t.expose('lastMessageAt', { type: 'DateTime', nullable: true }),
    closedAt: t.expose('closedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    contact: t.relation('contact'),
    stateChanges: t.relation('stateChanges', { type: StateChange, query: { orderBy: CONVERSATION_RELATIONS.stateChanges.orderBy } }),
  }),
});

export const ConversationConnection = connectionType('Conversation', ConversationObject);

/** How a page of `conversations` loads its rows. */
const conversationsPage = pageLoader<ConversationRow>(CONVERSATION_JOINS);

builder.queryFields((t) => ({
  conversation: t.prismaField({
    type: 'Conversation',
    nullable: true,
    scope: 'read',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => orNull(() => getConversation(ctx, String(args.id), query)),
  }),
  conversations: t.field({
    type: ConversationConnection,
    nullable: true,
    description:
      "The acting channel's conversations, newest first (`sort: last_message`: newest activity first); for a credential of several channels that named none, those of all of them (`channelId` narrows to one).",
    scope: 'read',
    args: {
      ...pageArgs,
      status: t.arg({ type: ConversationStatusEnum }),
      contactId: t.arg.id(),
      assigneeId: t.arg.id({ description: 'Only conversations assigned to this user.' }),
      unassigned: t.arg.boolean({ description: 'true: only unassigned conversations.' }),
      unread: t.arg.boolean({ description: 'true: only conversations with unread inbound messages.' }),
      label: t.arg.string(),
      search: t.arg.string({ description: "The contact's name, email or phone, or the text of a message (never encrypted content)." }),
      channelId: t.arg.id(),
      sort: t.arg({ type: ConversationSortEnum }),
    },
    complexity: connectionComplexity,
    resolve: (_root, args, ctx, info) =>
      listConversations(
        ctx,
        {
          ...pageFromArgs(args),
          status: args.status,
          contactId: args.contactId == null ? null : String(args.contactId),
          assignee: args.unassigned ? 'none' : args.assigneeId == null ? null : String(args.assigneeId),
          unread: args.unread ? true : null,
          label: args.label,
          search: args.search,
          channelId: args.channelId == null ? null : String(args.channelId),
          sort: args.sort,
        },
        conversationsPage(ctx, info),
      ),
  }),
}));

const ConversationPayload = payloadType('Conversation', 'conversation', (ctx, id, query) => ctx.prisma.conversation.findUnique({ ...query, where: { id } }));

/** A mutation's payload whose failures name its arguments (`["userId"]`), not an input object. */
async function argumentPayload(run: () => Promise<{ id: string }>, names: Record<string, string>): Promise<Payload> {
  try {
    return accepted(await run());
  } catch (error) {
    const userErrors = toUserErrors(error);
    if (!userErrors) throw error;
    return {
      id: null,
      userErrors: userErrors.map((userError) =>
        userError.field[0] === 'input' && userError.field[1] ? { ...userError, field: [names[userError.field[1]] ?? userError.field[1]] } : userError,
      ),
    };
  }
}

builder.mutationFields((t) => ({
  assignConversation: t.field({
    type: ConversationPayload,
    description: 'Assigns the conversation to a workspace user, or unassigns it (`userId: null`); records an assigned or unassigned state change.',
    scope: 'conversations',
    args: { id: t.arg.id({ required: true }), userId: t.arg.id() },
    resolve: (_root, args, ctx) =>
      argumentPayload(() => assignConversation(ctx, String(args.id), { user: args.userId == null ? null : String(args.userId) }, { select: { id: true } }), {
        user: 'userId',
      }),
  }),
  markConversationRead: t.field({
    type: ConversationPayload,
    description: "Marks the conversation read up to a message of it (default its latest); lastReadAt never moves back.",
    scope: 'conversations',
    args: { id: t.arg.id({ required: true }), throughMessageId: t.arg.id() },
    resolve: (_root, args, ctx) =>
      argumentPayload(
        () => markConversationRead(ctx, String(args.id), { through: args.throughMessageId == null ? null : String(args.throughMessageId) }, { select: { id: true } }),
        { through: 'throughMessageId' },
      ),
  }),
  updateConversationLabels: t.field({
    type: ConversationPayload,
    description: 'Adds and removes labels (trimmed, lowercased, 1–50 characters, at most 20 per conversation).',
    scope: 'conversations',
    args: { id: t.arg.id({ required: true }), add: t.arg.stringList(), remove: t.arg.stringList() },
    resolve: (_root, args, ctx) =>
      argumentPayload(() => updateConversationLabels(ctx, String(args.id), { add: args.add ?? null, remove: args.remove ?? null }, { select: { id: true } }), {
        add: 'add',
        remove: 'remove',
      }),
  }),
  closeConversation: t.field({
    type: ConversationPayload,
    description: 'Closing a closed conversation changes nothing and records no state change.',
    scope: 'conversations',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => asPayload(() => setConversationStatus(ctx, String(args.id), 'closed', { select: { id: true } })),
  }),
  reopenConversation: t.field({
    type: ConversationPayload,
    description: 'Reopening an open conversation changes nothing and records no state change.',
    scope: 'conversations',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => asPayload(() => setConversationStatus(ctx, String(args.id), 'open', { select: { id: true } })),
  }),
}));

/** The argument that narrows a subscription to one channel (src/context/request.ts `followedChannelIds`). */
export const CHANNEL_FILTER = 'Only the events of this channel, one the credential can act as (an error otherwise).';

builder.subscriptionField('conversationUpdated', (t) =>
  t.prismaField({
    type: 'Conversation',
    description:
      'A conversation changed (a message, a close, a reopen, an assignment, a label…) on any channel the credential can act as (with X-Channel-Uuid, that channel); `channelId` narrows to one of them, `id` to one conversation.',
    scope: 'read',
    args: { id: t.arg.id(), channelId: t.arg.id({ description: CHANNEL_FILTER }) },
    // Every channel the credential can act as, or the one `channelId` names; `id`, one conversation.
    subscribe: (_root, args, ctx) => conversationEvents(ctx, 'conversation.updated', { channelId: args.channelId, conversationId: args.id }),
    // Loaded once per event and selection for every subscriber of this process.
    resolve: (query, event, _args, ctx) => {
      const { conversationId } = event as unknown as { conversationId: string };
      const load = () => ctx.prisma.conversation.findUniqueOrThrow({ ...query, where: { id: conversationId } });
      // Loaded once for every subscriber of the app (src/realtime/event-loads.ts).
      return ctx.eventLoads ? ctx.eventLoads.load(event as object, query, load) : load();
    },
  }),
);
