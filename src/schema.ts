import { builder } from './graphql/builder.js';
import { internResponsePaths } from './graphql/jit.js';
import { checkRowColumns } from './graphql/rows.js';
import { SCHEMA_DIRECTIVES } from './graphql/incremental.js';
import './graphql/scalars.js';
import './modules/workspaces/workspaces.graphql.js';
import './modules/channels/channels.graphql.js';
import './modules/viewer/viewer.graphql.js';
import './modules/contacts/contacts.graphql.js';
import './modules/templates/templates.graphql.js';
import './modules/conversations/conversations.graphql.js';
import './modules/messages/messages.graphql.js';
import './modules/activity/activity.graphql.js';
import './modules/sessions/sessions.graphql.js';
import './modules/users/users.graphql.js';
import './modules/nodes/nodes.graphql.js';
import './modules/broadcasts/broadcasts.graphql.js';

/**
 * The GraphQL schema, assembled above the domains whose types it gathers: each module's
 * `<domain>.graphql.ts` adds its types and fields to the builder when imported (docs/architecture.md).
 */
builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

export const schema = internResponsePaths(checkRowColumns(builder.toSchema({ sortSchema: true, directives: SCHEMA_DIRECTIVES })));
