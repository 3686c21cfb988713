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
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { isPromise, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './builder.js';
import { tooComplexError } from './limits.js';
import { ResponsePaths } from './response-paths.js';

type ResponsePath = GraphQLResolveInfo['path'];

/**
 * A resolver's failure located at its field, as the interpreter locates it: the compiled query
 * reports only the line and column, and answers are written from the error's document nodes.
 */
function located(error: unknown, info: GraphQLResolveInfo) {
  return locatedError(error, info.fieldNodes, responsePathAsArray(info.path));
}

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
        const paths = (context as GraphQLContext).responsePaths;
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

/** What is known of a parsed document whatever the request (yoga hands back the same object for the same text). */
interface DocumentFacts {
  /** Its operation when it holds exactly one, else null. */
  operation: OperationDefinitionNode | null;
  /** Whether the compiler may run it (`compilableQuery`); computed on first need. */
  compilable?: boolean;
  /** Its costs, by the values of the variables its cost depends on (`costVariables`). */
  costs?: Map<string, number>;
  /**
   * The variables its cost can depend on: those in the arguments of fields whose complexity is
   * computed from their arguments (a connection's page, `nodes`' ids); computed on first need.
   */
  costVariables?: readonly string[];
}

/** Facts of each document, kept as long as yoga's parser cache keeps the document. */
const documentFacts = new WeakMap<DocumentNode, DocumentFacts>();

function factsOf(document: DocumentNode): DocumentFacts {
  let facts = documentFacts.get(document);
  if (!facts) {
    const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
    facts = { operation: operations.length === 1 ? operations[0]! : null };
    documentFacts.set(document, facts);
  }
  return facts;
}

function soleOperation(document: DocumentNode): OperationDefinitionNode | null {
  return factsOf(document).operation;
}

/** Whether the request names no operation, or the document's one operation. */
const names = (args: ExecutionArgs, operation: OperationDefinitionNode) => args.operationName == null || args.operationName === (operation.name?.value ?? '');

/**
 * Whether the compiler may run the document: it holds one operation, a query. The compiler
 * caches its code by document alone, so a document of several operations would run whichever
 * was compiled first. It also writes the conditions of `@skip` and `@include` onto the
 * document's shared fragment nodes, so a condition on one spread of a fragment would apply to
 * every other spread of it. And it knows nothing of `@defer` and `@stream`: it would answer such
 * a query whole, in one part, where the interpreter delivers it incrementally.
 */
function compilableQuery(document: DocumentNode): boolean {
  const facts = factsOf(document);
  if (facts.compilable !== undefined) return facts.compilable;
  let verdict = facts.operation?.operation === 'query';
  if (verdict) {
    visit(document, {
      Directive(node) {
        if (INTERPRETER_ONLY.has(node.name.value)) {
          verdict = false;
          return BREAK;
        }
        return undefined;
      },
    });
  }
  facts.compilable = verdict;
  return verdict;
}

/** Directives that keep a query on the interpreter (`compilableQuery`). */
const INTERPRETER_ONLY = new Set(['skip', 'include', 'defer', 'stream']);

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

/** The variables the cost of `document` can depend on (`DocumentFacts.costVariables`), found once per document. */
function costVariablesOf(schema: GraphQLSchema, document: DocumentNode): readonly string[] {
  const facts = factsOf(document);
  if (facts.costVariables) return facts.costVariables;
  const names = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        if (typeof typeInfo.getFieldDef()?.extensions?.complexity !== 'function') return;
        for (const argument of node.arguments ?? []) {
          visit(argument.value, {
            Variable(variable) {
              names.add(variable.name.value);
            },
          });
        }
      },
    }),
  );
  facts.costVariables = [...names];
  return facts.costVariables;
}

/**
 * What a cost is remembered by: the values of the variables it can depend on. A query the
 * compiler may run is remembered by all its variables, so that one whose variables the
 * interpreter would refuse is never taken for costed and compiled; any other operation runs on the
 * interpreter, which refuses such variables itself whatever its cost.
 */
function costKey(args: ExecutionArgs, variables: Record<string, unknown>): string | null {
  if (compilableQuery(args.document)) return variablesKey(variables);
  const relevant: Record<string, unknown> = {};
  for (const name of costVariablesOf(args.schema, args.document)) relevant[name] = variables[name];
  return variablesKey(relevant);
}

/**
 * The operation's cost with these variables, or null when they or its arguments are ones the
 * interpreter will refuse with its own error. Costing reads the document and the variables'
 * values only (no field's complexity depends on the caller), so a page fetched again and again
 * with the same variables is costed once, and a mutation whose cost depends on none of its
 * variables once for all of them (`costKey`).
 */
function costOf(args: ExecutionArgs, context: GraphQLContext): number | null {
  const variables = args.variableValues ?? {};
  const key = costKey(args, variables);
  const facts = factsOf(args.document);
  const cached = key === null ? undefined : facts.costs?.get(key);
  if (cached !== undefined) return cached;
  let complexity: number;
  try {
    ({ complexity } = complexityFromQuery(args.document, { schema: args.schema, variables, ctx: context }));
  } catch {
    return null;
  }
  if (key !== null && key.length <= COST_KEY_LIMIT) {
    facts.costs ??= new Map();
    if (facts.costs.size < COSTS_PER_DOCUMENT) facts.costs.set(key, complexity);
  }
  return complexity;
}

/** Whether the operation's cost with these variables is within the limit, costed once per request. */
function withinCost(args: ExecutionArgs): boolean {
  const context = args.contextValue as GraphQLContext;
  if (context.costed) return true;
  const complexity = costOf(args, context);
  if (complexity === null || complexity > context.maxQueryCost) return false;
  context.costed = true;
  return true;
}

/**
 * Whether this execution runs compiled. Besides the document's verdict, its cost with these
 * variables must be within the limit: an over-cost query is refused by the interpreter as
 * before, without first being compiled (its fragments expanded at every use).
 */
export function runsCompiled(args: ExecutionArgs): boolean {
  if (!compilableQuery(args.document) || !names(args, soleOperation(args.document)!) || !withinCost(args)) return false;
  (args.contextValue as GraphQLContext).responsePaths = new ResponsePaths();
  return true;
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
      if (context.costed) return;
      const cost = costOf(args, context);
      if (cost === null) return;
      if (cost > context.maxQueryCost) setResultAndStopExecution({ errors: [tooComplexError(cost, context.maxQueryCost)] });
      else context.costed = true;
    },
  };
}

/**
 * Queries run as code compiled once per document by graphql-jit: it halves the cost of
 * executing a list (no per-field argument, info and completion machinery of the interpreter).
 * Mutations keep the interpreter, which runs their root fields one after another as the
 * specification requires and whose error semantics the payloads were built on; subscriptions
 * keep it too, and so does any query `compilableQuery` or the cost refuses (one with `@defer` or
 * `@stream` among them: only the interpreter delivers it incrementally).
 */
export function compiledQueriesPlugin(): Plugin {
  return useGraphQlJit({}, { enableIf: runsCompiled }) as Plugin;
}
