import { collection } from '../../rest/collection.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { route } from '../../rest/route.js';
import { collectionEnvelope } from '../../rest/schemas.js';
import { listChannels } from './channels.service.js';
import { channelTable } from './channels.sql.js';
import { channelViewSchema } from './channels.schemas.js';

export const channelRoutes = [
  route({
    method: 'GET',
    path: '/channels',
    operationId: 'listChannels',
    scope: 'read',
    tag: 'Channels',
    summary: 'List channels',
    description: 'The channels the credential can act as; never needs X-Channel-Uuid.',
    // Lists what the credential can act as, so it acts as none of them.
    actsAsChannel: false,
    query: pageQuerySchema,
    responses: { 200: { description: 'A page of channels.', schema: collectionEnvelope(channelViewSchema) } },
    handler: async ({ ctx, query }) => collection(await listChannels(ctx, query), channelTable.view),
  }),
];
