import { filter, pipe } from 'graphql-yoga';
import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import { loadForEvent } from '../../graphql/event-loads.js';
import { pageLoader } from '../../graphql/rows.js';
import { connectionType, connectionComplexity, pageArgs, pageFromArgs } from '../../graphql/connection.js';
import { asPayload, orNull } from '../../graphql/results.js';
import { payloadType } from '../../graphql/user-errors.js';
import { actingChannel } from '../../context/request.js';
import { ActorType, ConversationStateChangeType, ConversationStatus } from '../../generated/prisma/enums.js';
import { getConversation, listConversations, setConversationStatus } from './conversations.service.js';
import { CONVERSATION_RELATIONS, stateChangeActor, type ConversationRow } from './conversations.sql.js';
import type { ActorView } from './conversations.schemas.js';

export const ActorTypeEnum = builder.enumType(ActorType, { name: 'ActorType' });
export const ConversationStatusEnum = builder.enumType(ConversationStatus, { name: 'ConversationStatus' });
const StateChangeTypeEnum = builder.enumType(ConversationStateChangeType, { name: 'StateChangeType' });

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
    lastMessageAt: t.expose('lastMessageAt', { type: 'DateTime', nullable: true }),
    closedAt: t.expose('closedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    contact: t.relation('contact'),
    stateChanges: t.relation('stateChanges', { type: StateChange, query: { orderBy: CONVERSATION_RELATIONS.stateChanges.orderBy } }),
  }),
});

export const ConversationConnection = connectionType('Conversation', ConversationObject);

/** How a page of `conversations` loads its rows. */
const conversationsPage = pageLoader<ConversationRow>();

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
    description: "The acting channel's conversations, newest first.",
    scope: 'read',
    args: { ...pageArgs, status: t.arg({ type: ConversationStatusEnum }), contactId: t.arg.id() },
    complexity: connectionComplexity,
    resolve: (_root, args, ctx, info) =>
      listConversations(
        ctx,
        { ...pageFromArgs(args), status: args.status, contactId: args.contactId == null ? null : String(args.contactId) },
        conversationsPage(ctx, info),
      ),
  }),
}));

const ConversationPayload = payloadType('Conversation', 'conversation', (ctx, id, query) => ctx.prisma.conversation.findUnique({ ...query, where: { id } }));

builder.mutationFields((t) => ({
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

builder.subscriptionField('conversationUpdated', (t) =>
  t.prismaField({
    type: 'Conversation',
    description: 'A conversation of the acting channel changed: a message, a close or a reopen. With `id`, only that conversation.',
    scope: 'read',
    args: { id: t.arg.id() },
    subscribe: (_root, args, ctx) => {
      const channel = actingChannel(ctx.auth);
      const id = args.id == null ? null : String(args.id).toLowerCase();
      return pipe(
        ctx.events!.subscribe('conversation.updated'),
        filter((event) => event.workspaceId === ctx.auth.workspace.id && event.channelId === channel.id && (id === null || event.conversationId === id)),
      );
    },
    // Loaded once per event and selection for every subscriber of this process.
    resolve: (query, event, _args, ctx) => {
      const { conversationId } = event as unknown as { conversationId: string };
      return loadForEvent(event as object, query, () => ctx.prisma.conversation.findUniqueOrThrow({ ...query, where: { id: conversationId } }));
    },
  }),
);
