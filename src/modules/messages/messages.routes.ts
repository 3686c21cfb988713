import type { RestRouter } from '../../rest/router.js';
import { collection } from '../../rest/collection.js';
import { json } from '../../rest/http.js';
import { pageParams } from '../../lib/pagination.js';
import { listMessages, messageView, sendMessage } from './messages.service.js';

export function registerMessageRoutes(router: RestRouter): void {
  router.on('POST', '/messages', async ({ ctx, body }) => {
    const message = await sendMessage(ctx, await body());
    return json(202, { data: { message: messageView(message) } });
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
