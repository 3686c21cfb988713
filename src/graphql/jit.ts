import { useGraphQlJit } from '@envelop/graphql-jit';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import {
  BREAK,
  Kind,
  getNamedType,
  isLeafType,
  locatedError,
  responsePathAsArray,
  isObjectType,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { isPromise, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './builder.js';
import { costedWithinLimit, tooComplexError } from './limits.js';

type ResponsePath = GraphQLResolveInfo['path'];

/** A response position's one path object in a request, with the positions beneath it. */
class InternedPath {
  /** Created when a position beneath is first interned: a node whose fields are all leaves needs none. */
  children: Map<string | number, InternedPath> | undefined;
  constructor(
    readonly prev: InternedPath | undefined,
    readonly key: string | number,
    readonly typename: string | undefined,
  ) {}
}

/**
 * The one path object of each response position in a request. graphql-js hands every resolver
 * beneath a position the same linked path object; graphql-jit builds the links afresh at each
 * call. Pothos' Prisma plugin records the selection a parent loaded against the path object of
 * that parent's field and finds it again by walking a child's `path.prev` links by identity, so
 * without one object per position a relation that was already loaded (`messages → contact`)
 * would be fetched a second time.
 */
class ResponsePaths {
  private readonly roots = new Map<string | number, InternedPath>();

  intern(path: ResponsePath): InternedPath {
    if (path instanceof InternedPath) return path;
    const prev = path.prev && this.intern(path.prev);
    const siblings = prev ? (prev.children ??= new Map()) : this.roots;
    let interned = siblings.get(path.key);
    if (!interned) {
      interned = new InternedPath(prev, path.key, path.typename);
      siblings.set(path.key, interned);
    }
    return interned;
  }
}

/**
 * A resolver's failure located at its field, as the interpreter locates it: the compiled query
 * reports only the line and column, and answers are written from the error's document nodes.
 */
function located(error: unknown, info: GraphQLResolveInfo) {
  return locatedError(error, info.fieldNodes, responsePathAsArray(info.path));
}

/** The path tables of the requests being executed by compiled queries, by their context. */
const compiledRequests = new WeakMap<object, ResponsePaths>();

/**
 * Gives the resolvers that record or look up loaded selections — fields of an object type, and
 * fields that select from their parent row — the interned path of their position while a compiled
 * query runs, and locates their failures at their field as the interpreter does. Leaf fields that
 * read a value off their parent have no part in it and keep the compiled code's own path. Under
 * the interpreter the table is absent and nothing changes.
 */
export function internResponsePaths(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve;
      if (!resolve || (isLeafType(getNamedType(field.type)) && !field.extensions?.pothosPrismaSelect)) continue;
      field.resolve = (parent, args, context, info) => {
        const paths = compiledRequests.get(context as object);
        if (!paths) return resolve(parent, args, context, info);
        // The info object is the compiled query's own, built for this one call.
        (info as { path: ResponsePath }).path = paths.intern(info.path);
        try {
          const result = resolve(parent, args, context, info);
          return isPromise(result)
            ? result.then(undefined, (error: unknown) => {
                throw located(error, info);
              })
            : result;
        } catch (error) {
          throw located(error, info);
        }
      };
    }
  }
  return schema;
}

/** The operation of each document that holds exactly one, or null, by the parsed document. */
const soleOperations = new WeakMap<DocumentNode, OperationDefinitionNode | null>();

function soleOperation(document: DocumentNode): OperationDefinitionNode | null {
  let operation = soleOperations.get(document);
  if (operation === undefined) {
    const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
    operation = operations.length === 1 ? operations[0]! : null;
    soleOperations.set(document, operation);
  }
  return operation;
}

/** Whether the request names no operation, or the document's one operation. */
const names = (args: ExecutionArgs, operation: OperationDefinitionNode) => args.operationName == null || args.operationName === (operation.name?.value ?? '');

/** Documents already judged, by the parsed document (yoga hands back the same object for the same text). */
const verdicts = new WeakMap<DocumentNode, boolean>();

/**
 * Whether the compiler may run the document: it holds one operation, a query. The compiler
 * caches its code by document alone, so a document of several operations would run whichever
 * was compiled first. It also writes the conditions of `@skip` and `@include` onto the
 * document's shared fragment nodes, so a condition on one spread of a fragment would apply to
 * every other spread of it.
 */
function compilableQuery(document: DocumentNode): boolean {
  let verdict = verdicts.get(document);
  if (verdict !== undefined) return verdict;
  verdict = soleOperation(document)?.operation === 'query';
  if (verdict) {
    visit(document, {
      Directive(node) {
        if (node.name.value === 'skip' || node.name.value === 'include') {
          verdict = false;
          return BREAK;
        }
        return undefined;
      },
    });
  }
  verdicts.set(document, verdict);
  return verdict;
}

/** Costs already computed, by document and then by the variables as the request sent them. */
const costs = new WeakMap<DocumentNode, Map<string, number>>();
/** Variables longer than this as JSON are costed afresh; a document keeps at most this many costs. */
const COST_KEY_LIMIT = 512;
const COSTS_PER_DOCUMENT = 64;

/** The variables as JSON, or null for values JSON cannot write (nested too deep for the stack). */
function variablesKey(variables: Record<string, unknown>): string | null {
  try {
    return JSON.stringify(variables);
  } catch {
    return null;
  }
}

/**
 * The operation's cost with these variables, or null when they or its arguments are ones the
 * interpreter will refuse with its own error. Costing reads the document and the variables'
 * values only (no field's complexity depends on the caller), so a page fetched again and again
 * with the same variables is costed once.
 */
function costOf(args: ExecutionArgs, context: GraphQLContext): number | null {
  const variables = args.variableValues ?? {};
  const key = variablesKey(variables);
  let known = costs.get(args.document);
  const cached = key === null ? undefined : known?.get(key);
  if (cached !== undefined) return cached;
  let complexity: number;
  try {
    ({ complexity } = complexityFromQuery(args.document, { schema: args.schema, variables, ctx: context }));
  } catch {
    return null;
  }
  if (key !== null && key.length <= COST_KEY_LIMIT) {
    if (!known) costs.set(args.document, (known = new Map()));
    if (known.size < COSTS_PER_DOCUMENT) known.set(key, complexity);
  }
  return complexity;
}

/** Whether the operation's cost with these variables is within the limit, costed once per request. */
function withinCost(args: ExecutionArgs): boolean {
  const context = args.contextValue as GraphQLContext;
  if (costedWithinLimit.has(context)) return true;
  const complexity = costOf(args, context);
  if (complexity === null || complexity > context.maxQueryCost) return false;
  costedWithinLimit.add(context);
  return true;
}

/**
 * Whether this execution runs compiled. Besides the document's verdict, its cost with these
 * variables must be within the limit: an over-cost query is refused by the interpreter as
 * before, without first being compiled (its fragments expanded at every use).
 */
export function runsCompiled(args: ExecutionArgs): boolean {
  if (!compilableQuery(args.document) || !names(args, soleOperation(args.document)!) || !withinCost(args)) return false;
  compiledRequests.set(args.contextValue as object, new ResponsePaths());
  return true;
}

/**
 * Whether this execution is a document's one mutation, within the cost limit with these
 * variables: the interpreter runs it (its root fields one after another), as yoga's executor does.
 */
export function runsMutation(args: ExecutionArgs): boolean {
  const operation = soleOperation(args.document);
  return operation?.operation === 'mutation' && names(args, operation) && withinCost(args);
}

/**
 * Every query and mutation is costed, with its own variables, before it runs; one over
 * GRAPHQL_MAX_COST is refused whole, with no data. The schema's complexity plugin then costs only
 * what this did not (subscriptions, and operations whose variables the interpreter refuses).
 */
export function costLimitPlugin(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue as unknown as GraphQLContext;
      if (costedWithinLimit.has(context)) return;
      const cost = costOf(args, context);
      if (cost === null) return;
      if (cost > context.maxQueryCost) setResultAndStopExecution({ errors: [tooComplexError(cost, context.maxQueryCost)] });
      else costedWithinLimit.add(context);
    },
  };
}

/**
 * Queries run as code compiled once per document by graphql-jit: it halves the cost of
 * executing a list (no per-field argument, info and completion machinery of the interpreter).
 * Mutations keep the interpreter, which runs their root fields one after another as the
 * specification requires and whose error semantics the payloads were built on; subscriptions
 * keep it too, and so does any query `compilableQuery` or the cost refuses.
 */
export function compiledQueriesPlugin(onCompiled: (args: ExecutionArgs) => void = () => {}): Plugin {
  return useGraphQlJit(
    {},
    {
      enableIf: (args) => {
        if (!runsCompiled(args)) return false;
        onCompiled(args);
        return true;
      },
    },
  ) as Plugin;
}
