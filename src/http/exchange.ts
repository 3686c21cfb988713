import { STATUS_CODES } from 'node:http';
import { FetchResponse } from '../lib/response.js';

/** A REST failure that is about the HTTP exchange itself, not the domain. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new FetchResponse(JSON.stringify(body), {
    status,
    statusText: STATUS_CODES[status] ?? '',
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/**
 * Reads a body of at most `limit` bytes, counting what actually arrives when there is no
 * Content-Length (a chunked body). Over the limit: HttpError 413.
 */
export async function readBody(request: Request, limit: number): Promise<Buffer | null> {
  const length = request.headers.get('content-length');
  const declared = length === null ? NaN : Number(length);
  if (declared > limit) throw new HttpError(413, 'Request body too large.');
  if (!request.body) return null;
  if (declared >= 0) {
    // A declared length within the limit: the HTTP parser delivers exactly that many bytes, so the
    // body is read whole, without a stream reader; the count guards a request made in process.
    const data = await request.arrayBuffer();
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (bytes.byteLength > limit) throw new HttpError(413, 'Request body too large.');
    return bytes;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new HttpError(413, 'Request body too large.');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** `application/json`, with parameters (a charset, if any, must be UTF-8). */
export function isJsonContentType(value: string | null): boolean {
  if (!value) return false;
  const [type, ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name, raw = ''] = parameter.split('=').map((part) => part.trim());
    return name !== 'charset' || ['utf-8', 'utf8', '"utf-8"'].includes(raw);
  });
}

export const CONTENT_TYPE_MESSAGE = 'Content-Type must be application/json.';

/**
 * Reads a JSON body within the size limit. An empty body reads as undefined; a body that is not
 * declared `application/json` is a 415, invalid JSON a 400 and an oversized body a 413, each
 * before anything is parsed.
 */
export async function readJson(request: Request, limit: number): Promise<unknown> {
  const bytes = await readBody(request, limit);
  if (!bytes?.byteLength) return undefined;
  if (!isJsonContentType(request.headers.get('content-type'))) throw new HttpError(415, CONTENT_TYPE_MESSAGE);
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'Malformed JSON body.');
  }
}

/** The answer to a path no route has (docs/conventions.md). */
export function routeNotFound(): Response {
  return json(404, { status: 'error', message: 'Route not found.' });
}

/** The answer to a known path with a method it does not have: 405 naming the methods it has. */
export function methodNotAllowed(allow: readonly string[]): Response {
  return json(405, { status: 'error', message: 'Method not allowed.' }, { allow: allow.join(', ') });
}
