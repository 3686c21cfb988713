import type { Page } from '../lib/pagination.js';
import { json } from '../http/exchange.js';

/** `{"data":[…],"meta":{"per_page","next_cursor","has_more"}}`, the body of every collection. */
export function collection<T, V>(page: Page<T>, view: (item: T) => V): Response {
  return json(200, {
    data: page.items.map(view),
    meta: { per_page: page.perPage, next_cursor: page.nextCursor, has_more: page.hasMore },
  });
}
