import type { ObjectRef } from '@pothos/core';
import { BREAK, GraphQLError, TypeInfo, getArgumentValues, getOperationAST, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { domainGraphQLError } from './errors.js';
import { ValidationError } from '../errors/domain.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decodeCursor, encodeCursor, positionOf, type Cursor, type Page } from '../lib/pagination.js';
import { builder } from './builder.js';

export const PageInfo = builder.objectRef<{ hasNextPage: boolean; endCursor: string | null }>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

/**
 * A Relay connection over a keyset page. Cursors are the same opaque keyset
 * positions REST uses; node ids stay plain UUIDs.
 */
export function connectionType<T extends Cursor>(name: string, node: ObjectRef<any, T>) {
  const Edge = builder.objectRef<{ cursor: string; node: T }>(`${name}Edge`).implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      // The node is the row the page was read as; Pothos cannot follow the generic here. Exposed,
      // so a compiled query reads it off the edge instead of calling a resolver for every row.
      node: t.expose('node', { type: node as ObjectRef<any, any> }),
    }),
  });
  return builder.objectRef<Page<T>>(`${name}Connection`).implement({
    fields: (t) => ({
      edges: t.field({
        type: [Edge],
        // The connection field already multiplies by its page size.
        complexity: { field: 1, multiplier: 1 },
        resolve: (page) => page.items.map((item) => ({ cursor: encodeCursor(positionOf(item)), node: item })),
      }),
      pageInfo: t.field({
        type: PageInfo,
        resolve: (page) => {
          const last = page.items[page.items.length - 1];
          return { hasNextPage: page.hasMore, endCursor: last ? encodeCursor(positionOf(last)) : null };
        },
      }),
    }),
  });
}

/** `first` (1–100, default 25) and `after`, validated like REST's `limit` and `cursor`. */
export function pageFromArgs(args: { first?: number | null; after?: string | null }): { limit: number; cursor: Cursor | undefined } {
  const limit = args.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw ValidationError.field('first', `first must be an integer between 1 and ${MAX_PAGE_SIZE}.`);
  }
  return { limit, cursor: args.after ? decodeCursor(args.after, 'after') : undefined };
}

/** The page `args` ask for, or null when they are invalid (the field's resolver refuses them). */
function pageOrNull(args: { first?: number | null; after?: string | null }): ReturnType<typeof pageFromArgs> | null {
  try {
    return pageFromArgs(args);
  } catch {
    return null;
  }
}

/**
 * The page to load ahead of a connection's resolver (a relation selected with its parent): an
 * invalid one loads the default page, which the resolver then refuses at its own field.
 */
export function pageToLoad(args: { first?: number | null; after?: string | null }): ReturnType<typeof pageFromArgs> {
  return pageOrNull(args) ?? { limit: DEFAULT_PAGE_SIZE, cursor: undefined };
}

/**
 * A connection's cost: its selection times the page it asks for. An invalid page costs its
 * selection once: the connection's resolver refuses it at its own field, so that the error is
 * located there and the operation's other fields keep their data (a mutation is refused whole
 * before it runs: `pageArgumentsPlugin`).
 */
export function connectionComplexity(args: { first?: number | null; after?: string | null }) {
  return { field: 1, multiplier: pageOrNull(args)?.limit ?? 1 };
}

/**
 * Refuses a mutation whose selection holds an invalid page (`first`, `after`) anywhere beneath its
 * payload, before it runs: found only when its connection resolved, the mutation would already
 * have committed. The error is located at the connection's field.
 */
export function pageArgumentsPlugin(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'mutation') return;
      const refusal = invalidPage(args.schema, args.document, args.variableValues ?? {});
      if (refusal) setResultAndStopExecution({ data: null, errors: [refusal] });
    },
  };
}

/** The first connection field of `document` whose page arguments are invalid, as its GraphQL error. */
function invalidPage(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>): GraphQLError | null {
  const typeInfo = new TypeInfo(schema);
  let refusal: GraphQLError | null = null;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const field = typeInfo.getFieldDef();
        if (!field || !field.args.some((arg) => arg.name === 'first') || !field.args.some((arg) => arg.name === 'after')) return undefined;
        try {
          pageFromArgs(getArgumentValues(field, node, variables) as { first?: number | null; after?: string | null });
        } catch (error) {
          if (!(error instanceof ValidationError)) return undefined;
          refusal = domainGraphQLError(error, new GraphQLError(error.message, { nodes: [node] }));
          return BREAK;
        }
        return undefined;
      },
    }),
  );
  return refusal;
}

export const pageArgs = builder.args((t) => ({
  first: t.int({ description: `Page size, 1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
  after: t.string({ description: 'The endCursor of the previous page.' }),
}));
