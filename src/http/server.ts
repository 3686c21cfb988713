import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import { hostName } from '../lib/host.js';

/** The longest request line (method, target, version) the server reads; a longer one is 414. */
export const REQUEST_LINE_LIMIT = 16 * 1024;

/**
 * The most a request head may hold, request line included: room for a request line at its limit
 * and the usual headers beside it. A head over this is refused before it reaches the app.
 */
const HEAD_LIMIT = 2 * REQUEST_LINE_LIMIT;

/** How long a refused connection may go on sending before it is closed: its answer is read first. */
const LINGER_MS = 2000;

/**
 * What serves node:http requests: the app, as yoga's own node adapter (its request listener), and
 * what takes WebSocket upgrades, when it does.
 */
type NodeHandler = ((request: http.IncomingMessage, response: http.ServerResponse) => unknown) & {
  upgrade?: (request: http.IncomingMessage, socket: Duplex, head: Buffer) => void;
};

function errorBody(message: string): string {
  return JSON.stringify({ status: 'error', message });
}

function answer(response: http.ServerResponse, status: number, message: string, requestId: string): void {
  const body = errorBody(message);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    connection: 'close',
  });
  response.end(body);
}

/**
 * The request as the app may read it: a Host that is no valid host name is dropped, so that the
 * request URL is built from the server's own address while the request names no workspace; a
 * target in absolute form (`http://host/path`) becomes its path, with its host as the Host.
 * Returns a refusal (status and message) for a head the app could not be given.
 */
function prepare(request: http.IncomingMessage): { status: number; message: string } | null {
  const target = request.url ?? '';
  if (Buffer.byteLength(target) + (request.method?.length ?? 0) + 10 > REQUEST_LINE_LIMIT) {
    return { status: 414, message: 'Request line too long.' };
  }
  if (!target.startsWith('/')) {
    let absolute: URL;
    try {
      absolute = new URL(target);
    } catch {
      return { status: 400, message: 'Bad request target.' };
    }
    if (absolute.protocol !== 'http:' && absolute.protocol !== 'https:') return { status: 400, message: 'Bad request target.' };
    request.url = `${absolute.pathname}${absolute.search}`;
    request.headers.host = absolute.host;
  }
  const host = request.headers.host;
  if (host !== undefined && hostName(host) === null) delete request.headers.host;
  try {
    // The URL the fetch adapter builds from the head (here is where it must not fail).
    new URL(`http://${request.headers.host ?? 'localhost'}${request.url}`);
  } catch {
    return { status: 400, message: 'Bad request target.' };
  }
  return null;
}

/**
 * A head the HTTP parser refused (too long, malformed): an answer and a closed connection, after
 * the rest of what the client sends is read and dropped, so that the client reads the answer
 * instead of a reset. Each refusal is logged, without the bytes.
 */
function refuseHead(logger: Logger, refused: WeakSet<Socket>, answering: Answering) {
  return (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    if (refused.has(socket)) return;
    refused.add(socket);
    // Nothing more is parsed from this connection: what the client still sends is read and dropped.
    drain(socket);
    let status = 400;
    let message = 'Bad request.';
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      // Within the request line as long as no line has ended in what the parser was reading of this
      // request: after the end of any head pipelined before it.
      const packet = error.rawPacket ?? Buffer.alloc(0);
      const previous = packet.lastIndexOf('\r\n\r\n');
      const seen = packet.subarray(previous === -1 ? 0 : previous + 4).subarray(0, REQUEST_LINE_LIMIT);
      if (!seen.includes('\r\n')) [status, message] = [414, 'Request line too long.'];
      else [status, message] = [431, 'Request headers too large.'];
    } else if (error.code === 'HPE_HEADER_TIMEOUT' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      [status, message] = [408, 'Request timeout.'];
    }
    const requestId = randomUUID();
    logger.info({ code: error.code, status, requestId }, 'malformed request refused');
    // A head pipelined behind requests still being answered is refused after their answers, not inside them.
    answering.whenIdle(socket, () => endWith(socket, status, message, requestId));
  };
}

/** The answers under way on each connection: a refusal written on the bare socket waits for them. */
interface Answering {
  /** Counts `response` as under way on its connection until it closes. */
  track(socket: Socket, response: http.ServerResponse): void;
  /** Calls `then` once no answer is under way on the connection (at once when none is). */
  whenIdle(socket: Socket, then: () => void): void;
}

function answering(): Answering {
  const open = new WeakMap<Socket, { count: number; idle: (() => void)[] }>();
  return {
    track(socket, response) {
      const state = open.get(socket) ?? { count: 0, idle: [] };
      open.set(socket, state);
      state.count++;
      response.once('close', () => {
        if (--state.count > 0) return;
        for (const then of state.idle.splice(0)) then();
      });
    },
    whenIdle(socket, then) {
      const state = open.get(socket);
      if (state && state.count > 0) state.idle.push(then);
      else then();
    },
  };
}

/** Stops parsing a connection: what the client still sends is read and dropped, errors ignored. */
function drain(socket: Socket): void {
  socket.removeAllListeners('data');
  socket.on('data', () => {});
  socket.on('error', () => {});
}

/**
 * Writes an answer on a socket the HTTP parser no longer serves and closes it once the client has
 * read it: what the client still sends is read and dropped meanwhile, so that it sees no reset.
 */
function endWith(socket: Socket, status: number, message: string, requestId: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = errorBody(message);
  drain(socket);
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** Node's default: an idle keep-alive connection is closed after 5 s. */
const NODE_KEEP_ALIVE_MS = 5_000;

/**
 * The node:http server around the app. Every request head the server accepts reaches the app
 * with a URL that can be built (see `prepare`), and every head it cannot read gets an answer:
 * no request, however malformed, ends in a stack trace or a reset connection.
 *
 * An idle keep-alive connection stays open `keepAliveMs` (HTTP_KEEP_ALIVE_MS, 65 s: longer than
 * the 60 s idle timeout of common load balancers and client pools). A server closing idle
 * connections sooner than its clients expect races them: a request written on a connection as the
 * server closes it is reset, and a POST is not retried — all the likelier on a busy server, whose
 * timers run before it reads what arrived.
 */
export function createHttpServer(app: NodeHandler, logger: Logger, options: { keepAliveMs?: number } = {}): http.Server {
  const refused = new WeakSet<Socket>();
  const underWay = answering();
  const server = http.createServer({ maxHeaderSize: HEAD_LIMIT }, (request, response) => {
    underWay.track(request.socket, response);
    const refusal = prepare(request);
    if (refusal) {
      // The request's head is not trusted: its answer and log line name a new id.
      const requestId = randomUUID();
      logger.info({ status: refusal.status, requestId }, 'malformed request refused');
      // What the client still sends is read and dropped before the connection closes.
      request.resume();
      answer(response, refusal.status, refusal.message, requestId);
      return;
    }
    app(request, response);
  });
  server.keepAliveTimeout = options.keepAliveMs ?? NODE_KEEP_ALIVE_MS;
  // A request's head must still arrive within its own limit, never cut short by a long keep-alive.
  server.headersTimeout = Math.max(server.headersTimeout, server.keepAliveTimeout + 1000);
  server.on('clientError', refuseHead(logger, refused, underWay));
  if (app.upgrade) server.on('upgrade', app.upgrade);
  // The server is no proxy: CONNECT, which node:http hands over as a bare socket, is answered here.
  server.on('connect', (_request: http.IncomingMessage, socket: Socket) => {
    const requestId = randomUUID();
    logger.info({ status: 405, requestId }, 'malformed request refused');
    endWith(socket, 405, 'Method not allowed.', requestId);
  });
  return server;
}
