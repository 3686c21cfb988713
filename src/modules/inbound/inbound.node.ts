import type http from 'node:http';
import type { Logger } from 'pino';
import { describeError } from '../../errors/log.js';
import type { AppMetrics } from '../../metrics/metrics.js';
import { HttpError } from '../../rest/http.js';
import { WEBHOOKS_PREFIX, type InboundRoutes } from './inbound.routes.js';
import { json, type WebhookAnswer, type WebhookCall } from './webhook-call.js';

/** Serves a request on node:http and returns true, or returns false and leaves it to the app. */
export type DirectRoute = (request: http.IncomingMessage, response: http.ServerResponse) => boolean;

/**
 * The body of a node:http request, at most `limit` bytes, counted as it arrives (HttpError 413 over
 * a declared or an actual length: the rest is read and dropped by the server). As readBody reads a
 * fetch Request's.
 */
function readNodeBody(request: http.IncomingMessage, limit: number): Promise<Buffer> {
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

/**
 * Provider webhooks served straight from node:http, past the fetch adapter and yoga's plugins:
 * no Request or Response objects, the answer written with one `end`. What those plugins do for a
 * webhook is done here the same way — the request metrics by route, method and status, the access
 * log line (method, path, status, ms), `Vary: Origin` while CORS is on — and the routes are the
 * same code as the app's (inbound.routes.ts). Only POST and GET without an Origin header come here:
 * anything a browser could send (CORS answers) or another method goes through the app as before.
 */
export function directWebhooks(routes: InboundRoutes, options: { logger: Logger; metrics: AppMetrics; varyOnOrigin: boolean }): DirectRoute {
  const { logger, metrics, varyOnOrigin } = options;
  return (request, response) => {
    const target = request.url ?? '';
    const method = request.method ?? '';
    if (!target.startsWith(WEBHOOKS_PREFIX) || (method !== 'POST' && method !== 'GET') || request.headers.origin !== undefined) return false;
    // The URL as the fetch adapter parses it: a path that normalises out of /webhooks/ is the app's.
    const url = new URL(target, 'http://localhost');
    if (!url.pathname.startsWith(WEBHOOKS_PREFIX)) return false;
    const startedAt = performance.now();
    let route: string | undefined;
    const call: WebhookCall = {
      method,
      url,
      header: (name) => {
        const value = request.headers[name];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
      body: (limit) => readNodeBody(request, limit),
      label: (name) => {
        route = name;
      },
    };
    const send = (answer: WebhookAnswer) => {
      metrics.observe(route, method, answer.status, startedAt);
      if (logger.isLevelEnabled('info')) {
        logger.info({ method, path: url.pathname, status: answer.status, ms: Math.round(performance.now() - startedAt) }, 'request');
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
    routes.serve(call).then(send, (error: unknown) => {
      logger.error({ err: describeError(error) }, 'inbound webhook failed');
      send(json(500, { status: 'error', message: 'Internal server error' }));
    });
    return true;
  };
}
