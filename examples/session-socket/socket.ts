import { createClient, type Client, type ClientOptions, type FormattedExecutionResult, type Sink, type SubscribePayload } from 'graphql-ws';

// One graphql-ws socket on a browser session token, which outlives the token (docs/browser-apps.md,
// "When a stream's session ends"). The gateway ends every operation of a socket whose session
// expired with one result carrying TOKEN_EXPIRED, then `complete`, and then closes the socket with
// 4401; revoked, unknown or without its channel, the same with UNAUTHENTICATED and 4403. Here a
// stream ended by the expiry is started again, under the same sink, once `refresh` has minted a new
// session: its subscriber sees neither the error nor the end, and receives every later event.
// Apollo Client's GraphQLWsLink and urql's subscriptionExchange take this client as they take
// graphql-ws's own (examples/apollo-client/client.ts, ./urql.ts).

/** The session expired: refresh it and reconnect. */
export const EXPIRED = 4401;
/** The credential was refused (revoked, unknown, its channel gone): the same token would be refused again. */
export const REFUSED = 4403;
/** graphql-ws reconnects at once after this code of its own, reading `connectionParams` again. */
const RESTART = 4205;

export interface SessionSocketOptions extends Omit<ClientOptions, 'connectionParams' | 'shouldRetry'> {
  /** The current session token (`cst_…`). */
  token: () => string;
  /**
   * Mints a new session through your backend, after which `token()` returns it. Without it, a
   * stream ended by the expiry ends for its subscriber too, its last result carrying TOKEN_EXPIRED.
   */
  refresh?: () => Promise<void>;
  /** Sent in `connection_init` beside the token (e.g. `X-Channel-Uuid`). */
  params?: () => Record<string, string>;
}

const isCloseEvent = (value: unknown): value is { code: number; reason: string } => typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'number';

const expired = (result: FormattedExecutionResult<unknown, unknown>) => result.errors?.some((error) => error.extensions?.['code'] === 'TOKEN_EXPIRED') ?? false;

/** The graphql-ws client, and `refresh`: mints a new session now and moves the open socket onto it (call it before `expiresAt`). */
export function sessionSocket(options: SessionSocketOptions): Client & { refresh(): Promise<void> } {
  const { token, refresh: mint, params, ...rest } = options;
  const client = createClient({
    ...rest,
    // Read on every connection: a reconnect carries the current token.
    connectionParams: () => ({ ...params?.(), Authorization: `Bearer ${token()}` }),
    // graphql-ws never retries 4401 itself (the streams it ended start again below); 4403 is final.
    shouldRetry: (event) => !(isCloseEvent(event) && event.code === REFUSED),
  });
  let socket: { readyState: number; close(code: number, reason: string): void } | undefined;
  /** Resolves once the current socket has closed. */
  let gone: Promise<void> = Promise.resolve();
  let closed = () => {};
  client.on('opened', (opened) => {
    socket = opened as typeof socket;
    gone = new Promise((resolve) => (closed = resolve));
  });
  client.on('closed', () => closed());

  let refreshing: Promise<void> | undefined;
  const refresh = (): Promise<void> =>
    (refreshing ??= (async () => {
      try {
        await mint!();
        // An open socket reconnects with the new token, its operations with it; the old token just expires.
        if (socket?.readyState === 1) socket.close(RESTART, 'Client Restart');
      } finally {
        refreshing = undefined;
      }
    })());

  function subscribe<Data, Extensions>(payload: SubscribePayload, sink: Sink<FormattedExecutionResult<Data, Extensions>>): () => void {
    if (!mint) return client.subscribe(payload, sink);
    let stopped = false;
    let stop = () => {};
    const start = () => {
      let ended = false;
      // Once for each run, on a new session and a new socket: the expired one closes after its last operation's end.
      const again = () => {
        if (ended) return;
        ended = true;
        Promise.all([refresh(), gone]).then(
          () => !stopped && start(),
          (error: unknown) => sink.error(error),
        );
      };
      let lapsed = false;
      stop = client.subscribe<Data, Extensions>(payload, {
        next: (result) => {
          if (expired(result)) lapsed = true;
          else sink.next(result);
        },
        // Refused at connection_init, or closed before this run's last result: the session expired too.
        error: (error) => (isCloseEvent(error) && error.code === EXPIRED ? again() : sink.error(error)),
        complete: () => (lapsed && !stopped ? again() : sink.complete()),
      });
    };
    start();
    return () => {
      stopped = true;
      stop();
    };
  }

  return {
    on: client.on,
    subscribe,
    iterate<Data, Extensions>(payload: SubscribePayload) {
      const pending: FormattedExecutionResult<Data, Extensions>[] = [];
      let done = false;
      let failure: unknown;
      let wake = () => {};
      const stop = subscribe<Data, Extensions>(payload, {
        next: (result) => (pending.push(result), wake()),
        error: (error) => ((failure = error), (done = true), wake()),
        complete: () => ((done = true), wake()),
      });
      return (async function* () {
        try {
          for (;;) {
            if (!pending.length && !done) await new Promise<void>((resolve) => (wake = resolve));
            while (pending.length) yield pending.shift()!;
            if (failure !== undefined) throw failure;
            if (done) return;
          }
        } finally {
          stop();
        }
      })();
    },
    refresh: () => (mint ? refresh() : Promise.reject(new Error('sessionSocket: no refresh was given'))),
    dispose: () => client.dispose(),
    terminate: () => client.terminate(),
  };
}
