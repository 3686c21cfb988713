import type http from 'node:http';
import type { Logger } from 'pino';
import { HttpError } from './http.js';

/**
 * A route node:http serves itself, past the fetch adapter and yoga's plugins: returns true when it
 * took the request, false to leave it to the app (src/server.ts).
 */
export type DirectRoute = (request: http.IncomingMessage, response: http.ServerResponse) => boolean;

/** A request header by lower-case name, as fetch's `Headers.get` reads it (repeated ones joined); null when absent. */
export function nodeHeaders(request: http.IncomingMessage): Pick<Headers, 'get'> {
  return {
    get(name: string) {
      const value = request.headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** A fetch answer's headers as one record, to write to node:http (repeated ones already joined). */
export function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/**
 * The body of a node:http request, at most `limit` bytes, counted as it arrives (HttpError 413 over
 * a declared or an actual length: the rest is read and dropped by the server). As readBody reads a
 * fetch Request's.
 */
export function readNodeBody(request: http.IncomingMessage, limit: number): Promise<Buffer> {
  const length = request.headers['content-length'];
  if (length !== undefined && Number(length) > limit) return Promise.reject(new HttpError(413, 'Request body too large.'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      done();
      request.resume();
      reject(new HttpError(413, 'Request body too large.'));
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onClose = () => {
      if (request.complete) return;
      done();
      reject(new Error('The request was aborted before its body arrived.'));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

/** An answer written straight to node:http: status, headers (Content-Length aside) and body. */
export interface DirectAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

/**
 * Writes direct answers as the app's plugins would have: the request counted and timed by route,
 * method and status (`observe`), the access line (method, path, status, ms) and `Vary: Origin`
 * while CORS is on; the answer itself in one `end`.
 */
export function directResponder(options: {
  logger: Logger;
  observe: (route: string | undefined, method: string, status: number, startedAt: number) => void;
  varyOnOrigin: boolean;
}) {
  const { logger, observe, varyOnOrigin } = options;
  return (
    response: http.ServerResponse,
    request: { method: string; path: string; route: string | undefined; startedAt: number },
    answer: DirectAnswer,
  ): void => {
    observe(request.route, request.method, answer.status, request.startedAt);
    if (logger.isLevelEnabled('info')) {
      logger.info({ method: request.method, path: request.path, status: answer.status, ms: Math.round(performance.now() - request.startedAt) }, 'request');
    }
    if (response.destroyed || response.writableEnded) return;
    const headers: Record<string, string | number> = { ...answer.headers };
    if (varyOnOrigin) headers.vary = 'Origin';
    if (answer.body === null) {
      response.writeHead(answer.status, headers);
      response.end();
      return;
    }
    headers['content-length'] = Buffer.byteLength(answer.body);
    response.writeHead(answer.status, headers);
    response.end(answer.body);
  };
}
