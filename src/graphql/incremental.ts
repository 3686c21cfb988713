import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { BREAK, execute, specifiedDirectives, visit, type DocumentNode, type GraphQLDirective, type GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { logMaskedFailures } from '../errors/log.js';
import type { GraphQLContext } from './builder.js';
import { maskGraphQLError } from './errors.js';

/*
 * Incremental delivery (docs/graphql.md#incremental-delivery-defer-and-stream): `@defer` on a
 * fragment and `@stream` on a list, answered over `multipart/mixed` (and as successive events over
 * SSE) by yoga's executor. The directives are part of the schema itself, so the printed schema,
 * codegen and the registration of trusted documents know them as the pipeline does.
 */

/** The schema's directives: graphql-js's own, then `@defer` and `@stream`. */
export const SCHEMA_DIRECTIVES: readonly GraphQLDirective[] = [...specifiedDirectives, GraphQLDeferDirective, GraphQLStreamDirective];

/** The message of a masked failure, yoga's own (its `maskedErrors.errorMessage`). */
const MASKED_MESSAGE = 'Unexpected error.';

/** One part of an incremental answer after the first: the deferred fragments' data and the streamed items, each with its errors. */
interface SubsequentPart {
  incremental?: readonly { errors?: readonly GraphQLError[] }[];
}

/**
 * Errors in the parts after the first go through the one GraphQL error mapping as the first
 * part's do (src/graphql/errors.ts): yoga masks an answer's top-level `errors` only, so a deferred
 * field's domain error would lose its code and an unexpected failure would show its own message.
 * The failures masked are logged on the request's logger, as for any other answer.
 */
function maskSubsequentErrors(): Plugin {
  const mask = maskGraphQLError();
  return {
    onExecute({ args }) {
      const log = (args.contextValue as Partial<GraphQLContext>).state?.log;
      return {
        onExecuteDone() {
          return {
            onNext({ result, setResult }) {
              const increments = (result as SubsequentPart).incremental;
              if (!increments?.some((increment) => increment.errors?.length)) return;
              const incremental = increments.map((increment) => {
                if (!increment.errors?.length) return increment;
                const errors = increment.errors.map((error) => mask(error, MASKED_MESSAGE) as GraphQLError);
                if (log) logMaskedFailures(log, errors);
                return { ...increment, errors };
              });
              setResult({ ...result, incremental } as typeof result);
            },
          };
        },
      };
    },
  };
}

/** Whether each document uses `@defer` or `@stream`, as long as yoga's parser cache keeps it. */
const incrementalDocuments = new WeakMap<DocumentNode, boolean>();

function usesIncrementalDelivery(document: DocumentNode): boolean {
  let uses = incrementalDocuments.get(document);
  if (uses === undefined) {
    uses = false;
    visit(document, {
      Directive(node) {
        if (node.name.value !== 'defer' && node.name.value !== 'stream') return undefined;
        uses = true;
        return BREAK;
      },
    });
    incrementalDocuments.set(document, uses);
  }
  return uses;
}

/** Answers in parts yoga writes: `multipart/mixed` and `text/event-stream`. */
const STREAMED_TYPES = [
  ['multipart', 'mixed'],
  ['text', 'event-stream'],
] as const;

/**
 * Whether the request's `Accept` takes an answer in parts, as yoga chooses its answer's type: any
 * UTF-8 media type that `multipart/mixed` or `text/event-stream` matches, wildcards included; a
 * request without `Accept` takes any type.
 */
function acceptsParts(request: Request): boolean {
  const accept = (request.headers.get('accept') || '*/*').replace(/\s/g, '').toLowerCase();
  return accept.split(',').some((entry) => {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.startsWith('charset='));
    if (charset && charset !== 'charset=utf-8') return false;
    const [type, subtype] = mediaType.split('/');
    return STREAMED_TYPES.some(([t, s]) => (type === '*' || type === t) && (subtype === '*' || subtype === s));
  });
}

/**
 * A request whose `Accept` takes no answer in parts (`application/json`,
 * `application/graphql-response+json`) gets the whole answer at once, as the incremental delivery
 * proposal lets a server do: its operation runs on graphql-js's own executor, which delivers
 * nothing incrementally. Otherwise yoga would run it, a mutation included, and then answer 406.
 * An operation that comes without a request (a WebSocket's, a reserved SSE stream's) is left to
 * its transport, which writes each part as a `next` message.
 */
function wholeUnlessAccepted(): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request || !usesIncrementalDelivery(args.document) || acceptsParts(request)) return;
      setExecuteFn(execute as never);
    },
  };
}

/**
 * yoga's defer-stream plugin — its validation rules: a label used once, no `@defer`/`@stream` on
 * a mutation's or subscription's root fields, `@stream` only on lists, fields that can be merged
 * across deferred fragments; the schema already holds the directives, so it leaves it as it is —
 * the whole answer for a client that takes no parts, and the masking of the later parts' errors.
 * Before any plugin that wraps the executor (tracing), which must wrap the one chosen here.
 */
export function incrementalDeliveryPlugin(): Plugin {
  return { onPluginInit: ({ addPlugin }) => [useDeferStream() as Plugin, wholeUnlessAccepted(), maskSubsequentErrors()].forEach(addPlugin) };
}

/** The validation rules alone, for checking a document outside a request (src/graphql/document-check.ts). */
export function incrementalValidationPlugin(): Plugin {
  return useDeferStream() as Plugin;
}
