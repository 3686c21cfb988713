import { z } from 'zod';
import { collection } from '../../rest/collection.js';
import { json } from '../../http/exchange.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { route } from '../../rest/route.js';
import { apiUuid, collectionEnvelope, resourceEnvelope } from '../../rest/schemas.js';
import { getConversation, listConversations, setConversationStatus } from './conversations.service.js';
import { conversationTable } from './conversations.sql.js';
import { conversationFiltersSchema, conversationViewSchema } from './conversations.schemas.js';

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
    description: "The acting channel's conversations, newest first.",
    query: pageQuerySchema.extend(conversationFiltersSchema.shape),
    responses: { 200: { description: 'A page of conversations.', schema: collectionEnvelope(conversationViewSchema) } },
    handler: async ({ ctx, query }) =>
      collection(await listConversations(ctx, { ...query, contactId: query.contact_id }), conversationTable.view),
  }),

  route({
    method: 'GET',
    path: '/conversations/:id',
    operationId: 'getConversation',
    scope: 'read',
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
    tag: 'Conversations',
    summary: 'Reopen a conversation',
    description: 'Reopening an open conversation changes nothing. A contact has at most one open conversation per channel: reopening while another is open is a 422.',
    params: conversationParams,
    failures: [404, 422],
    responses: { 200: { description: 'The reopened conversation.', schema: conversationEnvelope } },
    handler: async ({ ctx, params }) =>
      json(200, { data: { conversation: conversationTable.view(await setConversationStatus(ctx, params.id, 'open')) } }),
  }),
];
