import { builder } from '../../graphql/builder.js';
import { UserError, type UserErrorShape } from '../../graphql/user-errors.js';
import { SESSION_SCOPES } from '../../context/scopes.js';
import { toUserErrors } from '../../graphql/errors.js';
import { UserObject } from '../users/users.graphql.js';
import { mintSession, type SessionRow } from './sessions.service.js';

const SessionScopeEnum = builder.enumType('SessionScope', {
  description: 'What a session may do: read (every query and subscription), send (sendMessage), contacts (createContact, updateContact), conversations (closing, reopening and other changes to conversations).',
  values: SESSION_SCOPES,
});

type MintedSession = SessionRow & { token: string };

const SessionObject = builder.objectRef<MintedSession>('Session').implement({
  description: 'A browser session: a short-lived, scoped token acting as one workspace user.',
  fields: (t) => ({
    id: t.exposeID('id'),
    token: t.exposeString('token', { description: 'The session token (`cst_…`): shown only when the session is minted, stored as a hash.' }),
    user: t.field({ type: UserObject, resolve: (session) => session.user }),
    scopes: t.field({ type: [SessionScopeEnum], resolve: (session) => SESSION_SCOPES.filter((scope) => session.scopes.includes(scope)) }),
    channelIds: t.idList({ resolve: (session) => session.channelIds }),
    origins: t.exposeStringList('origins', { description: 'The origins the session may be used from; empty for any.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'Refresh before then: mint a new session through your backend.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const CreateSessionInput = builder.inputType('CreateSessionInput', {
  fields: (t) => ({
    user: t.string({ required: true, description: "The workspace user the session acts as: the user's id or email." }),
    ttlSeconds: t.int({ description: 'How long the session lives, in seconds (60–86400, default 3600).' }),
    scopes: t.field({ type: [SessionScopeEnum], description: 'Default: every scope.' }),
    channelIds: t.idList({ description: 'Channels the session may act as, each one the minting credential can act as; default all of them.' }),
    origins: t.stringList({ description: 'Browser origins the session may be used from; default any.' }),
  }),
});

interface CreateSessionPayloadShape {
  session: MintedSession | null;
  userErrors: UserErrorShape[];
}

const CreateSessionPayload = builder.objectRef<CreateSessionPayloadShape>('CreateSessionPayload').implement({
  fields: (t) => ({
    session: t.field({ type: SessionObject, nullable: true, resolve: (payload) => payload.session }),
    userErrors: t.field({ type: [UserError], resolve: (payload) => payload.userErrors }),
  }),
});

/** REST field names as the input's. */
const GRAPHQL_NAMES: Record<string, string> = { ttl_seconds: 'ttlSeconds', channels: 'channelIds' };

builder.mutationField('createSession', (t) =>
  t.field({
    type: CreateSessionPayload,
    description: 'Mints a browser session for a workspace user. Backend credentials only: a session is refused (FORBIDDEN).',
    scope: 'credentials',
    args: { input: t.arg({ type: CreateSessionInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      try {
        // The REST body of the same request; null fields are absent there too.
        const session = await mintSession(ctx, {
          user: input.user,
          ttl_seconds: input.ttlSeconds,
          scopes: input.scopes,
          channels: input.channelIds?.map(String),
          origins: input.origins,
        });
        return { session, userErrors: [] };
      } catch (error) {
        const userErrors = toUserErrors(error, (field) => GRAPHQL_NAMES[field] ?? field);
        if (!userErrors) throw error;
        return { session: null, userErrors };
      }
    },
  }),
);
