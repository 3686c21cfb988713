import { STATUS_CODES } from 'node:http';
import { labelRoute } from '../../metrics/labels.js';
import { ServerResponse } from '../../lib/response.js';
import { readBody } from '../../rest/http.js';
import type { DirectAnswer } from '../../rest/node.js';

/**
 * A webhook request as the routes read it: from a fetch Request (the app's own routing) or
 * straight from node:http (src/server.ts), so that a webhook costs no fetch-API objects.
 */
export interface WebhookCall {
  method: string;
  /** The request URL as the URL parser reads it (path and query string). */
  url: URL;
  /** A request header, by lower-case name; null when absent. */
  header(name: string): string | null;
  /** The body, at most `limit` bytes (over it: HttpError 413), as readBody reads it. */
  body(limit: number): Promise<Buffer | null>;
  /** Names the request's route for the request metrics. */
  label(route: string): void;
}

/** A webhook answer: status, headers (Content-Length aside) and body. */
export type WebhookAnswer = DirectAnswer;

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
export const text = (status: number, body: string): WebhookAnswer => ({ status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body });
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): WebhookAnswer => ({
  status,
  headers: { ...JSON_TYPE, ...headers },
  body: JSON.stringify(body),
});

/** A webhook answer as a fetch Response. */
export function webhookResponse(answer: WebhookAnswer): Response {
  return new ServerResponse(answer.body, { status: answer.status, statusText: STATUS_CODES[answer.status] ?? '', headers: answer.headers });
}

/** A fetch Request as a webhook call. */
export function fetchWebhookCall(request: Request, url: URL): WebhookCall {
  return {
    method: request.method,
    url,
    header: (name) => request.headers.get(name),
    body: (limit) => readBody(request, limit),
    label: (route) => labelRoute(request, route),
  };
}

