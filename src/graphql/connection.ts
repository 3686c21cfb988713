import type { ObjectRef } from '@pothos/core';
import { ValidationError } from '../errors/domain.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decodeCursor, encodeCursor, type Cursor, type Page } from '../lib/pagination.js';
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
        resolve: (page) => page.items.map((item) => ({ cursor: encodeCursor(item), node: item })),
      }),
      pageInfo: t.field({
        type: PageInfo,
        resolve: (page) => {
          const last = page.items[page.items.length - 1];
          return { hasNextPage: page.hasMore, endCursor: last ? encodeCursor(last) : null };
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

/**
 * A connection's cost: its selection times the page it asks for. Its `first` and
 * `after` are validated here, with the whole operation, before any resolver runs:
 * a bad page nested under a mutation's payload would otherwise be found only
 * after the mutation had committed.
 */
export function connectionComplexity(args: { first?: number | null; after?: string | null }) {
  return { field: 1, multiplier: pageFromArgs(args).limit };
}

export const pageArgs = builder.args((t) => ({
  first: t.int({ description: `Page size, 1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
  after: t.string({ description: 'The endCursor of the previous page.' }),
}));
