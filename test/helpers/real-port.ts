import http from 'node:http';
import net from 'node:net';
import { Readable, Writable } from 'node:stream';
import { createApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import type { Env } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { createHttpServer } from '../../src/http/server.js';
import { testSealer } from './secrets.js';
import { testProviders } from './worker.js';
import type { Providers } from '../../src/providers/registry.js';
import type { EventBus } from '../../src/context/services.js';

export interface ServedApp {
  port: number;
  server: http.Server;
  /** Every log line the app and its server wrote, as JSON text. */
  logs: string[];
  close(): Promise<void>;
}

/** The app on `db` behind the production node:http server (src/server.ts), on a port of 127.0.0.1. */
export async function serveOnPort(db: Database, env: Env, options: { providers?: Providers; events?: EventBus } = {}): Promise<ServedApp> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ ...env, LOG_LEVEL: 'debug' }, sink);
  const yoga = createApp({ db, env, logger, sealer: testSealer, providers: options.providers ?? testProviders(), ...(options.events ? { events: options.events } : {}) });
  const server = createHttpServer(yoga, logger, { keepAliveMs: env.HTTP_KEEP_ALIVE_MS });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    server,
    logs,
    async close() {
      server.closeAllConnections();
      const closed = new Promise((resolve) => server.close(resolve));
      // Open WebSockets are no longer the HTTP server's connections: the app closes them.
      await yoga.dispose();
      await closed;
    },
  };
}

export interface RawExchange {
  /** The status of the answer's status line; undefined when none arrived. */
  status: number | undefined;
  head: string;
  body: string;
  /** How the connection ended: closed by the server, reset, or still open when the wait ran out. */
  ended: 'closed' | 'reset' | 'timeout';
}

/**
 * Sends `bytes` as they are on a new connection to `port` and reads until the server closes it
 * (or `timeoutMs` passes); `chunkSize` splits the write into that many bytes a piece.
 */
export function rawExchange(port: number, bytes: string | Buffer, options: { timeoutMs?: number } = {}): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let ended: RawExchange['ended'] = 'closed';
    const timer = setTimeout(() => {
      ended = 'timeout';
      socket.destroy();
    }, options.timeoutMs ?? 5000);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') ended = 'reset';
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split === -1 ? text : text.slice(0, split);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      resolve({ status: status ? Number(status) : undefined, head, body: split === -1 ? '' : text.slice(split + 4), ended });
    });
  });
}

/** An answer read whole: status, headers and body as text. */
export interface PortAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on a port (a new connection each time); `chunked` sends the body without a length. */
export function requestOnPort(
  port: number,
  host: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
  chunked = false,
): Promise<PortAnswer> {
  return new Promise((resolve, reject) => {
    const sent = http.request({ port, host: '127.0.0.1', method, path, headers: { host, ...headers }, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() }));
    });
    sent.on('error', reject);
    if (body !== undefined && !chunked) sent.setHeader('content-length', Buffer.byteLength(body));
    sent.end(body);
  });
}

/**
 * `fetch` against a real port that names the workspace `host` in the Host header (the platform's
 * fetch always sends the URL's own host): for client libraries that take a fetch function.
 * Bodies stream both ways; an abort ends the request.
 */
export function fetchAs(host: string): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const headers: Record<string, string> = { host };
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      const sent = http.request({ host: '127.0.0.1', port: url.port, path: `${url.pathname}${url.search}`, method: init.method ?? 'GET', headers }, (answer) => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        const body = answer.statusCode === 204 || answer.statusCode === 304 ? null : (Readable.toWeb(answer) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status: answer.statusCode!, headers: responseHeaders }));
      });
      sent.on('error', reject);
      init.signal?.addEventListener('abort', () => sent.destroy(new DOMException('aborted', 'AbortError')));
      sent.end(typeof init.body === 'string' ? init.body : undefined);
    });
}
