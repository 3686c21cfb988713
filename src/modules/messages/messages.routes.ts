import { z } from 'zod';
import { collection } from '../../rest/collection.js';
import { FetchResponse } from '../../lib/response.js';
import { endOnFailure } from '../../lib/end-on-failure.js';
import { openMessageMedia } from './media.service.js';
import { idempotentWrite } from '../idempotency/idempotency.rest.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { route } from '../../rest/route.js';
import { apiUuid, collectionEnvelope, resourceEnvelope } from '../../rest/schemas.js';
import { listMessages, sendMessage } from './messages.service.js';
import { messageTable, type MessageRow } from './messages.sql.js';
import { messageFiltersSchema, messageViewSchema, sendMessageSchema } from './messages.schemas.js';

export const messageRoutes = [
  route({
    method: 'POST',
    path: '/messages',
    operationId: 'sendMessage',
    scope: 'send',
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
        render: (message) => ({ status: 202, body: { data: { message: messageTable.view(message) } } }),
        run: (guard) => sendMessage(ctx, input, guard),
      });
    },
  }),

  route({
    method: 'GET',
    path: '/messages/:id/media/:index',
    operationId: 'getMessageMedia',
    scope: 'read',
    actsAsChannel: false,
    tag: 'Messages',
    summary: 'Download a file of an inbound message',
    description:
      "A file a contact sent (listed in the message's `media`), streamed from the channel's provider with the channel's credentials; at most 16 MiB.",
    params: z.object({
      id: apiUuid.meta({ description: 'The message UUID.' }),
      index: z.string().meta({ description: 'The `index` of the file in the message’s `media`.', example: '0' }),
    }),
    failures: [404, 502],
    responses: {
      200: {
        description: "The file's bytes, with its type and, when it has one, its name (`Content-Disposition`).",
        schema: z.string().meta({ format: 'binary' }),
        contentType: 'application/octet-stream',
      },
    },
    handler: async ({ ctx, params, endConnection }) => {
      const media = await openMessageMedia(ctx, params.id, params.index);
      const headers: Record<string, string> = {
        'content-type': media.contentType ?? 'application/octet-stream',
        'x-content-type-options': 'nosniff',
        'cache-control': 'private, no-store',
        'content-disposition': media.filename ? `attachment; filename*=UTF-8''${encodeURIComponent(media.filename)}` : 'attachment',
      };
      if (media.length !== null) headers['content-length'] = String(media.length);
      // A file that fails part-way (over the size limit without a declared size, the provider gone) ends the connection.
      return new FetchResponse(endOnFailure(media.body, endConnection), { status: 200, headers });
    },
  }),

  route({
    method: 'GET',
    path: '/messages',
    operationId: 'listMessages',
    scope: 'read',
    actsAsChannel: false,
    tag: 'Messages',
    summary: 'List messages',
    description:
      "The acting channel's messages, newest first; a credential of several channels that sends no X-Channel-Uuid lists those of all of them. `search` is a full-text match and never matches an encrypted message.",
    query: pageQuerySchema.extend(messageFiltersSchema.shape),
    responses: { 200: { description: 'A page of messages.', schema: collectionEnvelope(messageViewSchema) } },
    handler: async ({ ctx, query }) => {
      const { limit, cursor, ...filters } = query;
      return collection(await listMessages(ctx, { limit, cursor, filters }), messageTable.view);
    },
  }),
];
