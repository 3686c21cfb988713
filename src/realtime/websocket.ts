import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { CloseCode, handleProtocols, makeServer, type Context as SocketContext } from 'graphql-ws';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AuthContext, CredentialWatch, Lapse } from '../context/types.js';
import { AuthenticationError, DomainError, TokenExpiredError } from '../errors/domain.js';
import { describeError } from '../errors/log.js';
import { operationState, type RequestState } from '../http/state.js';
import type { OpenStreams } from '../lib/streams.js';
import { domainGraphQLError } from '../graphql/errors.js';
import type { GraphQLContext, StreamSink } from '../graphql/builder.js';
import { connectionWriter, streamedResult, webSocketOutput, type ConnectionWriter, type StreamLimits } from './writer.js';
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
  /** The one writer of the socket (src/realtime/writer.ts): graphql-ws's messages and the results written directly alike. */
  writer: ConnectionWriter;
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

type WebSocketContext = SocketContext<Record<string, unknown> | undefined, SocketExtra & { socket: WebSocket; request: http.IncomingMessage }>;

/**
 * The socket's credential lapsed (an operation ended with its error): the socket closes once
 * every open operation has sent its last result and `complete` (`closeWhenDone`), or after
 * LAST_RESULTS_WITHIN_MS regardless. The first lapse decides the code.
 */
function lapsed(ctx: WebSocketContext, close: { code: number; reason: string }): void {
  if (ctx.extra.closing) return;
  ctx.extra.closing = close;
  const writer = ctx.extra.writer;
  setTimeout(() => writer.end(close), LAST_RESULTS_WITHIN_MS).unref();
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
  if (!stillOpen(ctx)) ctx.extra.writer.end(close);
}

/** Whether an operation of the socket is open: one graphql-ws holds whose `complete` is not on its way. */
function stillOpen(ctx: WebSocketContext): boolean {
  const completing = ctx.extra.completing;
  return Object.keys(ctx.subscriptions).some((open) => !completing?.has(open));
}

/**
 * Closes a socket whose credential lapsed once its operation `id` — about to send its `complete` —
 * was the last open one. graphql-ws writes that `complete` once this hook has returned, in the same
 * turn of the event loop: the close goes after it, through the same writer.
 */
function closeWhenDone(ctx: WebSocketContext, id: string): void {
  const completing = (ctx.extra.completing ??= new Set());
  completing.add(id);
  for (const done of completing) if (!(done in ctx.subscriptions)) completing.delete(done);
  const close = ctx.extra.closing;
  if (!close || stillOpen(ctx)) return;
  const writer = ctx.extra.writer;
  setImmediate(() => writer.end(close));
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
  /** What each socket's one writer keeps to: its pace and its limit (src/realtime/writer.ts). */
  limits: StreamLimits;
  /** Interval of keep-alive pings (a socket that misses a pong is closed). */
  keepAliveMs: number;
}

/**
 * A subscription's sink on its socket: each result a `next` message of the graphql-transport-ws
 * protocol, framed as graphql-ws frames it and written by the socket's writer, which graphql-ws
 * writes its own messages through too.
 */
function webSocketSink(writer: ConnectionWriter, id: string): StreamSink {
  const head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  return { write: (json) => writer.write(`${head}${json}}`) };
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
  const head = [`HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Forbidden'}`, 'content-type: application/json; charset=utf-8'];
  socket.end(`${[...head, `content-length: ${Buffer.byteLength(body)}`, 'connection: close'].join('\r\n')}\r\n\r\n${body}`);
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
 * 4401 (expired) or 4403 (docs/browser-apps.md); a socket with none open closes at the lapse.
 * Keep-alive pings find dead peers; a shutdown closes every socket at once (1001), so clients
 * reconnect elsewhere.
 *
 * graphql-ws's protocol server (`makeServer`) on `ws`, as its own `useServer` puts it there, with
 * one difference: everything sent on a socket — graphql-ws's messages and the subscriptions'
 * results written directly (src/realtime/delivery.ts) — goes through the socket's one writer
 * (src/realtime/writer.ts), which paces it, bounds it (a client that does not read is cut off)
 * and keeps it in order. graphql-ws does not wait for a message to leave before it takes the next:
 * the writer holds what has not left.
 */
export function graphqlOverWebSocket(options: WebSocketOptions) {
  const { logger } = options;

  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload, handleProtocols });
  const server = makeServer<Record<string, unknown> | undefined, SocketExtra & { socket: WebSocket; request: http.IncomingMessage }>(
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
            if (error instanceof TokenExpiredError) ctx.extra.writer.end(LAPSE_CLOSE.TOKEN_EXPIRED!);
            return false;
          }
          throw error;
        }
        ctx.extra.headers = headers;
        const { socket, writer } = ctx.extra;
        // A shutdown closes the socket at once; a peer that does not answer the close is cut off a second later.
        const unregister = options.streams.add(() => {
          writer.end({ code: 1001, reason: 'Going away' });
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
        (args.contextValue as GraphQLContext).streamSink = webSocketSink(ctx.extra.writer, id);
        return { ...args, rootValue: { execute, subscribe } };
      },
      onNext(ctx, _id, _payload, _args, result) {
        // A stream whose credential lapsed ends with that error (src/realtime/subscriptions.ts), then
        // `complete`; the socket, whose credential it is, closes after the last one (docs/browser-apps.md).
        const close = lapseOf(result);
        if (close) lapsed(ctx, close);
        // What tells yoga's HTTP answer its status is not part of a result sent over the socket.
        const streamed = streamedResult(result);
        return streamed === result ? undefined : streamed;
      },
      onComplete(ctx, id) {
        closeWhenDone(ctx, id);
      },
    },
  );
  wss.on('error', (error) => logger.error({ err: describeError(error) }, 'graphql websocket server error'));

  /** A socket accepted on `connection` (its upgrade's, held by the coalescer): graphql-ws's from now on. */
  const opened = (socket: WebSocket, request: http.IncomingMessage, connection: Socket) => {
    const writer = connectionWriter(options.limits, webSocketOutput(socket), connection, 'graphql websocket');
    const internalError = (error: unknown) => {
      logger.error({ err: describeError(error) }, 'graphql websocket failed');
      writer.end({ code: CloseCode.InternalServerError, reason: 'Internal server error' });
    };
    socket.once('error', internalError);
    // A peer that does not answer a ping within the interval is gone.
    let pongWait: NodeJS.Timeout | undefined;
    const keepAlive = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), options.keepAliveMs);
      socket.once('pong', () => clearTimeout(pongWait));
      socket.ping();
    }, options.keepAliveMs);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) => void writer.write(data),
        close: (code, reason) => writer.end({ code, reason }),
        onMessage: (received) =>
          socket.on('message', (data) => {
            received(String(data)).catch(internalError);
          }),
      },
      { socket, request, writer },
    );
    socket.once('close', (code, reason) => {
      clearInterval(keepAlive);
      clearTimeout(pongWait);
      void closed(code, String(reason));
    });
  };

  return {
    /** node:http's `upgrade` event: a socket for GraphQL on its path, from an allowed origin; anything else refused. */
    upgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): void {
      socket.on('error', () => socket.destroy());
      const path = (request.url ?? '').split('?')[0];
      if (path !== options.path) return refuseUpgrade(socket, 404, 'Route not found.');
      const origin = request.headers.origin;
      if (origin !== undefined && !options.allowOrigin(origin, request.headers.host)) return refuseUpgrade(socket, 403, 'Origin not allowed.');
      wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
        options.limits.coalescer.hold(socket as Socket);
        opened(ws, request, socket as Socket);
      });
    },
    dispose: async () => {
      for (const client of wss.clients) client.close(1001, 'Going away');
      await new Promise<void>((resolve, reject) => wss.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
