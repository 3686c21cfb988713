import { builder } from '../../graphql/builder.js';
import { actingChannel } from '../../context/request.js';
import type { AuthContext } from '../../context/types.js';
import { WorkspaceType } from '../workspaces/workspaces.graphql.js';
import { ChannelObject } from '../channels/channels.graphql.js';

const Viewer = builder.objectRef<AuthContext>('Viewer').implement({
  description: 'The authenticated caller: its workspace and the channel it acts as.',
  fields: (t) => ({
    workspace: t.field({ type: WorkspaceType, resolve: (auth) => auth.workspace }),
    channel: t.field({ type: ChannelObject, resolve: (auth) => actingChannel(auth) }),
  }),
});

builder.queryField('viewer', (t) => t.field({ type: Viewer, scope: 'read', resolve: (_root, _args, ctx) => ctx.auth }));
