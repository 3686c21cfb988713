import type { RestRouter } from '../../rest/router.js';
import { collection } from '../../rest/collection.js';
import { json } from '../../rest/http.js';
import { pageParams } from '../../lib/pagination.js';
import { conversationView, getConversation, listConversations, setConversationStatus } from './conversations.service.js';

export function registerConversationRoutes(router: RestRouter): void {
  router.on('GET', '/conversations', async ({ ctx, url }) => {
    const query = url.searchParams;
    const page = await listConversations(ctx, { ...pageParams(query), status: query.get('status'), contactId: query.get('contact_id') });
    return collection(page, conversationView);
  });

  router.on('GET', '/conversations/:id', async ({ ctx, params }) =>
    json(200, { data: { conversation: conversationView(await getConversation(ctx, params.id ?? '')) } }),
  );

  router.on('POST', '/conversations/:id/close', async ({ ctx, params }) =>
    json(200, { data: { conversation: conversationView(await setConversationStatus(ctx, params.id ?? '', 'closed')) } }),
  );

  router.on('POST', '/conversations/:id/reopen', async ({ ctx, params }) =>
    json(200, { data: { conversation: conversationView(await setConversationStatus(ctx, params.id ?? '', 'open')) } }),
  );
}
