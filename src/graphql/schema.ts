import { builder } from './builder.js';
import './scalars.js';
import '../modules/workspaces/workspaces.graphql.js';
import '../modules/channels/channels.graphql.js';
import '../modules/viewer/viewer.graphql.js';

builder.queryType({});

export const schema = builder.toSchema({ sortSchema: true });
