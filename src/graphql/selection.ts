import { queryFromInfo } from '@pothos/plugin-prisma';
import {
  Kind,
  getNamedType,
  isLeafType,
  isObjectType,
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';
import type { GraphQLContext } from './builder.js';

type Query = Record<string, unknown>;

/** What a field node of a parsed document was found to load, for the type it loads. */
interface Remembered {
  type: GraphQLNamedType;
  query: Query;
}

/** By the one field node a resolver ran for (yoga hands back the same parsed document for the same text). */
const remembered = new WeakMap<FieldNode, Remembered | null>();

/**
 * The Prisma query for the rows a field resolves, at `path` beneath it (`['edges', 'node']` for a
 * connection), as `queryFromInfo` plans it; see `fixedQuery`.
 */
export function selectionQuery(ctx: GraphQLContext, info: GraphQLResolveInfo, path: string[] = []): Query {
  return fixedQuery(ctx, info, path) ?? plan(ctx, info, path);
}

/**
 * Planning a query costs as much as reading the rows' columns back. When the selection at `path`
 * is leaf fields only, written without variables or directives, its plan depends on the document
 * alone, so it is made once per document and returned here; what the rows load then follows from
 * the text, never from the variables or the caller. Anything else (a relation, a field that
 * selects for itself, a condition, a fragment on the way down) is undefined: planned per request.
 */
export function fixedQuery(ctx: GraphQLContext, info: GraphQLResolveInfo, path: string[] = []): Query | undefined {
  const [field] = info.fieldNodes;
  if (!field || info.fieldNodes.length !== 1) return undefined;
  const type = getNamedType(info.returnType);
  let known = remembered.get(field);
  if (known === undefined) {
    known = fixedSelection(info, field, path) ? { type, query: deepFreeze(plan(ctx, info, path)) } : null;
    remembered.set(field, known);
  }
  return known && known.type === type ? known.query : undefined;
}

function plan(ctx: GraphQLContext, info: GraphQLResolveInfo, path: string[]): Query {
  return queryFromInfo({ context: ctx, info, path }) as Query;
}

/** Whether the selection at `path` beneath `field` is leaf fields only, with nothing that varies by request. */
function fixedSelection(info: GraphQLResolveInfo, field: FieldNode, path: string[]): boolean {
  let type: GraphQLNamedType = getNamedType(info.returnType);
  let selectionSet = field.selectionSet;
  for (const name of path) {
    if (!isObjectType(type) || !selectionSet) return false;
    const matches = selectionSet.selections.filter((s) => s.kind !== Kind.FIELD || s.name.value === name);
    const [only] = matches;
    // One plain field on the way down: a fragment or a second selection of it is left to the planner.
    if (matches.length !== 1 || only?.kind !== Kind.FIELD || only.alias || only.directives?.length || only.arguments?.length) return false;
    const next: GraphQLField<unknown, unknown> | undefined = type.getFields()[name];
    if (!next) return false;
    type = getNamedType(next.type);
    selectionSet = only.selectionSet;
  }
  return isObjectType(type) && !!selectionSet && leavesOnly(info, type, selectionSet, new Set());
}

function leavesOnly(info: GraphQLResolveInfo, type: GraphQLObjectType, selectionSet: SelectionSetNode, seen: Set<string>): boolean {
  const fields = type.getFields();
  return selectionSet.selections.every((selection) => {
    if (selection.directives?.length) return false;
    switch (selection.kind) {
      case Kind.FIELD: {
        if (selection.name.value === '__typename') return true;
        const definition = fields[selection.name.value];
        return (
          !!definition &&
          !selection.arguments?.length &&
          isLeafType(getNamedType(definition.type)) &&
          !definition.extensions?.pothosPrismaSelect
        );
      }
      case Kind.INLINE_FRAGMENT:
        return (!selection.typeCondition || selection.typeCondition.name.value === type.name) && leavesOnly(info, type, selection.selectionSet, seen);
      case Kind.FRAGMENT_SPREAD: {
        const fragment = info.fragments[selection.name.value];
        if (!fragment || fragment.typeCondition.name.value !== type.name || seen.has(fragment.name.value)) return false;
        seen.add(fragment.name.value);
        return leavesOnly(info, type, fragment.selectionSet, seen);
      }
      default:
        return false;
    }
  });
}

/** A plan shared by every request of a document must not be changed by any of them. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
