import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type FormattedExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** A result as it arrives over the socket. */
type ExecutionResult<TData> = FormattedExecutionResult<TData, unknown>;

export interface SocketClient {
  client: Client;
  /** How the socket closed, once it has: its code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  /** Runs one query or mutation over the socket. */
  run<TData, TVariables>(document: TypedDocumentNode<TData, TVariables>, variables?: TVariables): Promise<ExecutionResult<TData>>;
  /** Subscribes; `received` fills as `next` messages arrive. */
  subscribe<TData, TVariables>(
    document: TypedDocumentNode<TData, TVariables>,
    variables?: TVariables,
  ): { received: ExecutionResult<TData>[]; errors: unknown[]; done: Promise<void>; waitFor(count: number, ms?: number): Promise<ExecutionResult<TData>[]>; stop(): void };
  dispose(): Promise<void>;
}

/**
 * A graphql-ws client (the `graphql-transport-ws` protocol, as Apollo's GraphQLWsLink and urql
 * use it) on `port`, naming the workspace `host` in the upgrade's Host header and sending
 * `connectionParams` in `connection_init`. It never retries: a closed socket stays closed.
 */
export function socketClient(port: number, host: string, connectionParams: Record<string, unknown> | undefined, options: { origin?: string } = {}): SocketClient {
  let settle!: (value: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (settle = resolve));
  const headers = { host, ...(options.origin ? { origin: options.origin } : {}) };
  class HostedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  const client = createClient({
    url: `ws://127.0.0.1:${port}/graphql`,
    webSocketImpl: HostedWebSocket,
    connectionParams,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => {},
    on: { closed: (event) => settle({ code: (event as { code: number }).code, reason: String((event as { reason: unknown }).reason ?? '') }) },
  });
  return {
    client,
    closed,
    run(document, variables) {
      return new Promise((resolve, reject) => {
        let result: ExecutionResult<never> | undefined;
        client.subscribe<never>(
          { query: print(document), variables: variables as Record<string, unknown> | undefined },
          { next: (value) => (result = value), error: reject, complete: () => resolve(result as never) },
        );
      });
    },
    subscribe(document, variables) {
      const received: ExecutionResult<never>[] = [];
      const errors: unknown[] = [];
      let stop = () => {};
      const done = new Promise<void>((resolve) => {
        stop = client.subscribe<never>(
          { query: print(document), variables: variables as Record<string, unknown> | undefined },
          {
            next: (value) => received.push(value),
            error: (error) => {
              errors.push(error);
              resolve();
            },
            complete: resolve,
          },
        );
      });
      return {
        received,
        errors,
        done,
        stop: () => stop(),
        async waitFor(count: number, ms = 5000) {
          const deadline = Date.now() + ms;
          while (received.length < count) {
            if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${received.length}`);
            await new Promise((r) => setTimeout(r, 20));
          }
          return received;
        },
      } as never;
    },
    dispose: () => client.dispose() as Promise<void>,
  };
}
