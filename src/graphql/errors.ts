import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { hideFailure, logUnexpected } from '../errors/log.js';
import { isGraphQLError } from '../errors/graphql-error.js';
import {
  AuthenticationError,
  ChannelSelectionError,
  DomainError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  RequestInFlightError,
  ServiceUnavailableError,
  TokenExpiredError,
  ValidationError,
} from '../errors/domain.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { rateLimitHeaders } from '../context/rate-limit.js';
import type { UserErrorShape } from './user-errors.js';
import { FetchResponse } from '../lib/response.js';

function codeOf(error: DomainError): { code: string; http?: { status: number; headers?: Record<string, string> } } {
  if (error instanceof AuthenticationError) {
    return { code: error instanceof TokenExpiredError ? 'TOKEN_EXPIRED' : 'UNAUTHENTICATED', http: { status: 401, headers: { 'www-authenticate': 'Bearer' } } };
  }
  // A field refused inside an operation leaves the others answered: no HTTP status of its own.
  if (error instanceof ForbiddenError) return { code: 'FORBIDDEN' };
  if (error instanceof ChannelSelectionError) return { code: 'CHANNEL_REQUIRED' };
  if (error instanceof ServiceUnavailableError) return { code: 'SERVICE_UNAVAILABLE', http: { status: 503, headers: { 'retry-after': '1' } } };
  if (error instanceof NotFoundError) return { code: 'NOT_FOUND' };
  if (error instanceof RequestInFlightError) return { code: 'CONFLICT', http: { status: 409 } };
  if (error instanceof RateLimitedError) return { code: 'RATE_LIMITED', http: { status: 429, headers: rateLimitHeaders(error.state, true) } };
  if (error instanceof ValidationError) return { code: 'BAD_USER_INPUT' };
  return { code: 'BAD_REQUEST' };
}

/**
 * A domain error as a GraphQL error, keeping the location of `at` when given. Only an error that
 * refuses a whole HTTP request (thrown before execution, `at` absent, or a subscription refused
 * before its stream starts, `refusesRequest`) keeps the HTTP status and
 * headers yoga answers it with (`extensions.http`, which yoga never writes out); an error located
 * in a result, or sent over a transport that is not HTTP (`transport: false`), carries no
 * transport details: its `extensions` are its code (docs/graphql.md).
 */
export function domainGraphQLError(error: DomainError, at?: GraphQLError, options: { transport?: boolean } = {}): GraphQLError {
  const { code, http } = codeOf(error);
  const transport = options.transport ?? (!at || error.refusesRequest);
  return new GraphQLError(error.message, {
    ...(at ? { nodes: at.nodes, path: at.path } : {}),
    extensions: transport && http ? { code, http } : { code },
  });
}

/** An expected failure (a domain error, or the database out of reach) as a GraphQL error; null for anything else. */
function knownGraphQLError(error: unknown, at?: GraphQLError): GraphQLError | null {
  if (error instanceof DomainError) return domainGraphQLError(error, at);
  if (isDatabaseUnavailable(error)) return domainGraphQLError(new ServiceUnavailableError(), at);
  return null;
}

/**
 * The GraphQL error that says where a failure happened. A compiled query (src/graphql/jit.ts)
 * reports a resolver's failure by wrapping the error the resolver threw, located at its field,
 * in one that carries no document nodes.
 */
function locatedOf(error: unknown): GraphQLError | undefined {
  if (!isGraphQLError(error)) return undefined;
  const inner = error.originalError;
  return !error.nodes && isGraphQLError(inner) && inner.nodes ? inner : error;
}

/**
 * The one place where failures become GraphQL errors: domain errors keep their
 * message and get a code; anything unexpected is masked (logged once, by the request
 * whose answer carries it: src/errors/log.ts).
 */
export function maskGraphQLError() {
  return (error: unknown, message: string): Error => {
    const located = locatedOf(error);
    const original = located ? located.originalError : error;
    const known = knownGraphQLError(original, located);
    if (known) return known;
    if (located && (!original || isGraphQLError(original))) return located;
    const masked = new GraphQLError(message, {
      ...(located ? { nodes: located.nodes, path: located.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    hideFailure(masked, original);
    return masked;
  };
}

/**
 * Expected mutation failures as `userErrors`, with the REST 422 messages. `rename`
 * maps a REST field name to its GraphQL input name (`is_encrypted` → `isEncrypted`).
 * Returns null for failures that are not the caller's input (they are thrown).
 */
export function toUserErrors(error: unknown, rename: (field: string) => string = (f) => f): UserErrorShape[] | null {
  if (error instanceof ValidationError) {
    return Object.entries(error.errors).flatMap(([key, messages]) =>
      messages.map((message) => ({
        // `id` is an argument of its own; every other key is a path in `input`.
        field: key === 'id' ? ['id'] : key === 'body' ? ['input'] : ['input', ...key.split('.').map(rename)],
        message,
        code: error.taken.includes(key) ? ('TAKEN' as const) : ('INVALID' as const),
      })),
    );
  }
  if (error instanceof NotFoundError) return [{ field: ['id'], message: error.message, code: 'NOT_FOUND' }];
  return null;
}

/** GraphQL over HTTP's media type for answers, and the JSON every client reads. */
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/**
 * The media type of a GraphQL answer the request's Accept header takes: GraphQL over HTTP's
 * `application/graphql-response+json` when it is accepted ahead of (or without) `application/json`,
 * else `application/json`.
 */
export function graphqlResponseType(accept: string | null): string {
  let best: { type: string; q: number } | null = null;
  for (const part of (accept ?? '').split(',')) {
    const [range = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (range !== GRAPHQL_RESPONSE && range !== 'application/json') continue;
    const q = Number(parameters.find((parameter) => parameter.startsWith('q='))?.slice(2) ?? '1');
    if (q > 0 && (!best || q > best.q)) best = { type: range, q };
  }
  return best?.type ?? 'application/json';
}

/**
 * A GraphQL answer to a request refused before its document is read (authentication,
 * rate limit, outage): the error alone, with its HTTP status and headers, in the media type the
 * request accepted (`accept`, its Accept header). Its `extensions` are its code alone.
 */
export function graphqlErrorResponse(error: unknown, logger: Logger, accept: string | null = null): Response {
  const known = knownGraphQLError(error);
  if (!known) logUnexpected(logger, error);
  const graphqlError = known ?? new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR', http: { status: 500 } } });
  const { http, ...extensions } = graphqlError.extensions as { http?: { status?: number; headers?: Record<string, string> } };
  // Refused before anything ran (a session's origin): the whole request is forbidden.
  const status = http?.status ?? (error instanceof ForbiddenError ? 403 : 400);
  return new FetchResponse(JSON.stringify({ errors: [{ message: graphqlError.message, extensions }] }), {
    status,
    headers: { 'content-type': `${graphqlResponseType(accept)}; charset=utf-8`, ...http?.headers },
  });
}
