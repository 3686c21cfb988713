import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import { ChannelStatus, ChannelType } from '../../generated/prisma/enums.js';

export const ChannelTypeEnum = builder.enumType(ChannelType, { name: 'ChannelType' });
export const ChannelStatusEnum = builder.enumType(ChannelStatus, { name: 'ChannelStatus' });

export const ChannelObject = builder.prismaObject('Channel', {
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    type: t.expose('type', { type: ChannelTypeEnum }),
    status: t.expose('status', { type: ChannelStatusEnum }),
  }),
});

builder.queryField('channels', (t) =>
  t.field({
    type: [ChannelObject],
    description: 'The channels the credential can act as.',
    scope: 'read',
    resolve: (_root, _args, ctx) => ctx.auth.channels,
  }),
);
