import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import type { ObjectRef } from '@pothos/core';
import { connectionComplexity, connectionType, pageArgs, pageFromArgs } from '../../graphql/connection.js';
import { listUsers } from './users.service.js';

/** A workspace user: who a session acts as, and who may be named in a message's `from`. */
export const UserObject = builder.objectRef<{ id: string; name: string; email: string }>('User').implement({
  description: 'A workspace user.',
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
  }),
});

const UserConnection = connectionType('User', UserObject as unknown as ObjectRef<any, { id: string; name: string; email: string; createdAt: Date }>);

builder.queryField('users', (t) =>
  t.field({
    type: UserConnection,
    nullable: true,
    description: "The workspace's users (for assignment), newest first.",
    scope: 'read',
    args: pageArgs,
    complexity: connectionComplexity,
    resolve: (_root, args, ctx) => listUsers(ctx, pageFromArgs(args)),
  }),
);
