import { execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './builder.js';
import { runsCompiled, runsMutation } from './jit.js';
import { schema } from './schema.js';
import { isRecord } from '../lib/validation.js';

/** The compiled code of each document answered here; the same options as the yoga plugin's. */
const compiledDocuments = new WeakMap<DocumentNode, CompiledQuery | null>();

function compiled(document: DocumentNode, operationName: string | undefined): CompiledQuery | null {
  let query = compiledDocuments.get(document);
  if (query === undefined) {
    const result = compileQuery(schema, document, operationName, {});
    query = isCompiledQuery(result) ? result : null;
    compiledDocuments.set(document, query);
  }
  return query;
}

/** A JSON body as GraphQL over HTTP sends it. */
const JSON_BODY = /^application\/json\s*(;\s*charset=utf-8\s*)?$/i;

/**
 * The media type yoga answers a successful query with, for the `Accept` headers clients send
 * most; undefined for any other header, which yoga negotiates itself.
 */
function answeredType(accept: string | null): string | undefined {
  if (accept === null) return 'application/json';
  switch (accept.replace(/\s/g, '').toLowerCase()) {
    case '*/*':
    case 'application/json':
    case 'application/json;charset=utf-8':
      return 'application/json';
    case 'application/graphql-response+json':
    case 'application/graphql-response+json;charset=utf-8':
    case 'application/graphql-response+json,application/json':
    case 'application/graphql-response+json;charset=utf-8,application/json;charset=utf-8':
      return 'application/graphql-response+json';
    default:
      return undefined;
  }
}

/**
 * Operation texts remembered per app, the oldest leaving first: at most this many, and this many
 * characters in all, so that a caller sending large distinct texts cannot make them a store.
 */
const REMEMBERED_TEXTS = 500;
const REMEMBERED_CHARACTERS = 4 * 1024 * 1024;
/** A longer text is never remembered (a whole document of generated fragments is a few KB). */
const LONGEST_TEXT = 64 * 1024;

/** The text of a request yoga handled: its initial context carries the request's parameters. */
function queryText(context: unknown): string | undefined {
  const query = (context as { params?: { query?: unknown } }).params?.query;
  return typeof query === 'string' ? query : undefined;
}

/**
 * What `answer` came to: the answer itself (200, with its media type and JSON text), or a result
 * with errors that yoga must answer (`handOff`) without running the operation again.
 */
export type CompiledOutcome = { answer: { contentType: string; body: string } } | { errors: ExecutionResult };

export interface CompiledAnswers {
  /** Remembers the text of a query yoga parsed, validated (every rule and limit of this app) and is about to run compiled. */
  remember(args: ExecutionArgs): void;
  /**
   * The answer to a GraphQL request whose text this app's yoga has already parsed, validated
   * and run — a query run here on its compiled code, a mutation on the interpreter, as yoga runs
   * each — or undefined to leave the request to yoga. Taking such a request through yoga's
   * pipeline again (body parsing, parameter checks, the plugins' hooks around parse, validate,
   * context and execute, result negotiation) cost about as much CPU as serving a REST page. Only
   * the common case is answered: a JSON body of `query`, `variables` and `operationName`, an
   * `Accept` header `answeredType` knows, a cost within the limit and a result without errors.
   * Anything else is left to yoga (undefined); a result with errors is handed to it (`handOff`,
   * `plugin`) rather than run a second time, so that a mutation is never run twice.
   */
  answer(
    headers: Pick<Headers, 'get'>,
    body: string,
    context: GraphQLContext,
    label: (document: DocumentNode, operationName: string | undefined) => void,
  ): Promise<CompiledOutcome | undefined>;
  /** Whether a request with these headers could be answered here: a JSON body, an `Accept` answered with JSON. */
  takes(headers: Pick<Headers, 'get'>): boolean;
  /** Has yoga answer `request` from `errors`, the result its operation came to here, as its execution (`plugin`). */
  handOff(request: Request, errors: ExecutionResult): void;
  /**
   * Lets yoga answer a request whose operation already ran here with errors: that result becomes
   * its execution, so that the operation runs once and its errors are masked, located and answered
   * (status included) exactly as for any other execution. Registered after the compiled
   * queries' plugin, whose execute function it then overrides; as the execution itself rather
   * than a replacement result, every plugin's hooks around execution (error masking among them)
   * see it. It also remembers the text of each mutation yoga is about to run.
   */
  plugin: Plugin;
}

/** One app's, never shared with another: what its yoga validated is what its rules allowed. */
export function createCompiledAnswers(): CompiledAnswers {
  const validated = new Map<string, DocumentNode>();
  let characters = 0;
  const resultsForYoga = new WeakMap<Request, ExecutionResult>();
  const remember = (args: ExecutionArgs) => {
    const text = queryText(args.contextValue);
    if (text === undefined || text.length > LONGEST_TEXT || validated.has(text)) return;
    while (validated.size >= REMEMBERED_TEXTS || (validated.size > 0 && characters + text.length > REMEMBERED_CHARACTERS)) {
      const oldest = validated.keys().next().value!;
      validated.delete(oldest);
      characters -= oldest.length;
    }
    validated.set(text, args.document);
    characters += text.length;
  };
  return {
    remember,

    takes: (headers) => JSON_BODY.test(headers.get('content-type') ?? '') && answeredType(headers.get('accept')) !== undefined,

    async answer(headers, body, context, label) {
      if (!JSON_BODY.test(headers.get('content-type') ?? '')) return undefined;
      const type = answeredType(headers.get('accept'));
      if (!type) return undefined;
      let params: unknown;
      try {
        params = JSON.parse(body);
      } catch {
        return undefined;
      }
      if (!isRecord(params) || typeof params.query !== 'string') return undefined;
      for (const key in params) if (key !== 'query' && key !== 'variables' && key !== 'operationName') return undefined;
      const { variables = null, operationName = null } = params;
      if ((variables !== null && !isRecord(variables)) || (operationName !== null && typeof operationName !== 'string')) return undefined;
      const document = validated.get(params.query);
      if (!document) return undefined;
      const args: ExecutionArgs = { schema, document, operationName, variableValues: variables ?? {}, contextValue: context };
      let result: ExecutionResult;
      if (runsCompiled(args)) {
        const query = compiled(document, operationName ?? undefined);
        if (!query) return undefined;
        result = await query.query(undefined, context, args.variableValues);
      } else if (runsMutation(args)) {
        result = await execute(args);
      } else {
        return undefined;
      }
      if (result.errors?.length) return { errors: result };
      label(document, operationName ?? undefined);
      return { answer: { contentType: `${type}; charset=utf-8`, body: JSON.stringify(result) } };
    },

    handOff(request, errors) {
      resultsForYoga.set(request, errors);
    },

    plugin: {
      onExecute({ args, setExecuteFn }) {
        const { request } = args.contextValue as { request?: Request };
        const result = request && resultsForYoga.get(request);
        if (result) {
          resultsForYoga.delete(request);
          setExecuteFn(() => result);
          return;
        }
        // A mutation about to run on yoga's executor, its document validated and costed: the
        // interpreter may run the same text again here.
        if (runsMutation(args)) remember(args);
      },
    },
  };
}
