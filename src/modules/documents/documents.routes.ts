import { json } from '../../http/exchange.js';
import { route } from '../../rest/route.js';
import { manifestSchema, storedEnvelopeSchema } from './documents.schemas.js';
import { registerDocuments } from './documents.service.js';

export const documentRoutes = [
  route({
    method: 'POST',
    path: '/graphql/documents',
    operationId: 'registerGraphqlDocuments',
    tag: 'GraphQL documents',
    summary: 'Register GraphQL documents',
    description:
      "Registers the GraphQL documents of graphql-codegen client preset's `persisted-documents.json` for the workspace, so that requests may name them by id " +
      '(`{"documentId":"sha256:<hex>"}` or `extensions.persistedQuery`) instead of sending their text. Each key must be the SHA-256 of its document and each ' +
      'document valid against the schema within the document limits, else a 422 names the key and nothing is stored. Registering the same manifest again ' +
      'stores nothing new. A backend credential only.',
    scope: 'credentials',
    actsAsChannel: false,
    body: manifestSchema,
    failures: [422],
    responses: { 200: { description: 'The documents are registered.', schema: storedEnvelopeSchema } },
    handler: async ({ ctx, body }) => {
      if (!ctx.documentProblem) throw new Error('the app was built without a document check');
      const stored = await registerDocuments(ctx.prisma, ctx.auth.workspace.id, await body(), ctx.documentProblem);
      return json(200, { data: { stored } });
    },
  }),
];
