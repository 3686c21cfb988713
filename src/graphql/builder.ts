import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import PrismaPlugin from '@pothos/plugin-prisma';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { RequestContext } from '../context/types.js';
import type { RequestState } from '../http/state.js';
import type { ResponsePaths } from './response-paths.js';
import { tooComplexError } from './limits.js';
import { DECLARED_SCOPES } from './scopes.js';
import { CALLER_READS } from './caller-reads.js';

/**
 * Where a subscriber's results may be written as they are: its connection's writer, which frames
 * each as its transport does (a `next` message with its subscription's id on a WebSocket, an
 * `event: next` block on an event stream) and sends it after whatever was written before.
 */
export interface StreamSink {
  /** Writes a result's JSON: false once nothing reaches the client any more (gone, or cut off for not reading). */
  write(json: string): boolean;
}

/**
 * The context of a GraphQL request: what services take, on the request's own state (yoga makes
 * the request's server context its GraphQL context), with what execution learns along the way.
 */
export type GraphQLContext = RequestContext & {
  state?: RequestState;
  /** Whether the operation was costed within the limit, with its own variables, before execution (jit.ts). */
  costed?: boolean;
  /** The response paths of a compiled query's positions (jit.ts); absent under the interpreter. */
  responsePaths?: ResponsePaths;
  /** Where a subscription's results may be written directly: its WebSocket's writer (src/realtime/writer.ts). */
  streamSink?: StreamSink;
};

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  Scalars: { DateTime: { Input: Date; Output: Date } };
  DefaultFieldNullability: false;
}>({
  // Declared scopes first: a field outside the caller's scopes runs nothing of the other plugins.
  plugins: [DECLARED_SCOPES, CALLER_READS, PrismaPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  // Every field costs 1, a list multiplies what it selects by 10 and a connection by its
  // `first` (src/graphql/connection.ts). Checked for the whole operation before any resolver runs,
  // once: a compiled query was costed before it started (`costed`).
  complexity: {
    limit: (ctx) => (ctx.costed ? {} : { complexity: ctx.maxQueryCost }),
    complexityError: (_kind, result) => tooComplexError(result.complexity, result.maxComplexity ?? 0),
  },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'error',
  },
});
