import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { parse, type ExecutionArgs, type ExecutionResult, type GraphQLError, type GraphQLFormattedError } from 'graphql';
import { CloseCode, type Context as SocketContext } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AuthContext, CredentialWatch, Lapse } from '../context/types.js';
import { AuthenticationError, DomainError, TokenExpiredError } from '../errors/domain.js';
import { describeError } from '../errors/log.js';
import type { WriteCoalescer } from './coalesce.js';
import { operationState, type RequestState } from '../http/state.js';
import type { OpenStreams } from '../lib/streams.js';
import { domainGraphQLError } from '../graphql/errors.js';
import type { GraphQLContext, StreamSink } from '../graphql/builder.js';
import { gatherForFlush, tellAll } from './delivery.js';
import type { PrepareOperation } from '../graphql/operation.js';

/**
 * How a socket closes once its credential lapsed, by the code of the error each of its operations
 * ended with (docs/browser-apps.md): expired, 4401 (refresh and reconnect); anything else —
 * revoked, unknown, its channel gone — 4403 (do not retry with the same credential).
 */
const LAPSE_CLOSE: Readonly<Record<string, { code: number; reason: string }>> = {
  TOKEN_EXPIRED: { code: CloseCode.Unauthorized, reason: 'Unauthorized' },
  UNAUTHENTICATED: { code: CloseCode.Forbidden, reason: 'Forbidden' },
};

/** How long a socket whose credential lapsed waits for its operations' last results before it closes regardless. */
const LAST_RESULTS_WITHIN_MS = 5_000;

/**
 * The document of an operation refused because its credential lapsed: an operation to identify,
 * never executed (its result is the refusal). Parsed once; it depends on nothing else.
 */
const REFUSED_OPERATION = parse('{ __typename }');

/** What a socket learned at `connection_init` (the headers its operations authenticate with), and how it closes once its credential lapsed. */
type SocketExtra = {
  headers?: Headers;
  closing?: { code: number; reason: string };
  /**
   * Operations whose `complete` is on its way: graphql-ws lets go of an operation once that
   * message has left, which a held socket (src/realtime/coalesce.ts) delays.
   */
  completing?: Set<string>;
};

/** How the socket closes, when `result` is an operation's end for its lapsed credential. */
function lapseOf(result: ExecutionResult): { code: number; reason: string } | undefined {
  for (const error of result.errors ?? []) {
    const close = LAPSE_CLOSE[error.extensions?.code as string];
    if (close) return close;
  }
  return undefined;
}

/** An error as sent over the socket: without `extensions.http`, which only an HTTP answer uses. */
function withoutTransport(error: GraphQLError): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.extensions ?? {};
  return { ...error.toJSON(), extensions };
}

type WebSocketContext = SocketContext<Record<string, unknown> | undefined, SocketExtra & { socket: WebSocket; request: http.IncomingMessage }>;

/**
 * The socket's credential lapsed (an operation ended with its error): the socket closes once
 * every open operation has sent its last result and `complete` (`closeWhenDone`), or after
 * LAST_RESULTS_WITHIN_MS regardless. The first lapse decides the code.
 */
function lapsed(ctx: WebSocketContext, close: { code: number; reason: string }): void {
  if (ctx.extra.closing) return;
  ctx.extra.closing = close;
  const socket = ctx.extra.socket;
  setTimeout(() => socket.close(close.code, close.reason), LAST_RESULTS_WITHIN_MS).unref();
}

/**
 * The socket's own credential lapsed (its watch, from `connection_init` on): with no operation open
 * the socket closes at once with the lapse's code; otherwise its operations end with their errors
 * and the socket closes after the last (`lapsed`). A credential that could not be checked closes
 * nothing: the next operation authenticates afresh.
 */
function socketLapsed(ctx: WebSocketContext, lapse: Lapse): void {
  if (lapse === 'unchecked') return;
  const close = lapse === 'expired' ? LAPSE_CLOSE.TOKEN_EXPIRED! : LAPSE_CLOSE.UNAUTHENTICATED!;
  lapsed(ctx, close);
  if (!stillOpen(ctx)) ctx.extra.socket.close(close.code, close.reason);
}

/** Whether an operation of the socket is open: one graphql-ws holds whose `complete` is not on its way. */
function stillOpen(ctx: WebSocketContext): boolean {
  const completing = ctx.extra.completing;
  return Object.keys(ctx.subscriptions).some((open) => !completing?.has(open));
}

/**
 * Closes a socket whose credential lapsed once its operation `id` — about to send its `complete` —
 * was the last open one. graphql-ws sends that `complete` once this hook has returned, in the same
 * turn of the event loop: the close frame goes after it.
 */
function closeWhenDone(ctx: WebSocketContext, id: string): void {
  const completing = (ctx.extra.completing ??= new Set());
  completing.add(id);
  for (const done of completing) if (!(done in ctx.subscriptions)) completing.delete(done);
  const close = ctx.extra.closing;
  if (!close || stillOpen(ctx)) return;
  const socket = ctx.extra.socket;
  setImmediate(() => socket.close(close.code, close.reason));
}

/**
 * An operation refused because its credential no longer holds, answered as a stream that ends
 * then: one result with the error (TOKEN_EXPIRED or UNAUTHENTICATED), then `complete`; the socket
 * then closes (`lapsed`).
 */
function refusedOperation(error: AuthenticationError): ExecutionArgs {
  const result: ExecutionResult = { errors: [domainGraphQLError(error, undefined, { transport: false })] };
  const answer = () => result;
  return { document: REFUSED_OPERATION, rootValue: { execute: answer, subscribe: answer } } as unknown as ExecutionArgs;
}

export interface WebSocketOptions {
  /** Prepares each operation as yoga's HTTP pipeline would (src/graphql/operation.ts). */
  prepare: PrepareOperation;
  logger: Logger;
  path: string;
  /** The most one message may hold (BODY_LIMIT_BYTES, as for an HTTP body). */
  maxPayload: number;
  /** Whether a browser page of this origin may open a socket to a server reached at `host` (CORS_ORIGINS). */
  allowOrigin(origin: string, host: string | undefined): boolean;
  /** Resolves and counts the caller, as an HTTP request with these headers would be. */
  authenticate(headers: Headers, state: RequestState): Promise<AuthContext>;
  /** Counts an operation in the request metrics. */
  observe(route: string, method: string, status: number, startedAt: number | undefined): void;
  /** Where each open socket registers, so that a shutdown closes it at once. */
  streams: OpenStreams;
  /** Watches each socket's credential, so that a socket with no operation open closes when it lapses. */
  credentialWatch: CredentialWatch;
  /** Buffered bytes past which a socket that does not read is cut off rather than held in memory. */
  maxBufferedBytes: number;
  /** Interval of keep-alive pings (a socket that misses a pong is closed). */
  keepAliveMs: number;
  /**
   * Where each accepted socket's writes are gathered (src/realtime/coalesce.ts): subscriptions'
   * ordinary results are written to the socket directly (src/realtime/delivery.ts), not through
   * graphql-ws, which waits for each message to leave before it takes the next.
   */
  coalescer: WriteCoalescer;
}

/**
 * A subscription's sink on its socket: each result a `next` message of the graphql-transport-ws
 * protocol, sent as graphql-ws sends it. While `coalescer` holds the connection (`connection`, the
 * socket under the WebSocket), the results of one interval are gathered and sent at its flush. A
 * socket whose unread output passes `maxBufferedBytes` is cut off, as the protocol's own path does.
 */
function webSocketSink(socket: WebSocket, connection: Socket, id: string, maxBufferedBytes: number, logger: Logger, coalescer: WriteCoalescer | undefined): StreamSink {
  const head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  const message = (json: string) => `${head}${json}}`;
  /** Whether nothing can be sent: the socket is closing, or cut off now for not reading. */
  const unwritable = () => cutOffUnread(socket, maxBufferedBytes, logger);
  const gathered = gatherForFlush(coalescer, connection, (jsons, told) => {
    if (unwritable()) return tellAll(told);
    for (let index = 0; index < jsons.length; index++) socket.send(message(jsons[index]!), told[index]);
  });
  return {
    write(json, written) {
      if (unwritable()) return written();
      if (!gathered.gather(json, written)) socket.send(message(json), written);
    },
    flush: gathered.flush,
    get gathered() {
      return gathered.size;
    },
  };
}

/**
 * Terminates a socket whose unread output passes `maxBufferedBytes`, rather than buffering for it:
 * whether nothing more may be sent to it. A socket already closing (cut off by an earlier result,
 * whose output it still counts) is not cut off again, so each is logged once, however many results
 * were on their way to it.
 */
function cutOffUnread(socket: WebSocket, maxBufferedBytes: number, logger: Logger): boolean {
  if (socket.readyState !== socket.OPEN) return true;
  if (socket.bufferedAmount <= maxBufferedBytes) return false;
  logger.warn({ buffered: socket.bufferedAmount }, 'graphql websocket cut off: the client does not read');
  socket.terminate();
  return true;
}

/**
 * The credential headers a client sends in `connection_init`'s payload, by any case, with the
 * upgrade's Host and Origin: a session minted for some origins refuses a socket a page of another
 * origin opened, as it refuses that page's HTTP requests (docs/browser-apps.md).
 */
function headersOf(payload: unknown, request: http.IncomingMessage): Headers {
  const headers = new Headers();
  if (request.headers.host !== undefined) headers.set('host', request.headers.host);
  if (request.headers.origin !== undefined) headers.set('origin', request.headers.origin);
  if (payload && typeof payload === 'object') {
    for (const [name, value] of Object.entries(payload)) {
      const key = name.toLowerCase();
      if ((key === 'authorization' || key === 'x-channel-uuid') && typeof value === 'string') headers.set(key, value);
    }
  }
  return headers;
}

function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ status: 'error', message });
  socket.end(`HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Forbidden'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * GraphQL over WebSocket (the `graphql-transport-ws` protocol of the graphql-ws library, as yoga's
 * documentation integrates it with `ws`), on the same path as HTTP. Credentials travel in
 * `connection_init`'s payload; an expired one closes the socket with 4401, a missing or bad one
 * with 4403. Every operation is authenticated and counted again (a spent budget is that
 * operation's RATE_LIMITED error), then parsed, validated, costed and run by the
 * same envelop plugins as an HTTP request: the same limits, masking and compiled queries. Once the
 * credential lapses, every open operation — and any started after — ends with one result carrying
 * TOKEN_EXPIRED or UNAUTHENTICATED, then `complete`, and after the last the socket closes with
 * 4401 (expired) or 4403 (docs/browser-apps.md); a socket with none open closes at the lapse. A socket
 * whose unread output passes `maxBufferedBytes` is cut off; keep-alive pings find dead peers; a
 * shutdown closes every socket at once (1001), so clients reconnect elsewhere.
 */
export function graphqlOverWebSocket(options: WebSocketOptions) {
  const { logger } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });

  const server = useServer<Record<string, unknown> | undefined, SocketExtra>(
    {
      execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => never }).execute(args),
      subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => never }).subscribe(args),
      async onConnect(ctx) {
        const headers = headersOf(ctx.connectionParams, ctx.extra.request);
        let caller: AuthContext;
        try {
          caller = await options.authenticate(headers, operationState(options.path, headers, logger));
        } catch (error) {
          if (error instanceof DomainError) {
            logger.info({ reason: error.constructor.name }, 'graphql websocket refused');
            // An expired credential is told apart (4401: refresh it); any other refusal is graphql-ws's 4403.
            if (error instanceof TokenExpiredError) ctx.extra.socket.close(LAPSE_CLOSE.TOKEN_EXPIRED!.code, LAPSE_CLOSE.TOKEN_EXPIRED!.reason);
            return false;
          }
          throw error;
        }
        ctx.extra.headers = headers;
        const socket = ctx.extra.socket;
        // A shutdown closes the socket at once; a peer that does not answer the close is cut off a second later.
        const unregister = options.streams.add(() => {
          socket.close(1001, 'Going away');
          setTimeout(() => socket.terminate(), 1000).unref();
        });
        const hold = options.credentialWatch.watch(caller, (lapse) => socketLapsed(ctx, lapse), { socket: true });
        socket.once('close', () => {
          unregister();
          hold.release();
        });
        return true;
      },
      async onSubscribe(ctx, id, payload) {
        // An id used again names a new operation.
        ctx.extra.completing?.delete(id);
        const state = operationState(options.path, ctx.extra.headers!, logger, 'graphql');
        try {
          state.caller = await options.authenticate(ctx.extra.headers!, state);
        } catch (error) {
          // The credential lapsed since the socket opened: this operation ends with its error, as the open ones do.
          if (error instanceof AuthenticationError) return refusedOperation(error);
          if (error instanceof DomainError) return [domainGraphQLError(error, undefined, { transport: false })];
          throw error;
        }
        // A registered document travels as its id in extensions.persistedQuery, beside an empty query.
        const prepared = await options.prepare(state, {
          query: payload.query,
          operationName: payload.operationName ?? undefined,
          variables: payload.variables ?? undefined,
          extensions: payload.extensions ?? undefined,
        });
        if (Array.isArray(prepared)) return prepared;
        const { args, execute, subscribe } = prepared as Exclude<typeof prepared, readonly unknown[]>;
        options.observe(state.route ?? 'graphql', 'WS', 200, undefined);
        const { socket, request } = ctx.extra;
        (args.contextValue as GraphQLContext).streamSink = webSocketSink(socket, request.socket, id, options.maxBufferedBytes, logger, options.coalescer);
        return { ...args, rootValue: { execute, subscribe } };
      },
      onNext(ctx, _id, _payload, _args, result) {
        if (cutOffUnread(ctx.extra.socket, options.maxBufferedBytes, logger)) return;
        // A stream whose credential lapsed ends with that error (src/realtime/subscriptions.ts), then
        // `complete`; the socket, whose credential it is, closes after the last one (docs/browser-apps.md).
        const close = lapseOf(result);
        if (close) lapsed(ctx, close);
        // What tells yoga's HTTP answer its status is not part of a result sent over the socket.
        if (result.errors?.some((error) => error.extensions?.http)) return { ...result, errors: result.errors.map(withoutTransport) };
        return undefined;
      },
      onComplete(ctx, id) {
        closeWhenDone(ctx, id);
      },
    },
    wss,
    options.keepAliveMs,
  );
  wss.on('error', (error) => logger.error({ err: describeError(error) }, 'graphql websocket server error'));

  return {
    /** node:http's `upgrade` event: a socket for GraphQL on its path, from an allowed origin; anything else refused. */
    upgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): void {
      socket.on('error', () => socket.destroy());
      const path = (request.url ?? '').split('?')[0];
      if (path !== options.path) return refuseUpgrade(socket, 404, 'Route not found.');
      const origin = request.headers.origin;
      if (origin !== undefined && !options.allowOrigin(origin, request.headers.host)) return refuseUpgrade(socket, 403, 'Origin not allowed.');
      wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
        options.coalescer.hold(socket as Socket);
        wss.emit('connection', ws, request);
      });
    },
    dispose: async () => {
      await server.dispose();
    },
  };
}
