import { builder } from './builder.js';

/** The object types that are nodes (docs/graphql.md), by their GraphQL names. */
export const NODE_TYPES = ['Contact', 'Conversation', 'Message', 'Channel', 'Template', 'User'] as const;
export type NodeTypeName = (typeof NODE_TYPES)[number];

/** The type each row answered as a node was found as: the row is the node itself, for its type's fields to resolve from. */
const nodeTypes = new WeakMap<object, NodeTypeName>();

/** `row` answered as a node of `type`. */
export function asNode<T extends object>(row: T, type: NodeTypeName): T {
  nodeTypes.set(row, type);
  return row;
}

/**
 * Relay's object identification over the REST ids: every object a client can fetch again by its
 * id alone (`node`, `nodes`). Ids stay the plain UUIDs of REST, not global ids: a UUID names one
 * row of one table, so its type is found where it is stored.
 */
export const NodeInterface = builder.interfaceRef<{ id: string }>('Node').implement({
  description: 'An object with an id: the same UUID as REST. Fetch any of them again with `node(id:)` or `nodes(ids:)`.',
  fields: (t) => ({
    id: t.exposeID('id'),
  }),
  resolveType: (row) => {
    const type = nodeTypes.get(row);
    if (!type) throw new Error('A node was answered without its type.');
    return type;
  },
});
