import { z } from 'zod';
import { json } from '../../http/exchange.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { collection } from '../../rest/collection.js';
import { route } from '../../rest/route.js';
import { apiUuid, collectionEnvelope, resourceEnvelope } from '../../rest/schemas.js';
import { idempotentWrite } from '../idempotency/idempotency.rest.js';
import { BROADCAST_BODY_LIMIT, MAX_RECIPIENTS, RECIPIENT_STATUSES, broadcastViewSchema, createBroadcastSchema, recipientViewSchema } from './broadcasts.schemas.js';
import { changeBroadcast, createBroadcast, getBroadcast, listBroadcasts, listRecipients } from './broadcasts.service.js';
import { broadcastView, type BroadcastRow } from './broadcasts.sql.js';

const idParams = z.object({ id: apiUuid.meta({ description: 'The broadcast UUID.' }) });
const broadcastEnvelope = resourceEnvelope('broadcast', broadcastViewSchema);

/** POST /broadcasts/{id}/pause, /resume and /cancel: one declaration each. */
function action(name: 'pause' | 'resume' | 'cancel', summary: string, description: string) {
  return route({
    method: 'POST',
    path: `/broadcasts/:id/${name}`,
    operationId: `${name}Broadcast`,
    scope: 'broadcasts',
    actsAsChannel: false,
    tag: 'Broadcasts',
    summary,
    description,
    params: idParams,
    failures: [404, 422],
    responses: { 200: { description: 'The broadcast after the change.', schema: broadcastEnvelope } },
    handler: async ({ ctx, params }) => json(200, { data: { broadcast: broadcastView(await changeBroadcast(ctx, params.id, name)) } }),
  });
}

export const broadcastRoutes = [
  route({
    method: 'POST',
    path: '/broadcasts',
    operationId: 'createBroadcast',
    scope: 'broadcasts',
    actsAsChannel: false,
    tag: 'Broadcasts',
    summary: 'Create a broadcast',
    description: `One message to up to ${MAX_RECIPIENTS} contacts of a channel (the acting one unless \`channel_id\` names another), made and sent at the channel's pace from \`start_at\`. Each recipient's message is an ordinary outbound message in its conversation. Bodies up to 8 MiB.`,
    idempotent: true,
    body: createBroadcastSchema,
    bodyLimitBytes: BROADCAST_BODY_LIMIT,
    responses: { 202: { description: 'The broadcast was stored with its recipients; its messages follow at its pace.', schema: broadcastEnvelope } },
    handler: async ({ ctx, body, request }) => {
      const input = await body();
      const answer = await idempotentWrite<BroadcastRow>(ctx, request, {
        route: 'POST /broadcasts',
        body: input,
        render: (broadcast) => ({ status: 202, body: { data: { broadcast: broadcastView(broadcast) } } }),
        run: (guard) => createBroadcast(ctx, input, guard),
      });
      ctx.onBroadcastQueued?.();
      return answer;
    },
  }),

  route({
    method: 'GET',
    path: '/broadcasts',
    operationId: 'listBroadcasts',
    scope: 'read',
    actsAsChannel: false,
    tag: 'Broadcasts',
    summary: 'List broadcasts',
    description: 'Broadcasts of the channels the credential acts as, newest first, with their counts.',
    query: pageQuerySchema,
    responses: { 200: { description: 'A page of broadcasts.', schema: collectionEnvelope(broadcastViewSchema) } },
    handler: async ({ ctx, query }) => collection(await listBroadcasts(ctx, query), broadcastView),
  }),

  route({
    method: 'GET',
    path: '/broadcasts/:id',
    operationId: 'getBroadcast',
    scope: 'read',
    actsAsChannel: false,
    tag: 'Broadcasts',
    summary: 'Get a broadcast',
    params: idParams,
    failures: [404],
    responses: { 200: { description: 'The broadcast with its counts.', schema: broadcastEnvelope } },
    handler: async ({ ctx, params }) => json(200, { data: { broadcast: broadcastView(await getBroadcast(ctx, params.id)) } }),
  }),

  route({
    method: 'GET',
    path: '/broadcasts/:id/recipients',
    operationId: 'listBroadcastRecipients',
    scope: 'read',
    actsAsChannel: false,
    tag: 'Broadcasts',
    summary: "List a broadcast's recipients",
    description: "Keyset pages of the recipients in contact id order, optionally of one status: pending until their message leaves, then that message's status, or skipped.",
    params: idParams,
    query: z.object({
      limit: pageQuerySchema.shape.limit,
      cursor: z.string().optional().meta({ description: 'The `next_cursor` of the previous page.' }),
      status: z.enum(RECIPIENT_STATUSES, { error: 'The status must be pending, sent, delivered, read, failed or skipped.' }).optional(),
    }),
    failures: [404],
    responses: { 200: { description: 'A page of recipients.', schema: collectionEnvelope(recipientViewSchema) } },
    handler: async ({ ctx, params, query }) => {
      const page = await listRecipients(ctx, params.id, query);
      return json(200, { data: page.items, meta: { per_page: page.perPage, next_cursor: page.nextCursor, has_more: page.hasMore } });
    },
  }),

  action('pause', 'Pause a broadcast', 'No further messages are made until it is resumed; those already made go on.'),
  action('resume', 'Resume a broadcast', 'Carries on from the next recipient without a message.'),
  action('cancel', 'Cancel a broadcast', 'Every recipient whose message is not made yet becomes skipped, and the broadcast ends.'),
];
