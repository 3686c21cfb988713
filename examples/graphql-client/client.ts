import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { GraphQLFormattedError } from 'graphql';
import { createClient, type Client } from 'graphql-sse';

/**
 * Where the gateway is and which credential to act with. The workspace is chosen by the
 * Host header, and fetch derives Host from the URL: the base URL must name the
 * workspace's hostname (the demo workspace is `http://localhost:PORT`, not 127.0.0.1).
 */
export interface ConnectOptions {
  baseUrl: string;
  apiKey: string;
  /** Needed only when the credential can act as several channels. */
  channelId?: string;
}

/** A response with `errors` (authentication, validation, rate limit): not a refused input. */
export class GraphQLRequestError extends Error {
  constructor(
    readonly status: number,
    readonly errors: readonly GraphQLFormattedError[],
  ) {
    super(errors.map((error) => error.message).join('; ') || `HTTP ${status}`);
    this.name = 'GraphQLRequestError';
  }
}

function headers(options: ConnectOptions): Record<string, string> {
  return {
    authorization: `Bearer ${options.apiKey}`,
    ...(options.channelId ? { 'x-channel-uuid': options.channelId } : {}),
  };
}

function endpoint(options: ConnectOptions): string {
  return new URL('/graphql', options.baseUrl).toString();
}

/**
 * The id graphql-codegen's client preset gave a document (`persistedDocuments` in codegen.ts):
 * `sha256:` and the SHA-256 of its text. The client ships ids only; the texts are registered with
 * the gateway when the client is deployed (`registerDocuments`).
 */
export function documentId(document: TypedDocumentNode<unknown, never>): string {
  const id = (document as { __meta__?: { hash?: unknown } }).__meta__?.hash;
  if (typeof id !== 'string' || !id.startsWith('sha256:')) throw new Error('The document has no persisted id: generate it with persistedDocuments (codegen.ts).');
  return id;
}

/**
 * The deploy step: registers the client's documents (gql/persisted-documents.json) with the
 * gateway for the workspace, with a backend credential (a channel API key or a connection token).
 * Returns how many were new; registering the same documents again stores nothing. When the
 * gateway refuses the manifest it stores none of it, and this throws an Error naming each
 * refused document.
 */
export async function registerDocuments(options: ConnectOptions, manifest: Record<string, string>): Promise<number> {
  const response = await fetch(new URL('/api/connect/graphql/documents', options.baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(manifest),
  });
  const body = (await response.json()) as { data?: { stored: number }; message?: string; errors?: Record<string, string[]> };
  if (response.status !== 200 || !body.data) {
    const refused = Object.entries(body.errors ?? {}).map(([key, messages]) => `${key}: ${messages.join(' ')}`);
    throw new Error(`HTTP ${response.status}: ${refused.length ? refused.join('; ') : body.message}`);
  }
  return body.data.stored;
}

/**
 * Runs a query or mutation, named by its id (GraphQL over HTTP's persisted documents). The
 * result type comes from the document, so a caller reads exactly the fields it selected.
 * Refused mutation inputs are not errors here: they are data (`userErrors`) for the caller to
 * show. A document the gateway does not know throws PERSISTED_QUERY_NOT_FOUND: register the
 * client's documents first (`registerDocuments`).
 */
export async function execute<TData, TVariables extends Record<string, unknown>>(
  options: ConnectOptions,
  document: TypedDocumentNode<TData, TVariables>,
  ...[variables]: TVariables extends Record<string, never> ? [variables?: TVariables] : [variables: TVariables]
): Promise<TData> {
  const response = await fetch(endpoint(options), {
    method: 'POST',
    headers: { ...headers(options), 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ documentId: documentId(document), variables }),
  });
  const body = (await response.json()) as { data?: TData | null; errors?: GraphQLFormattedError[] };
  if (body.errors?.length || body.data == null) throw new GraphQLRequestError(response.status, body.errors ?? []);
  return body.data;
}

/** One SSE client per credential; each subscription is its own streamed request. */
export function subscriptionClient(options: ConnectOptions): Client<false> {
  // No silent retries: the server ends a stream when its credential lapses, and then
  // refuses it again, so an ended or refused stream is reported for the caller to handle.
  return createClient({ url: endpoint(options), headers: headers(options), retryAttempts: 0 });
}

/** A live subscription: its events in order, typed by the document. */
export interface Subscription<TData> extends AsyncIterable<TData> {
  /** Resolves once the server has accepted the stream; rejects when it refused it (e.g. 401). */
  connected: Promise<void>;
  /** Stops the stream; iteration then ends after the events already received. */
  dispose(): void;
}

/**
 * Subscribes over GraphQL over Server-Sent Events. Events are buffered from the moment the
 * stream opens, so none is lost between `connected` and the first read; a GraphQL error
 * in the stream or a refused stream ends iteration by throwing it.
 */
export function subscribe<TData, TVariables extends Record<string, unknown>>(
  client: Client<false>,
  document: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
): Subscription<TData> {
  const received: TData[] = [];
  let failure: unknown;
  let finished = false;
  let wake = () => {};
  let accepted!: () => void;
  let refused!: (error: unknown) => void;
  const connected = new Promise<void>((resolve, reject) => ((accepted = resolve), (refused = reject)));
  // A refusal is reported to whoever iterates too; nobody has to await `connected`.
  connected.catch(() => {});

  const end = (error?: unknown) => {
    if (error !== undefined && failure === undefined) failure = error;
    finished = true;
    refused(error ?? new Error('subscription ended before it was accepted'));
    wake();
  };
  // graphql-sse sends `query`: empty, the document named by its id as a persisted query.
  const sha256Hash = documentId(document).slice('sha256:'.length);
  const dispose = client.subscribe<TData>(
    { query: '', variables, extensions: { persistedQuery: { version: 1, sha256Hash } } },
    {
      next(result) {
        if (result.errors?.length || result.data == null) return end(new GraphQLRequestError(200, result.errors ?? []));
        received.push(result.data);
        wake();
      },
      error: (error) => end(error),
      complete: () => end(),
    },
    { connected: () => accepted() },
  );

  return {
    connected,
    dispose() {
      dispose();
      end();
    },
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          const next = received.shift();
          if (next !== undefined) yield next;
          else if (failure !== undefined) throw failure;
          else if (finished) return;
          else await new Promise<void>((resolve) => (wake = resolve));
        }
      } finally {
        dispose();
      }
    },
  };
}
