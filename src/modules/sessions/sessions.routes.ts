import { z } from 'zod';
import { collection } from '../../rest/collection.js';
import { json } from '../../http/exchange.js';
import { pageQuerySchema } from '../../lib/pagination.js';
import { FetchResponse } from '../../lib/response.js';
import { route } from '../../rest/route.js';
import { apiUuid, collectionEnvelope, resourceEnvelope } from '../../rest/schemas.js';
import { listSessions, mintSession, mintedSessionView, revokeSession, revokeUserSessions, sessionView } from './sessions.service.js';
import { createSessionSchema, mintedSessionSchema, sessionUserQuerySchema, sessionViewSchema } from './sessions.schemas.js';

const ONLY_BACKEND = 'Only a backend credential (a channel key or a connection token) may call it: a session token is refused with 403.';

export const sessionRoutes = [
  route({
    method: 'POST',
    path: '/sessions',
    operationId: 'createSession',
    scope: 'credentials',
    tag: 'Sessions',
    summary: 'Mint a browser session',
    description: `A short-lived, scoped token (\`cst_…\`) for one workspace user, for a browser app to use in place of a backend credential. ${ONLY_BACKEND} The token is shown only in this answer.`,
    actsAsChannel: false,
    body: createSessionSchema,
    responses: { 201: { description: 'The session, with its token.', schema: resourceEnvelope('session', mintedSessionSchema) } },
    handler: async ({ ctx, body }) => json(201, { data: { session: mintedSessionView(await mintSession(ctx, await body())) } }),
  }),

  route({
    method: 'GET',
    path: '/sessions',
    operationId: 'listSessions',
    scope: 'credentials',
    tag: 'Sessions',
    summary: 'List live sessions',
    description: `The workspace's unexpired, unrevoked sessions whose channels the credential can all act as, newest first; never a token. ${ONLY_BACKEND}`,
    actsAsChannel: false,
    query: pageQuerySchema.extend({ user: sessionUserQuerySchema.shape.user.optional() }),
    responses: { 200: { description: 'A page of sessions.', schema: collectionEnvelope(sessionViewSchema) } },
    handler: async ({ ctx, query }) => collection(await listSessions(ctx, query), sessionView),
  }),

  route({
    method: 'DELETE',
    path: '/sessions/:id',
    operationId: 'revokeSession',
    scope: 'credentials',
    tag: 'Sessions',
    summary: 'Revoke a session',
    description: `Every process refuses it within 5 seconds, and its open subscriptions end with an UNAUTHENTICATED error. ${ONLY_BACKEND}`,
    actsAsChannel: false,
    params: z.object({ id: apiUuid.meta({ description: 'The session id.' }) }),
    failures: [404],
    responses: { 204: { description: 'The session was revoked.' } },
    handler: async ({ ctx, params }) => {
      await revokeSession(ctx, params.id);
      return new FetchResponse(null, { status: 204 });
    },
  }),

  route({
    method: 'DELETE',
    path: '/sessions',
    operationId: 'revokeUserSessions',
    scope: 'credentials',
    tag: 'Sessions',
    summary: "Revoke a user's sessions",
    description: `Revokes every live session of the user whose channels the credential can all act as. ${ONLY_BACKEND}`,
    actsAsChannel: false,
    query: sessionUserQuerySchema,
    responses: { 200: { description: 'How many sessions were revoked.', schema: z.object({ data: z.object({ revoked: z.int() }) }) } },
    handler: async ({ ctx, query }) => json(200, { data: { revoked: await revokeUserSessions(ctx, query.user) } }),
  }),
];
