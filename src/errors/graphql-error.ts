import type { GraphQLError } from 'graphql';

/** By name, not instanceof: graphql ships CommonJS and ESM builds that may both be loaded. */
export function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof Error && error.name === 'GraphQLError';
}
