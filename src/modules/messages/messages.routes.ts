import type { RestRouter } from '../../rest/router.js';
import { collection } from '../../rest/collection.js';
import { idempotentWrite } from '../../rest/idempotency.js';
import { pageParams } from '../../lib/pagination.js';
import { listMessages, messageView, sendMessage, type MessageRow } from './messages.service.js';

export function registerMessageRoutes(router: RestRouter): void {
  router.on('POST', '/messages', async ({ ctx, body, request }) => {
    const input = await body();
    return idempotentWrite<MessageRow>(ctx, request, {
      route: 'POST /messages',
      body: input,
      render: (message) => ({ status: 202, body: { data: { message: messageView(message) } } }),
      run: (guard) => sendMessage(ctx, input, guard),
    });
  });

  router.on('GET', '/messages', async ({ ctx, url }) => {
    const query = url.searchParams;
    const filters = {
      conversation_id: query.get('conversation_id') ?? undefined,
      contact_id: query.get('contact_id') ?? undefined,
      search: query.get('search') ?? undefined,
    };
    return collection(await listMessages(ctx, { ...pageParams(query), filters }), messageView);
  });
}
