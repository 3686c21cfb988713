import { collection } from '../../rest/collection.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { route } from '../../rest/route.js';
import { collectionEnvelope } from '../../rest/schemas.js';
import { listUsers } from './users.service.js';
import { userViewSchema } from './users.schemas.js';

export const userRoutes = [
  route({
    method: 'GET',
    path: '/users',
    operationId: 'listUsers',
    scope: 'read',
    tag: 'Users',
    summary: 'List users',
    description: "The workspace's users (for assignment), newest first.",
    actsAsChannel: false,
    query: pageQuerySchema,
    responses: { 200: { description: 'A page of users.', schema: collectionEnvelope(userViewSchema) } },
    handler: async ({ ctx, query }) => collection(await listUsers(ctx, query), (user) => ({ id: user.id, name: user.name, email: user.email })),
  }),
];
