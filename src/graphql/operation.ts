import { GraphQLError, type ExecutionArgs } from 'graphql';
import type { GraphQLParams, YogaServerInstance } from 'graphql-yoga';
import type { RequestState } from '../http/state.js';
import type { DocumentStore } from './trusted-documents.js';
import type { GraphQLContext } from './builder.js';
import { operationParams } from './trusted-documents.js';

/** An operation ready to run: its arguments, and the execute and subscribe of the envelop that prepared it. */
export interface PreparedOperation {
  args: ExecutionArgs;
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

export type PrepareOperation = (state: RequestState, params: GraphQLParams) => Promise<PreparedOperation | readonly GraphQLError[]>;

/**
 * Prepares an operation that arrives outside yoga's HTTP pipeline (a WebSocket's subscribe
 * message, an operation on a reserved SSE stream) exactly as that pipeline does: its text, or the
 * registered document its id names under the caller's trusted-documents policy; then yoga's own
 * envelop — the parser and validation caches, the document limits, the context of the caller in
 * `state` — so that the plugins' hooks around execution (cost limit, compiled queries, masking)
 * run as for HTTP. Refusals come back as GraphQL errors.
 */
export function operationPreparer(yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>, documents: DocumentStore): PrepareOperation {
  return async (state, sent) => {
    let params: GraphQLParams & { query: string };
    try {
      params = await operationParams(documents, state.caller!, sent);
    } catch (error) {
      if (error instanceof GraphQLError) return [error];
      throw error;
    }
    const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({ state, params });
    let document;
    try {
      document = parse(params.query);
    } catch (error) {
      return [error instanceof GraphQLError ? error : new GraphQLError('Syntax error.')];
    }
    const errors = validate(schema, document);
    if (errors.length) return errors;
    const contextValue = await contextFactory();
    return {
      args: { schema, document, operationName: params.operationName ?? null, variableValues: params.variables ?? null, contextValue },
      execute,
      subscribe,
    };
  };
}
