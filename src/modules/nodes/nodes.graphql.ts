import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { builder, type GraphQLContext } from '../../graphql/builder.js';
import { NodeInterface, asNode } from '../../graphql/node.js';
import type { PrismaQuery } from '../../db/query.js';
import { readableChannelIds } from '../../context/request.js';
import { MAX_NODE_IDS, identifyNodes, type NodeKind } from './nodes.service.js';

/** The query Pothos plans for the rows of `type` the field `info` answers (its fragments on that type, relations included), with their ids. */
function typeQuery(ctx: GraphQLContext, info: GraphQLResolveInfo, type: NodeKind): PrismaQuery {
  const query = queryFromInfo({ context: ctx, info, typeName: type }) as { select?: Record<string, unknown> };
  return (query.select ? { ...query, select: { ...query.select, id: true } } : query) as PrismaQuery;
}

type Load = (ctx: GraphQLContext, info: GraphQLResolveInfo, ids: string[]) => Promise<{ id: string }[]>;

/** How the rows of each kind of node are read, by id, once their visibility was established (and again, for what changed since). */
const LOADS: Record<NodeKind, Load> = {
  Contact: (ctx, info, ids) =>
    ctx.prisma.contact.findMany({ ...typeQuery(ctx, info, 'Contact'), where: { id: { in: ids }, workspaceId: ctx.auth.workspace.id, deletedAt: null } }),
  Conversation: (ctx, info, ids) =>
    ctx.prisma.conversation.findMany({
      ...typeQuery(ctx, info, 'Conversation'),
      where: { id: { in: ids }, workspaceId: ctx.auth.workspace.id, channelId: { in: readableChannelIds(ctx.auth) } },
    }),
  Message: (ctx, info, ids) =>
    ctx.prisma.message.findMany({ ...typeQuery(ctx, info, 'Message'), where: { id: { in: ids }, workspaceId: ctx.auth.workspace.id, channelId: { in: readableChannelIds(ctx.auth) } } }),
  Template: (ctx, info, ids) =>
    ctx.prisma.channelTemplate.findMany({
      ...typeQuery(ctx, info, 'Template'),
      where: { id: { in: ids }, workspaceId: ctx.auth.workspace.id, channelId: { in: readableChannelIds(ctx.auth) } },
    }),
  User: (ctx, _info, ids) => ctx.prisma.user.findMany({ select: { id: true, name: true, email: true }, where: { id: { in: ids }, workspaceId: ctx.auth.workspace.id } }),
  // The credential's channels are frozen (shared by its cached requests): each node is a copy, to carry its type.
  Channel: async (ctx, _info, ids) => ctx.auth.channels.filter((channel) => ids.includes(channel.id)).map((channel) => ({ ...channel })),
};

/**
 * The nodes of `ids` in their order, null for what the caller cannot see: one statement finds
 * each id's kind, then one read per kind found loads the rows with what the selection needs.
 */
async function resolveNodes(ctx: GraphQLContext, info: GraphQLResolveInfo, ids: readonly string[]): Promise<({ id: string } | null)[]> {
  const kinds = await identifyNodes(ctx, ids);
  const byKind = new Map<NodeKind, string[]>();
  for (const [id, kind] of kinds) byKind.set(kind, [...(byKind.get(kind) ?? []), id]);
  const rows = new Map<string, { id: string }>();
  await Promise.all(
    [...byKind].map(async ([kind, kindIds]) => {
      for (const row of await LOADS[kind](ctx, info, kindIds)) rows.set(row.id, asNode(row, kind));
    }),
  );
  return ids.map((id) => rows.get(id.toLowerCase()) ?? null);
}

builder.queryFields((t) => ({
  node: t.field({
    type: NodeInterface,
    nullable: true,
    description: 'The object with this id (a REST UUID), or null when the caller cannot see it: another workspace’s, another channel’s, or none.',
    scope: 'read',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx, info) => (await resolveNodes(ctx, info, [String(args.id)]))[0] ?? null,
  }),
  nodes: t.field({
    type: [NodeInterface],
    nullable: { list: false, items: true },
    description: `The objects with these ids, in their order (at most ${MAX_NODE_IDS}); null for each the caller cannot see.`,
    scope: 'read',
    args: { ids: t.arg.idList({ required: true }) },
    // Each id costs its selection; more ids than allowed cost it once, and the field refuses them.
    complexity: (args) => ({ field: 1, multiplier: args.ids.length <= MAX_NODE_IDS ? Math.max(args.ids.length, 1) : 1 }),
    resolve: (_root, args, ctx, info) => resolveNodes(ctx, info, args.ids.map(String)),
  }),
}));
