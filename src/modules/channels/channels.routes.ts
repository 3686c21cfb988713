import type { RestRouter } from '../../rest/router.js';
import { collection } from '../../rest/collection.js';
import { pageParams } from '../../lib/pagination.js';
import { channelView, listChannels } from './channels.service.js';

export function registerChannelRoutes(router: RestRouter): void {
  // Lists what the credential can act as, so it never needs X-Channel-Uuid.
  router.on('GET', '/channels', async ({ ctx, url }) => collection(await listChannels(ctx, pageParams(url.searchParams)), channelView), {
    actsAsChannel: false,
  });
}
