import type { ObjectRef } from '@pothos/core';
import { GraphQLError, TypeInfo, getArgumentValues, getOperationAST, visit, visitWithTypeInfo, type DocumentNode, type FieldNode, type GraphQLField, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { domainGraphQLError } from './errors.js';
import { ValidationError } from '../errors/domain.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decodeCursor, encodeCursor, positionOf, type Cursor, type Page, type PageRequest } from '../lib/pagination.js';
import { builder } from './builder.js';

export const PageInfo = builder
  .objectRef<{ hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }>('PageInfo')
  .implement({
    description:
      'Relay page info. Pages are newest first unless their field takes an order. ' +
      'The far side of a page is known exactly (`hasNextPage` of a `first` page, `hasPreviousPage` of a `last` page); ' +
      'the near side is true exactly when the page starts at a cursor (`after`, `before`).',
    fields: (t) => ({
      hasNextPage: t.exposeBoolean('hasNextPage'),
      hasPreviousPage: t.exposeBoolean('hasPreviousPage'),
      startCursor: t.exposeString('startCursor', { nullable: true }),
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
          const first = page.items[0];
          const last = page.items[page.items.length - 1];
          return {
            hasNextPage: page.hasMore,
            hasPreviousPage: page.hasPrevious,
            startCursor: first ? encodeCursor(positionOf(first)) : null,
            endCursor: last ? encodeCursor(positionOf(last)) : null,
          };
        },
      }),
    }),
  });
}

/** A connection's page arguments as the schema declares them (`pageArgs`). */
export interface PageArgs {
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}

/**
 * The page the arguments ask for, validated like REST's `limit` and `cursor`: `first` (1–100,
 * default 25) rows after `after`, or the `last` rows before `before` (a backward page; `before`
 * alone is one too). Both cursors bound the rows either way; `first` with `last` is refused.
 */
export function pageFromArgs(args: PageArgs): PageRequest {
  if (args.first != null && args.last != null) {
    throw ValidationError.field('last', 'first and last cannot be used together: ask for the first rows or the last ones.');
  }
  const backward = args.last != null || (args.first == null && args.before != null);
  const name = args.last != null ? 'last' : 'first';
  const limit = args.first ?? args.last ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw ValidationError.field(name, `${name} must be an integer between 1 and ${MAX_PAGE_SIZE}.`);
  }
  return {
    limit,
    cursor: args.after ? decodeCursor(args.after, 'after') : undefined,
    before: args.before ? decodeCursor(args.before, 'before') : undefined,
    backward,
  };
}

/** The order a connection lists its rows in: newest first (`desc`, every list's own), or oldest first (`asc`). */
export type PageOrder = 'desc' | 'asc';

/**
 * The page `args` ask for in `order`, as the newest-first page that holds the same rows. Oldest
 * first, the list's start is the newest-first list's end: `first` becomes `last`, and `after`
 * (newer rows) becomes `before`. Cursors are positions, so one serves both orders. `inOrder`
 * turns the page read back into `order`.
 */
export function orderedPageFromArgs(args: PageArgs, order: PageOrder | null | undefined): PageRequest {
  const page = pageFromArgs(args);
  if (order !== 'asc') return page;
  return { limit: page.limit, cursor: page.before, before: page.cursor, backward: !page.backward };
}

/** A newest-first page read for `orderedPageFromArgs`, in `order`: oldest first, its rows and its two sides swapped. */
export function inOrder<T extends Cursor>(page: Page<T>, order: PageOrder | null | undefined): Page<T> {
  if (order !== 'asc') return page;
  const items = [...page.items].reverse();
  const last = items[items.length - 1];
  return { ...page, items, hasMore: page.hasPrevious, hasPrevious: page.hasMore, nextCursor: page.hasPrevious && last ? encodeCursor(positionOf(last)) : null };
}

/** The page `args` ask for (in `order`), or null when they are invalid (the field's resolver refuses them). */
function pageOrNull(args: PageArgs, order?: PageOrder | null): PageRequest | null {
  try {
    return orderedPageFromArgs(args, order);
  } catch {
    return null;
  }
}

/**
 * The page to load ahead of a connection's resolver (a relation selected with its parent), as
 * `orderedPageFromArgs` reads it: an invalid one loads the default page, which the resolver then
 * refuses at its own field.
 */
export function pageToLoad(args: PageArgs, order?: PageOrder | null): PageRequest {
  return pageOrNull(args, order) ?? { limit: DEFAULT_PAGE_SIZE };
}

/**
 * A connection's cost: its selection times the page it asks for. An invalid page costs its
 * selection once: the connection's resolver refuses it at its own field, so that the error is
 * located there and the operation's other fields keep their data (a mutation is refused whole
 * before it runs: `pageArgumentsPlugin`).
 */
export function connectionComplexity(args: PageArgs) {
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

/** A field of a document that takes page arguments, with its definition. */
interface PagedField {
  node: FieldNode;
  field: GraphQLField<unknown, unknown>;
}

/** The fields of each document that take page arguments, in document order; kept as long as yoga's parser cache keeps the document. */
const pagedFieldsOf = new WeakMap<DocumentNode, readonly PagedField[]>();

function pagedFields(schema: GraphQLSchema, document: DocumentNode): readonly PagedField[] {
  let found = pagedFieldsOf.get(document);
  if (found) return found;
  const fields: PagedField[] = [];
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const field = typeInfo.getFieldDef();
        if (field && field.args.some((arg) => arg.name === 'first') && field.args.some((arg) => arg.name === 'after')) fields.push({ node, field });
      },
    }),
  );
  found = fields;
  pagedFieldsOf.set(document, found);
  return found;
}

/** The first connection field of `document` whose page arguments are invalid, as its GraphQL error. */
function invalidPage(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>): GraphQLError | null {
  for (const { node, field } of pagedFields(schema, document)) {
    try {
      pageFromArgs(getArgumentValues(field, node, variables) as PageArgs);
    } catch (error) {
      if (!(error instanceof ValidationError)) continue;
      return domainGraphQLError(error, new GraphQLError(error.message, { nodes: [node] }));
    }
  }
  return null;
}

export const pageArgs = builder.args((t) => ({
  first: t.int({ description: `Page size from the start, 1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}); not with last.` }),
  after: t.string({ description: 'The endCursor of the previous page: rows after it.' }),
  last: t.int({ description: `Page size from the end, 1–${MAX_PAGE_SIZE}: the last rows (the oldest), or the rows just before \`before\`; not with first.` }),
  before: t.string({ description: 'The startCursor of the next page: rows before it.' }),
}));
