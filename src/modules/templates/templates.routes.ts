import { collection } from '../../rest/collection.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { route } from '../../rest/route.js';
import { collectionEnvelope } from '../../rest/schemas.js';
import { listTemplates } from './templates.service.js';
import { templateTable } from './templates.sql.js';
import { templateViewSchema } from './templates.schemas.js';

export const templateRoutes = [
  route({
    method: 'GET',
    path: '/templates',
    operationId: 'listTemplates',
    scope: 'read',
    tag: 'Templates',
    summary: 'List templates',
    description: "The acting channel's templates; a template message names an approved one.",
    query: pageQuerySchema,
    responses: { 200: { description: 'A page of templates.', schema: collectionEnvelope(templateViewSchema) } },
    handler: async ({ ctx, query }) => collection(await listTemplates(ctx, query), templateTable.view),
  }),
];
