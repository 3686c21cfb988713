import type http from 'node:http';
import type { Logger } from 'pino';
import type { AuthContext } from '../context/types.js';
import type { RateLimitState } from '../errors/domain.js';
import { requestIdOf, requestTraceId } from './request-id.js';

/**
 * What one request carries from the moment it arrives until its answer leaves: who is calling,
 * what route it took, what its rate limit counted, its body once read. It lives on yoga's server
 * context (one object per request, which yoga also makes the GraphQL context), so every hook and
 * resolver of the request reads the same state and nothing is kept in maps keyed by requests.
 */
export interface RequestState {
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  /** The request path (no query string: it may hold personal data), for the access log. */
  readonly path: string;
  /** Its `X-Request-Id` (src/http/request-id.ts): sent back on its answer, on every line it logs. */
  readonly requestId: string;
  /** The logger of this request: every line carries its `requestId` (and `traceId` when it has one). */
  readonly log: Logger;
  /** The route's metrics label (`GET /contacts/:contact`, `graphql <operation>`); unset until a route is found. */
  route?: string;
  /** The authenticated caller, once authenticated. */
  caller?: AuthContext;
  /** What the rate limit counted the request as, for its answer's headers. */
  rateLimit?: { state: RateLimitState; exceeded: boolean };
  /** The body, read once within the body limit (GraphQL, before yoga parses it). */
  body?: Buffer;
  /** The node:http exchange the request is served on; absent when called in process (tests, `yoga.fetch`). */
  readonly connection?: { req: http.IncomingMessage; res: http.ServerResponse };
}

/** The server context yoga hands every plugin hook, and the GraphQL context of the request. */
export interface ServerContext {
  state?: RequestState;
  req?: http.IncomingMessage;
  res?: http.ServerResponse;
}

/** Begins the state of a request on its server context. */
export function beginRequest(serverContext: ServerContext, path: string, request: Request, logger: Logger): RequestState {
  const { req, res } = serverContext;
  const requestId = requestIdOf(request.headers);
  const traceId = requestTraceId(request.headers);
  const state: RequestState = {
    startedAt: performance.now(),
    path,
    requestId,
    log: logger.child(traceId ? { requestId, traceId } : { requestId }),
    ...(req && res && typeof res.destroy === 'function' ? { connection: { req, res } } : {}),
  };
  serverContext.state = state;
  return state;
}

/**
 * Ends the connection of an answer whose body failed after its head was sent (true when it did):
 * the client sees an unfinished answer (no final chunk, the connection closed) instead of waiting
 * on it. The request is no longer listened to, so that the closing connection reaches nothing of
 * the abandoned answer.
 */
export function endConnection(state: RequestState): boolean {
  const connection = state.connection;
  if (!connection || connection.res.writableEnded) return false;
  connection.req.removeAllListeners('error');
  connection.req.on('error', () => {});
  connection.res.destroy();
  return true;
}

/**
 * The state of an operation that arrives on a connection already open rather than as a request of
 * its own (a WebSocket's `connection_init` or `subscribe`): its id and logger from the headers the
 * connection was opened with.
 */
export function operationState(path: string, headers: Pick<Headers, 'get'>, logger: Logger, route?: string): RequestState {
  const requestId = requestIdOf(headers);
  const traceId = requestTraceId(headers);
  return { startedAt: performance.now(), path, requestId, log: logger.child(traceId ? { requestId, traceId } : { requestId }), ...(route ? { route } : {}) };
}
