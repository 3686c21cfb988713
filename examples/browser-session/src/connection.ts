import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { createClient, type Client, type Sink, type SubscribePayload } from 'graphql-ws';

/** What the page's backend answers `POST /api/session` with (server.ts). */
export interface MintedSession {
  token: string;
  expiresAt: string;
  /** The gateway's base URL, e.g. `http://localhost:4000`. */
  gatewayUrl: string;
  user: { id: string; name: string; email: string };
}

/** Where the connection stands, for the page to show. */
export type ConnectionState =
  | { kind: 'connecting' }
  | { kind: 'connected' }
  | { kind: 'reconnecting' }
  /** The gateway ended the session (revoked, or its user signed out elsewhere): sign in again. */
  | { kind: 'revoked'; reason: string }
  /** The backend would not mint a session (signed out there): sign in again. */
  | { kind: 'signed-out'; reason: string };

/** A GraphQL response with errors, or a refused connection. */
export class GatewayError extends Error {
  constructor(readonly errors: readonly GraphQLFormattedError[]) {
    super(errors.map((error) => error.message).join('; ') || 'The gateway answered no data.');
    this.name = 'GatewayError';
  }

  get code(): string | undefined {
    return this.errors[0]?.extensions?.code as string | undefined;
  }
}

/** The gateway's close code for a missing, bad or revoked credential, or one that lost its channel (docs/browser-apps.md). */
const FORBIDDEN = 4403;
/** The gateway's close code for an expired session: mint a new one and reconnect. */
const EXPIRED = 4401;
/** The close code the client uses to reconnect with a new token. */
const RESTART = 4205;

export interface ConnectionOptions {
  /** Mints a session through the page's backend (its own sign-in decides who the agent is). */
  mint(): Promise<MintedSession>;
  onState(state: ConnectionState): void;
  onSession(session: MintedSession): void;
  /** How long before `expiresAt` to refresh; a minute covers clock skew (docs/browser-apps.md). */
  refreshMarginMs?: number;
}

/**
 * One WebSocket to the gateway for every operation (graphql-ws, the `graphql-transport-ws`
 * protocol), acting with a session token that the page's backend mints. The token travels in
 * `connection_init`; before it expires a new one is minted and the socket reconnects with it, and
 * the client resubscribes the open subscriptions. A session that expired anyway (the tab slept past
 * the refresh: `TOKEN_EXPIRED` on each stream, then close code 4401) is replaced by a new one, and
 * its streams subscribed again. When the gateway ends the session — an error `UNAUTHENTICATED` on a
 * stream, then close code 4403 — nothing is retried: the page is told.
 */
export class GatewayConnection {
  private session: MintedSession | undefined;
  private client: Client | undefined;
  private socket: WebSocket | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private ended = false;
  private refreshing: Promise<void> | undefined;
  /** Resolves once the current socket has closed. */
  private gone: Promise<void> = Promise.resolve();
  private closed = () => {};

  constructor(private readonly options: ConnectionOptions) {}

  /** Mints the first session and opens the socket. */
  async start(): Promise<MintedSession> {
    const session = await this.mint();
    const url = new URL('/graphql', session.gatewayUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    this.options.onState({ kind: 'connecting' });
    this.client = createClient({
      url: url.toString(),
      // Read at every (re)connection: a refreshed token is used from the next socket on.
      connectionParams: () => ({ Authorization: `Bearer ${this.session!.token}` }),
      lazy: false,
      // A refused connection is reported through `closed` below.
      onNonLazyError: () => {},
      retryAttempts: 5,
      retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** retries, 5000))),
      // 4403 is final: the credential was refused, and the same one would be refused again. graphql-ws
      // never retries 4401 (expired): the streams it ended start again on a new session (request()).
      shouldRetry: (event) => !this.ended && !(isCloseEvent(event) && event.code === FORBIDDEN),
      on: {
        opened: (socket) => {
          this.socket = socket as WebSocket;
          this.gone = new Promise((resolve) => (this.closed = resolve));
        },
        connected: () => this.options.onState({ kind: 'connected' }),
        closed: (event) => {
          this.closed();
          if (this.ended) return;
          if (isCloseEvent(event) && event.code === FORBIDDEN) return this.end('revoked', 'The gateway ended this session.');
          this.options.onState({ kind: 'reconnecting' });
        },
      },
    });
    return session;
  }

  /** Runs a query or mutation named by its id; throws GatewayError on errors. */
  async execute<TData, TVariables extends Record<string, unknown>>(document: TypedDocumentNode<TData, TVariables>, variables: TVariables): Promise<TData> {
    const client = this.client;
    if (!client) throw new Error('start() first');
    const result = await new Promise<FormattedExecutionResult<TData>>((resolve, reject) => {
      let first: FormattedExecutionResult<TData> | undefined;
      client.subscribe<TData>(payload(document, variables), {
        next: (value) => (first ??= value as FormattedExecutionResult<TData>),
        error: (error) => reject(error instanceof Error ? error : new GatewayError([{ message: closeReason(error) }])),
        complete: () => (first ? resolve(first) : reject(new GatewayError([]))),
      });
    });
    if (result.errors?.length || result.data == null) throw new GatewayError(result.errors ?? []);
    return result.data;
  }

  /**
   * Subscribes; `onData` receives each event. When the gateway ends the stream because the session
   * was revoked (`UNAUTHENTICATED`), the connection ends too; when it ended because the session
   * expired (`TOKEN_EXPIRED`: the refresh did not happen in time, e.g. the tab slept), a new session
   * is minted and the stream subscribed again. Returns a function that unsubscribes.
   */
  subscribe<TData, TVariables extends Record<string, unknown>>(
    document: TypedDocumentNode<TData, TVariables>,
    variables: TVariables,
    onData: (data: TData) => void,
  ): () => void {
    return this.request(payload(document, variables), { next: (result) => result.data && onData(result.data as TData), error: () => {}, complete: () => {} });
  }

  /**
   * Runs any operation on the socket as graphql-ws takes it (the transport of a client library,
   * e.g. urql's subscriptionExchange); `sink` receives each result, then the end. The session's
   * end and expiry are handled as for subscribe(): a stream that ended on an expired session is
   * started again on the new one, under the same sink. Returns a function that stops it.
   */
  request(operation: SubscribePayload, sink: Sink<FormattedExecutionResult>): () => void {
    const client = this.client;
    if (!client) throw new Error('start() first');
    let stopped = false;
    let stop = () => {};
    const start = () => {
      // The run that reported the lapse ends; its end is not the stream's.
      let lapsed = false;
      // On a new session and a new socket: the expired one closes after its last operation's end.
      const expired = () => {
        if (lapsed) return;
        lapsed = true;
        void Promise.all([this.refresh(), this.gone]).then(() => {
          if (!this.ended && !stopped) start();
        });
      };
      stop = client.subscribe(operation, {
        next: (result) => {
          const code = result.errors?.[0]?.extensions?.code as string | undefined;
          if (code === 'UNAUTHENTICATED') {
            lapsed = true;
            return this.end('revoked', 'The gateway ended this session.');
          }
          if (code === 'TOKEN_EXPIRED') return expired();
          sink.next(result as FormattedExecutionResult);
        },
        // A socket refused or closed for the expiry before this run's own end.
        error: (error) => (isCloseEvent(error) && error.code === EXPIRED ? expired() : !lapsed && sink.error(error)),
        complete: () => !lapsed && sink.complete(),
      });
    };
    start();
    return () => {
      stopped = true;
      stop();
    };
  }

  /** Mints a new session now and reconnects with it (the open subscriptions follow). */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        await this.mint();
        // Close code 4205 is retried at once with the new connection_init; the old token simply expires.
        if (this.socket?.readyState === WebSocket.OPEN) this.socket.close(RESTART, 'Client Restart');
      } catch (error) {
        if (!this.ended) this.end('signed-out', error instanceof Error ? error.message : String(error));
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Closes the socket for good. */
  dispose(): void {
    this.ended = true;
    clearTimeout(this.refreshTimer);
    void this.client?.dispose();
  }

  private async mint(): Promise<MintedSession> {
    const session = await this.options.mint();
    this.session = session;
    this.options.onSession(session);
    clearTimeout(this.refreshTimer);
    const margin = this.options.refreshMarginMs ?? 60_000;
    // A session shorter than twice the margin is refreshed at half its life.
    const left = Date.parse(session.expiresAt) - Date.now();
    this.refreshTimer = setTimeout(() => void this.refresh(), Math.max(left - margin, left / 2, 0));
    return session;
  }

  private end(kind: 'revoked' | 'signed-out', reason: string): void {
    if (this.ended) return;
    this.dispose();
    this.options.onState({ kind, reason });
  }
}

/**
 * The id graphql-codegen's client preset gave a document (`sha256:<hex>`), sent as a persisted
 * query beside an empty `query` (graphql-ws requires the string).
 */
function payload(document: TypedDocumentNode<unknown, never>, variables: Record<string, unknown>) {
  const id = (document as { __meta__?: { hash?: unknown } }).__meta__?.hash;
  if (typeof id !== 'string' || !id.startsWith('sha256:')) throw new Error('The document has no persisted id: generate it with persistedDocuments (codegen.ts).');
  return { query: '', variables, extensions: { persistedQuery: { version: 1, sha256Hash: id.slice('sha256:'.length) } } };
}

function isCloseEvent(value: unknown): value is { code: number; reason: string } {
  return typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'number';
}

function closeReason(value: unknown): string {
  return isCloseEvent(value) ? `The connection closed (${value.code}${value.reason ? ` ${value.reason}` : ''}).` : 'The connection failed.';
}
