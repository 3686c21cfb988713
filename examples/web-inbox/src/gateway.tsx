import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { GatewayConnection, type ConnectionState, type MintedSession } from '../../browser-session/src/connection.js';

// The page's one connection to the gateway (the browser session example's GatewayConnection: a
// graphql-ws socket on a session token that the backend mints and refreshes) and the hooks the
// components use to run operations and subscribe.

export type Agent = MintedSession['user'];

export type Session =
  | { kind: 'starting' }
  /** Nobody is signed in at the backend (or the sign-in was refused): show the sign-in form. */
  | { kind: 'signed-out'; message?: string }
  | { kind: 'ready'; connection: GatewayConnection; agent: Agent };

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
      (minted) => !gone && setSession({ kind: 'ready', connection, agent: minted.user }),
      (failure: unknown) => !gone && setSession({ kind: 'signed-out', message: failure instanceof Error ? failure.message : String(failure) }),
    );
    return () => {
      gone = true;
      connection.dispose();
    };
  }, [attempt]);
  return { session, state };
}

const GatewayContext = createContext<{ connection: GatewayConnection; agent: Agent } | null>(null);

export function GatewayProvider({ connection, agent, children }: { connection: GatewayConnection; agent: Agent; children: ReactNode }) {
  return <GatewayContext.Provider value={{ connection, agent }}>{children}</GatewayContext.Provider>;
}

/** The connection and the signed-in agent. */
export function useGateway(): { connection: GatewayConnection; agent: Agent } {
  const value = useContext(GatewayContext);
  if (!value) throw new Error('useGateway() outside <GatewayProvider>');
  return value;
}

/** Subscribes while the component is mounted (and again when the variables change); `onData` gets each event. */
export function useSubscription<TData, TVariables extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
  onData: (data: TData) => void,
): void {
  const { connection } = useGateway();
  const handler = useRef(onData);
  useEffect(() => {
    handler.current = onData;
  });
  const key = JSON.stringify(variables);
  useEffect(() => connection.subscribe(document, JSON.parse(key) as TVariables, (data) => handler.current(data)), [connection, document, key]);
}

/** A short text for an error thrown by an operation. */
export function errorText(failure: unknown): string {
  return failure instanceof Error ? failure.message : String(failure);
}
