import { persistedExchange } from '@urql/exchange-persisted';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { cacheExchange, Client, Provider, subscriptionExchange, useSubscription, type AnyVariables, type UseSubscriptionArgs } from 'urql';
import { GatewayConnection, type ConnectionState, type MintedSession } from '../../browser-session/src/connection.js';

// The page's one connection to the gateway (the browser session example's GatewayConnection: a
// graphql-ws socket on a session token that the backend mints and refreshes) and the urql client
// on it, which the components use through urql's hooks.

export type Agent = MintedSession['user'];

export type Session =
  | { kind: 'starting' }
  /** Nobody is signed in at the backend (or the sign-in was refused): show the sign-in form. */
  | { kind: 'signed-out'; message?: string }
  | { kind: 'ready'; client: Client; agent: Agent };

/** Asks the page's backend (server.ts): `/api/login`, `/api/session`, `/api/logout`. */
export async function backend<T>(route: string, body: unknown = {}): Promise<T> {
  const response = await fetch(route, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as T & { message?: string };
  if (!response.ok) throw new Error(answer.message ?? `HTTP ${response.status}`);
  return answer;
}

/**
 * Starts a connection with a session from the backend whenever `attempt` changes, and ends it
 * when the component goes. The connection's state (live, reconnecting, revoked) comes with it.
 */
export function useSession(attempt: number): { session: Session; state: ConnectionState } {
  const [session, setSession] = useState<Session>({ kind: 'starting' });
  const [state, setState] = useState<ConnectionState>({ kind: 'connecting' });
  useEffect(() => {
    let gone = false;
    const connection = new GatewayConnection({
      mint: () => backend<MintedSession>('/api/session'),
      onState: (next) => !gone && setState(next),
      onSession: () => {},
    });
    connection.start().then(
      (minted) => !gone && setSession({ kind: 'ready', client: urqlClient(connection, minted.gatewayUrl), agent: minted.user }),
      (failure: unknown) => !gone && setSession({ kind: 'signed-out', message: failure instanceof Error ? failure.message : String(failure) }),
    );
    return () => {
      gone = true;
      connection.dispose();
    };
  }, [attempt]);
  return { session, state };
}

/**
 * urql on the connection: every operation goes over the socket (`subscriptionExchange` with
 * `enableAllOperations`), named by its id only. graphql-codegen's client preset embeds each
 * document's id (`sha256:<hex>`) in the document as `__meta__.hash`; `persistedExchange` sends it as
 * `extensions.persistedQuery` and, enforced, never falls back to the text, which a session token
 * may not send anyway (the workspace runs only registered documents for it). graphql-ws needs a
 * query string: an empty one travels beside the id. The documents keep their text for urql's
 * document cache, whose keys it is. A refreshed token changes nothing here: the connection
 * reconnects the same socket client and the open operations follow.
 */
function urqlClient(connection: GatewayConnection, gatewayUrl: string): Client {
  return new Client({
    url: new URL('/graphql', gatewayUrl).toString(),
    exchanges: [
      cacheExchange,
      persistedExchange({
        enforcePersistedQueries: true,
        enableForMutation: true,
        enableForSubscriptions: true,
        generateHash: async (_, document) => ((document as unknown as { __meta__: { hash: string } }).__meta__.hash).replace(/^sha256:/, ''),
      }),
      subscriptionExchange({
        enableAllOperations: true,
        forwardSubscription: ({ query, documentId: _, ...request }) => ({
          subscribe: (sink) => ({ unsubscribe: connection.request({ ...request, query: request.extensions?.['persistedQuery'] ? '' : (query ?? '') }, sink) }),
        }),
      }),
    ],
  });
}

const AgentContext = createContext<Agent | null>(null);

/** urql's Provider with the session's client, and the signed-in agent. */
export function GatewayProvider({ client, agent, children }: { client: Client; agent: Agent; children: ReactNode }) {
  return (
    <Provider value={client}>
      <AgentContext.Provider value={agent}>{children}</AgentContext.Provider>
    </Provider>
  );
}

/** The signed-in agent. */
export function useAgent(): Agent {
  const agent = useContext(AgentContext);
  if (!agent) throw new Error('useAgent() outside <GatewayProvider>');
  return agent;
}

/** A short text for an error of an operation (urql's CombinedError, or one thrown). */
export function errorText(failure: unknown): string {
  if (failure && typeof failure === 'object' && 'graphQLErrors' in failure && Array.isArray(failure.graphQLErrors) && failure.graphQLErrors.length)
    return failure.graphQLErrors.map((error: { message: string }) => error.message).join('; ');
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * urql's useSubscription, with `onEvent` called once for each event in order. urql folds events
 * through a pure reducer (it may run twice); this one keeps them, and an effect hands on the new.
 */
export function useEvents<TData, TVariables extends AnyVariables>(query: TypedDocumentNode<TData, TVariables>, variables: TVariables, onEvent: (data: TData) => void): void {
  const [{ data: events = [] }] = useSubscription<TData, TData[], TVariables>({ query, variables } as UseSubscriptionArgs<TVariables, TData>, (seen = [], event) => [...seen, event]);
  const handled = useRef(0);
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    // A new subscription (other variables) starts a new list.
    if (events.length < handled.current) handled.current = 0;
    for (const event of events.slice(handled.current)) handler.current(event);
    handled.current = events.length;
  }, [events]);
}
