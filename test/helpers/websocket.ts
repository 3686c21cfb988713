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

/** A message of the graphql-transport-ws protocol as a socket received it. */
export interface ProtocolMessage {
  id?: string;
  type: string;
  payload?: any;
}

export interface RecordingSocket {
  /** Every message received, in order, until the socket closed. */
  messages: ProtocolMessage[];
  /** How the socket closed, and how many messages had arrived before. */
  closed: Promise<{ code: number; reason: string; after: number }>;
  /** The messages of one operation, in order. */
  of(id: string): ProtocolMessage[];
  /** Starts operation `id` (a subscribe message). */
  subscribe(id: string, query: string, variables?: Record<string, unknown>): void;
  /** Resolves once `condition` holds of the messages so far (fails after `ms`). */
  until(condition: (messages: ProtocolMessage[]) => boolean, ms?: number): Promise<void>;
  close(): void;
}

/**
 * A plain `ws` socket speaking graphql-transport-ws by hand on `port`, acknowledged before it is
 * returned: it records every message and the close in the order they arrived, which a library
 * client would not show (it neither retries nor answers on its own).
 */
export async function recordingSocket(port: number, host: string, connectionParams: Record<string, unknown>): Promise<RecordingSocket> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { headers: { host } });
  const messages: ProtocolMessage[] = [];
  const closed = new Promise<{ code: number; reason: string; after: number }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString(), after: messages.length })),
  );
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as ProtocolMessage));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: connectionParams }));
  const until = async (condition: (messages: ProtocolMessage[]) => boolean, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!condition(messages)) {
      if (Date.now() > deadline) throw new Error(`not within ${ms} ms; received ${JSON.stringify(messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await Promise.race([until((received) => received.some((message) => message.type === 'connection_ack')), closed]);
  return {
    messages,
    closed,
    of: (id) => messages.filter((message) => message.id === id),
    subscribe: (id, query, variables) => socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, ...(variables ? { variables } : {}) } })),
    until,
    close: () => socket.close(1000),
  };
}
