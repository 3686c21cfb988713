import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './api.js';

/**
 * Where the gateway is and which credential to act with. The workspace is chosen by the
 * Host header, and fetch derives Host from the URL: the base URL must name the
 * workspace's hostname (the demo workspace is `http://localhost:PORT`, not 127.0.0.1).
 */
export interface ConnectOptions {
  /** The server's origin; the API's paths (`/api/connect/…`) are appended to it. */
  baseUrl: string;
  /** A channel API key (`cak_…`) or a connection token (`cct_…`). */
  apiKey: string;
  /** Needed only when the credential can act as several channels. */
  channelId?: string;
}

/** A client typed by the OpenAPI document: paths, parameters, bodies and answers. */
export type ConnectClient = Client<paths>;

type Schemas = components['schemas'];
export type Contact = Schemas['Contact'];
export type Channel = Schemas['Channel'];
export type Message = Schemas['Message'];
export type Conversation = Schemas['Conversation'];
export type PageMeta = Schemas['PageMeta'];

type ValidationBody = Schemas['ValidationError'];

/**
 * A request the API answered with a failure status. `errors` holds the messages per
 * request field of a 422 (`{ email: ['The email has already been taken.'] }`) and is
 * empty for every other status; `conflict` names the contact already holding a unique
 * value. The body is read defensively: a proxy in front of the gateway may answer
 * with something that is not the API's JSON.
 */
export class ConnectApiError extends Error {
  readonly errors: Readonly<Record<string, readonly string[]>>;
  readonly conflict: ValidationBody['conflict'];
  /** Seconds to wait before retrying, from `Retry-After` on a 429 or 503. */
  readonly retryAfter: number | undefined;

  constructor(
    readonly status: number,
    body: unknown,
    headers: Headers = new Headers(),
  ) {
    const fields = body !== null && typeof body === 'object' ? (body as Partial<Record<string, unknown>>) : {};
    super(typeof fields.message === 'string' ? fields.message : `HTTP ${status}`);
    this.name = 'ConnectApiError';
    this.errors = isFieldErrors(fields.errors) ? fields.errors : {};
    this.conflict = isConflict(fields.conflict) ? fields.conflict : undefined;
    const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
    this.retryAfter = Number.isFinite(retryAfter) ? retryAfter : undefined;
  }
}

function isFieldErrors(value: unknown): value is ValidationBody['errors'] {
  return (
    value !== null &&
    typeof value === 'object' &&
    Object.values(value).every((messages) => Array.isArray(messages) && messages.every((m) => typeof m === 'string'))
  );
}

function isConflict(value: unknown): value is NonNullable<ValidationBody['conflict']> {
  return value !== null && typeof value === 'object' && typeof (value as { contactId?: unknown }).contactId === 'string';
}

/**
 * The body of a successful answer, or a ConnectApiError for any other. openapi-fetch
 * returns failures as values (`{ error, response }`); an operation that has nothing to
 * do with a failure but report it passes its result through here.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok || result.data === undefined) {
    throw new ConnectApiError(result.response.status, result.error, result.response.headers);
  }
  return result.data;
}

/** Sends the credential, and the channel to act as when one is chosen, on every request. */
function credentials(options: ConnectOptions): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${options.apiKey}`);
      if (options.channelId) request.headers.set('X-Channel-Uuid', options.channelId);
      return request;
    },
  };
}

export function createConnectClient(options: ConnectOptions): ConnectClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl });
  client.use(credentials(options));
  return client;
}
