import { collection } from '../../rest/collection.js';
import { idempotentWrite } from '../../rest/idempotency.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { route } from '../../rest/route.js';
import { collectionEnvelope, resourceEnvelope } from '../../rest/schemas.js';
import { listMessages, messageView, sendMessage, type MessageRow } from './messages.service.js';
import { messageFiltersSchema, messageViewSchema, sendMessageSchema } from './messages.schemas.js';

export const messageRoutes = [
  route({
    method: 'POST',
    path: '/messages',
    operationId: 'sendMessage',
    tag: 'Messages',
    summary: 'Send a message',
    description:
      'Spec §4.2. The recipient is `to`, else `contact`, else the legacy `sender`. The message is stored as `queued` and delivered to the channel in the background. `null` for any field means absent.',
    idempotent: true,
    body: sendMessageSchema,
    responses: { 202: { description: 'The message was accepted and queued for delivery.', schema: resourceEnvelope('message', messageViewSchema) } },
    handler: async ({ ctx, body, request }) => {
      const input = await body();
      return idempotentWrite<MessageRow>(ctx, request, {
        route: 'POST /messages',
        body: input,
        render: (message) => ({ status: 202, body: { data: { message: messageView(message) } } }),
        run: (guard) => sendMessage(ctx, input, guard),
      });
    },
  }),

  route({
    method: 'GET',
    path: '/messages',
    operationId: 'listMessages',
    tag: 'Messages',
    summary: 'List messages',
    description: "The acting channel's messages, newest first. `search` is a full-text match and never matches an encrypted message.",
    query: pageQuerySchema.extend(messageFiltersSchema.shape),
    responses: { 200: { description: 'A page of messages.', schema: collectionEnvelope(messageViewSchema) } },
    handler: async ({ ctx, query }) => {
      const { limit, cursor, ...filters } = query;
      return collection(await listMessages(ctx, { limit, cursor, filters }), messageView);
    },
  }),
];
