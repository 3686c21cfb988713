import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import type { RequestContext as Context } from '../../context/types.js';
import { pageLoader, viewField } from '../../graphql/rows.js';
import { connectionType, connectionComplexity, inOrder, orderedPageFromArgs, pageArgs, pageToLoad } from '../../graphql/connection.js';
import { IDEMPOTENCY_KEY_DESCRIPTION, asIdempotentPayload } from '../idempotency/idempotency.graphql.js';
import { payloadType } from '../../graphql/user-errors.js';
import { conversationEvents } from '../../context/request.js';
import { MessageDirection, MessageStatus, MessageType } from '../../generated/prisma/enums.js';
import { keysetOrder, keysetWhere, toPage } from '../../lib/pagination.js';
import { Actor, CHANNEL_FILTER } from '../conversations/conversations.graphql.js';
import { listMessages, sendMessage } from './messages.service.js';
import { ENCRYPTED_PLACEHOLDER, MESSAGE_RELATIONS, messageSender, messageTable, type MessageRow } from './messages.sql.js';
import type { MediaView } from './messages.schemas.js';

const MessageTypeEnum = builder.enumType(MessageType, { name: 'MessageType' });
const MessageStatusEnum = builder.enumType(MessageStatus, { name: 'MessageStatus' });
const MessageDirectionEnum = builder.enumType(MessageDirection, { name: 'MessageDirection' });

const MessageMedia = builder.objectRef<MediaView>('MessageMedia').implement({
  fields: (t) => ({
    index: t.exposeInt('index'),
    contentType: t.exposeString('contentType', { nullable: true }),
    filename: t.exposeString('filename', { nullable: true }),
  }),
});

export const MessageObject = builder.prismaObject('Message', {
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    conversationId: t.exposeID('conversationId'),
    contactId: t.exposeID('contactId'),
    channelId: t.exposeID('channelId'),
    direction: t.expose('direction', { type: MessageDirectionEnum }),
    type: t.expose('type', { type: MessageTypeEnum }),
    body: t.string({
      nullable: true,
      description: 'The content; null for an encrypted message, whose content is never shown.',
      ...viewField(messageTable, 'body'),
    }),
    placeholder: t.string({
      nullable: true,
      description: `"${ENCRYPTED_PLACEHOLDER}" for an encrypted message, otherwise null.`,
      ...viewField(messageTable, 'placeholder'),
    }),
    isEncrypted: t.exposeBoolean('isEncrypted'),
    status: t.expose('status', {
      type: MessageStatusEnum,
      description: 'Outbound: queued, then sent, delivered and read as the provider reports them (never backwards), or failed. Inbound: received.',
    }),
    failureReason: t.exposeString('failureReason', {
      nullable: true,
      description: "Why the provider refused the message for good: its error code and text; null otherwise.",
    }),
    sender: t.field({
      type: Actor,
      select: MESSAGE_RELATIONS,
      resolve: (message) => messageSender(message),
    }),
    silent: t.exposeBoolean('silent'),
    mediaUrls: t.exposeStringList('mediaUrls'),
    broadcastId: t.exposeID('broadcastId', { nullable: true, description: 'The broadcast that made this message; null for any other message.' }),
    media: t.field({
      type: [MessageMedia],
      description: 'Files received with an inbound message; REST serves each at /api/connect/messages/{id}/media/{index}.',
      ...viewField(messageTable, 'media'),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    contact: t.relation('contact'),
    conversation: t.relation('conversation'),
  }),
});

export const MessageConnection = connectionType('Message', MessageObject);

const KEYSET = { id: true, createdAt: true } as const;

const MessageOrderEnum = builder.enumType('MessageOrder', {
  description: 'The order `messages` lists its rows in; the page arguments count from its start (`first`, `after`) or its end (`last`, `before`).',
  values: {
    desc: { description: 'Newest first (the default).' },
    asc: { description: 'Oldest first, in reading order: `last: 20` is the newest twenty, the oldest of them first.' },
  } as const,
});

/** The `order` argument of a list of messages (docs/graphql.md#oldest-first-messages). */
const orderArg = builder.args((t) => ({
  order: t.field({ type: MessageOrderEnum, defaultValue: 'desc', description: 'Newest first (`desc`, the default) or oldest first (`asc`).' }),
}));

builder.prismaObjectField('Conversation', 'messages', (t) =>
  t.field({
    type: MessageConnection,
    nullable: true,
    description:
      'Messages of the conversation, newest first, or oldest first with `order: asc` (a cursor serves both orders); loaded together with the conversations.',
    args: { ...pageArgs, ...orderArg },
    complexity: connectionComplexity,
    select: (args, _ctx, nestedSelection) => {
      // Oldest first is read as the newest-first page holding the same rows, then turned (inOrder).
      const page = pageToLoad(args, args.order);
      const nested = nestedSelection({ where: keysetWhere(page), orderBy: keysetOrder(page), take: page.limit + 1 }, ['edges', 'node']);
      // The page's cursors need each row's keyset even when no node field is selected
      // (`messages { pageInfo { … } }`), and Prisma refuses an empty select.
      const select = (nested as { select?: Record<string, unknown> }).select;
      return { messages: (select ? { ...nested, select: { ...KEYSET, ...select } } : nested) as typeof nested };
    },
    resolve: (conversation, args) => inOrder(toPage(conversation.messages, orderedPageFromArgs(args, args.order)), args.order),
  }),
);

/** How a page of `messages` loads its rows. */
const messagesPage = pageLoader<MessageRow>();

builder.queryField('messages', (t) =>
  t.field({
    type: MessageConnection,
    nullable: true,
    description:
      "The acting channel's messages, newest first, or oldest first with `order: asc` (a cursor serves both orders). " +
      'Search never matches encrypted messages.',
    scope: 'read',
    args: {
      ...pageArgs,
      conversationId: t.arg.id(),
      contactId: t.arg.id(),
      search: t.arg.string(),
      ...orderArg,
    },
    complexity: connectionComplexity,
    resolve: async (_root, args, ctx, info) =>
      inOrder(
        await listMessages(
          ctx,
          {
            ...orderedPageFromArgs(args, args.order),
            filters: {
              conversation_id: args.conversationId == null ? undefined : String(args.conversationId),
              contact_id: args.contactId == null ? undefined : String(args.contactId),
              search: args.search ?? undefined,
            },
          },
          messagesPage(ctx, info),
        ),
        args.order,
      ),
  }),
);

const RecipientInput = builder.inputType('RecipientInput', {
  description: 'A contact by id (groups included), or details matched by phone then email, or used to create one.',
  fields: (t) => ({
    contactId: t.id(),
    name: t.string(),
    email: t.string(),
    phone: t.string(),
  }),
});

const TemplateInput = builder.inputType('TemplateInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    language: t.string(),
    parameters: t.stringList({ required: true }),
  }),
});

const SendMessageInput = builder.inputType('SendMessageInput', {
  description: 'Recipient resolution: to, then contact, then the legacy sender when neither is given.',
  fields: (t) => ({
    to: t.field({ type: RecipientInput }),
    contact: t.field({ type: RecipientInput }),
    sender: t.field({ type: RecipientInput }),
    from: t.string({ description: 'A workspace user id or email, or an external actor name.' }),
    type: t.field({ type: MessageTypeEnum }),
    message: t.string(),
    isEncrypted: t.boolean(),
    silent: t.boolean(),
    template: t.field({ type: TemplateInput }),
    mediaUrls: t.stringList(),
    channelId: t.id({
      description: 'The channel to send on: one the credential can act as. Needed, unless X-Channel-Uuid names one, by a credential of several channels.',
    }),
    idempotencyKey: t.string({ description: IDEMPOTENCY_KEY_DESCRIPTION }),
  }),
});

type Recipient = { contactId?: string | number | null; name?: string | null; email?: string | null; phone?: string | null };

/** A GraphQL recipient as the REST field: the contact id, or its details. */
function restRecipient(recipient: Recipient | null | undefined) {
  if (!recipient) return recipient;
  if (recipient.contactId != null) return String(recipient.contactId);
  return Object.fromEntries(Object.entries(recipient).filter(([key, value]) => key !== 'contactId' && value != null));
}

const GRAPHQL_NAMES: Record<string, string> = { is_encrypted: 'isEncrypted', media_urls: 'mediaUrls', channel_id: 'channelId' };

const MessagePayload = payloadType('Message', 'message', (ctx, id, query) => ctx.prisma.message.findUnique({ ...query, where: { id } }));

builder.mutationField('sendMessage', (t) =>
  t.field({
    type: MessagePayload,
    scope: 'send',
    args: { input: t.arg({ type: SendMessageInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      asIdempotentPayload(ctx, {
        operation: 'sendMessage',
        input,
        // The REST body of the same send; null fields are absent there too.
        run: (guard) =>
          sendMessage(
            ctx,
            {
              to: restRecipient(input.to),
              contact: restRecipient(input.contact),
              sender: restRecipient(input.sender),
              from: input.from,
              type: input.type,
              message: input.message,
              is_encrypted: input.isEncrypted,
              silent: input.silent,
              template: input.template,
              media_urls: input.mediaUrls,
            },
            guard,
            input.channelId == null ? null : String(input.channelId),
          ),
        rename: (field) => GRAPHQL_NAMES[field] ?? field,
      }),
  }),
);

/** A message event heard on the bus. */
type MessageEvent = { messageId: string; conversationId: string; workspaceId: string; channelId: string };

/** The message of an event as `query` selects it: loaded once for every subscriber of the app (src/realtime/event-loads.ts). */
const eventMessage = (query: object, event: unknown, ctx: Context) => {
  const { messageId } = event as MessageEvent;
  const load = () => ctx.prisma.message.findUniqueOrThrow({ ...query, where: { id: messageId } });
  return ctx.eventLoads ? ctx.eventLoads.load(event as object, query, load) : load();
};

const MESSAGE_EVENTS = (what: string) =>
  `${what} on any channel the credential can act as (with X-Channel-Uuid, that channel); \`channelId\` narrows to one of them, \`conversationId\` to one conversation.`;

builder.subscriptionField('messageAdded', (t) =>
  t.prismaField({
    type: 'Message',
    description: MESSAGE_EVENTS('Each new message'),
    scope: 'read',
    args: { conversationId: t.arg.id(), channelId: t.arg.id({ description: CHANNEL_FILTER }) },
    subscribe: (_root, args, ctx) => conversationEvents(ctx, 'message.created', args),
    resolve: (query, event, _args, ctx) => eventMessage(query, event, ctx),
  }),
);

builder.subscriptionField('messageUpdated', (t) =>
  t.prismaField({
    type: 'Message',
    description: MESSAGE_EVENTS('A message, each time its status changes (sent, delivered, read, or failed with its failureReason),'),
    scope: 'read',
    args: { conversationId: t.arg.id(), channelId: t.arg.id({ description: CHANNEL_FILTER }) },
    subscribe: (_root, args, ctx) => conversationEvents(ctx, 'message.updated', args),
    resolve: (query, event, _args, ctx) => eventMessage(query, event, ctx),
  }),
);
