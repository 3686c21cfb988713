import { builder } from '../../graphql/builder.js';
import { actingChannel } from '../../context/request.js';
import { SCOPES } from '../../context/scopes.js';
import type { AuthContext } from '../../context/types.js';
import { WorkspaceType } from '../workspaces/workspaces.graphql.js';
import { ChannelObject } from '../channels/channels.graphql.js';
import { UserObject } from '../users/users.graphql.js';

const ScopeEnum = builder.enumType('Scope', {
  description:
    'What a credential may do: read (every query and subscription), send (sendMessage), contacts (createContact, updateContact), conversations (changes to conversations), broadcasts (creating and steering broadcasts), credentials (minting sessions: backend credentials only).',
  values: SCOPES,
});

/** When the caller's credential stops working: its own expiry, or a session's minting credential's, whichever comes first. */
function expiryOf(auth: AuthContext): Date | null {
  const dates = [auth.expiresAt, auth.mintedByExpiresAt].filter((date): date is Date => date !== null);
  return dates.length ? new Date(Math.min(...dates.map((date) => date.getTime()))) : null;
}

const Viewer = builder.objectRef<AuthContext>('Viewer').implement({
  description: 'The authenticated caller: who it is, what it may do, its workspace and the channels it acts as.',
  fields: (t) => ({
    workspace: t.field({ type: WorkspaceType, resolve: (auth) => auth.workspace }),
    channel: t.field({ type: ChannelObject, resolve: (auth) => actingChannel(auth) }),
    user: t.field({
      type: UserObject,
      nullable: true,
      description: 'The workspace user a session acts as; null for backend credentials (channel keys, connection tokens).',
      resolve: (auth) => auth.credential.user,
    }),
    scopes: t.field({ type: [ScopeEnum], description: "The credential's scopes.", resolve: (auth) => SCOPES.filter((scope) => auth.credential.scopes[scope]) }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the credential stops working (a session: refresh before then); null when it does not expire.',
      resolve: expiryOf,
    }),
    channels: t.field({ type: [ChannelObject], description: 'Every active channel the credential can act as.', resolve: (auth) => auth.channels }),
  }),
});

builder.queryField('viewer', (t) => t.field({ type: Viewer, scope: 'read', resolve: (_root, _args, ctx) => ctx.auth }));
