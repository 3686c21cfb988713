import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** docs/operating-safely.md, GraphQL limits: what one GraphQL document may hold. Its cost is limited by the schema's complexity plugin. */
export const DOCUMENT_LIMITS = { depth: 12, aliases: 30, tokens: 5000, directives: 50 } as const;

/** The refusal of an operation over the cost limit (GRAPHQL_MAX_COST). */
export function tooComplexError(cost: number, limit: number): GraphQLError {
  return new GraphQLError(`The query is too complex: its cost is ${cost}, the limit ${limit}.`, {
    extensions: { code: 'QUERY_TOO_COMPLEX', cost, limit },
  });
}

/** Every refusal of an abuse limit carries the same code, so clients can tell it from a wrong query. */
const tooComplex = (_ctx: unknown, error: GraphQLError) => {
  Object.assign(error.extensions, { code: 'QUERY_TOO_COMPLEX' });
};

/**
 * Depth, aliases, tokens and directives, refused while the document is parsed and
 * validated, before anything runs. Field suggestions ("Did you mean …") are hidden
 * whenever introspection is off, since they would reveal the schema it hides.
 */
export function documentLimitsPlugin(options: { hideSuggestions: boolean }): Plugin {
  const onReject = [tooComplex];
  return EnvelopArmorPlugin({
    maxDepth: { n: DOCUMENT_LIMITS.depth, ignoreIntrospection: true, onReject },
    maxAliases: { n: DOCUMENT_LIMITS.aliases, onReject },
    maxTokens: { n: DOCUMENT_LIMITS.tokens, onReject },
    maxDirectives: { n: DOCUMENT_LIMITS.directives, onReject },
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: options.hideSuggestions },
  }) as Plugin;
}
