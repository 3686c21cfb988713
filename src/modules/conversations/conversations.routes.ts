import { z } from 'zod';
import { collection } from '../../rest/collection.js';
import { json } from '../../http/exchange.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { route } from '../../rest/route.js';
import { apiUuid, collectionEnvelope, resourceEnvelope } from '../../rest/schemas.js';
import {
  assignConversation,
  getConversation,
  listConversationViews,
  markConversationRead,
  setConversationStatus,
  updateConversationLabels,
} from './conversations.service.js';
import { conversationTable } from './conversations.sql.js';
import { assignConversationSchema, conversationFiltersSchema, conversationViewSchema, markReadSchema, updateLabelsSchema } from './conversations.schemas.js';

const conversationEnvelope = resourceEnvelope('conversation', conversationViewSchema);
const conversationParams = z.object({ id: apiUuid.meta({ description: 'The conversation UUID.' }) });

export const conversationRoutes = [
  route({
    method: 'GET',
    path: '/conversations',
    operationId: 'listConversations',
    scope: 'read',
    tag: 'Conversations',
    summary: 'List conversations',
    description:
      "The acting channel's conversations, newest first (`sort=last_message`: newest activity first). A credential of several channels that sends no X-Channel-Uuid lists the conversations of all of them; `channel_id` narrows to one.",
    actsAsChannel: false,
    query: pageQuerySchema.extend(conversationFiltersSchema.shape),
    failures: [422],
    responses: { 200: { description: 'A page of conversations.', schema: collectionEnvelope(conversationViewSchema) } },
    handler: async ({ ctx, query }) =>
      collection(
        await listConversationViews(ctx, {
          ...query,
          contactId: query.contact_id,
          channelId: query.channel_id,
          unread: query.unread === undefined ? undefined : query.unread === 'true',
        }),
        (row) => row.view,
      ),
  }),

  route({
    method: 'GET',
    path: '/conversations/:id',
    operationId: 'getConversation',
    scope: 'read',
    actsAsChannel: false,
    tag: 'Conversations',
    summary: 'Get a conversation',
    params: conversationParams,
    failures: [404],
    responses: { 200: { description: 'The conversation.', schema: conversationEnvelope } },
    handler: async ({ ctx, params }) => json(200, { data: { conversation: conversationTable.view(await getConversation(ctx, params.id)) } }),
  }),

  route({
    method: 'POST',
    path: '/conversations/:id/close',
    operationId: 'closeConversation',
    scope: 'conversations',
    actsAsChannel: false,
    tag: 'Conversations',
    summary: 'Close a conversation',
    description: 'Closing a closed conversation changes nothing and answers it as it is.',
    params: conversationParams,
    failures: [404],
    responses: { 200: { description: 'The closed conversation.', schema: conversationEnvelope } },
    handler: async ({ ctx, params }) =>
      json(200, { data: { conversation: conversationTable.view(await setConversationStatus(ctx, params.id, 'closed')) } }),
  }),

  route({
    method: 'POST',
    path: '/conversations/:id/reopen',
    operationId: 'reopenConversation',
    scope: 'conversations',
    actsAsChannel: false,
    tag: 'Conversations',
    summary: 'Reopen a conversation',
    description: 'Reopening an open conversation changes nothing. A contact has at most one open conversation per channel: reopening while another is open is a 422.',
    params: conversationParams,
    failures: [404, 422],
    responses: { 200: { description: 'The reopened conversation.', schema: conversationEnvelope } },
    handler: async ({ ctx, params }) =>
      json(200, { data: { conversation: conversationTable.view(await setConversationStatus(ctx, params.id, 'open')) } }),
  }),

  route({
    method: 'POST',
    path: '/conversations/:id/assign',
    operationId: 'assignConversation',
    scope: 'conversations',
    actsAsChannel: false,
    tag: 'Conversations',
    summary: 'Assign a conversation',
    description: 'Assigns the conversation to a workspace user (`user`: id or email) or, with `null`, unassigns it; records an `assigned` or `unassigned` state change. Assigning to the current assignee changes nothing.',
    params: conversationParams,
    body: assignConversationSchema,
    failures: [404, 422],
    responses: { 200: { description: 'The conversation.', schema: conversationEnvelope } },
    handler: async ({ ctx, params, body }) =>
      json(200, { data: { conversation: conversationTable.view(await assignConversation(ctx, params.id, await body())) } }),
  }),

  route({
    method: 'POST',
    path: '/conversations/:id/read',
    operationId: 'markConversationRead',
    scope: 'conversations',
    actsAsChannel: false,
    tag: 'Conversations',
    summary: 'Mark a conversation read',
    description:
      "The conversation is read up to `through` (a message of it; default its latest message): `lastReadAt` becomes that message's `createdAt` and never moves back. Read state is the conversation's (the team's).",
    params: conversationParams,
    body: markReadSchema,
    failures: [404, 422],
    responses: { 200: { description: 'The conversation.', schema: conversationEnvelope } },
    handler: async ({ ctx, params, body }) =>
      json(200, { data: { conversation: conversationTable.view(await markConversationRead(ctx, params.id, await body())) } }),
  }),

  route({
    method: 'POST',
    path: '/conversations/:id/labels',
    operationId: 'updateConversationLabels',
    scope: 'conversations',
    actsAsChannel: false,
    tag: 'Conversations',
    summary: 'Add and remove labels',
    description: 'Labels are trimmed, 1–50 characters, compared without case (stored lowercased); a conversation has at most 20. Concurrent changes never lose one another.',
    params: conversationParams,
    body: updateLabelsSchema,
    failures: [404, 422],
    responses: { 200: { description: 'The conversation.', schema: conversationEnvelope } },
    handler: async ({ ctx, params, body }) =>
      json(200, { data: { conversation: conversationTable.view(await updateConversationLabels(ctx, params.id, await body())) } }),
  }),
];
