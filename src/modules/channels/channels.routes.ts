import type { RestRouter } from '../../rest/router.js';
import { json } from '../../rest/http.js';
import { channelsOf } from './channels.service.js';

export function registerChannelRoutes(router: RestRouter): void {
  // Lists what the credential can act as, so it never needs X-Channel-Uuid.
  router.on('GET', '/channels', async ({ ctx }) => json(200, { data: channelsOf(ctx.auth) }), { actsAsChannel: false });
}
