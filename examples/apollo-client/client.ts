import { createHash } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { Kind, OperationTypeNode } from 'graphql';
import type { Client } from 'graphql-ws';
import { sessionSocket } from '../session-socket/socket.js';

// Apollo Client on the Connect gateway with its defaults: queries and mutations over HTTP through
// PersistedQueryLink (the SHA-256 of each document as graphql-js print() prints it, the text sent
// only when the gateway asks for it), subscriptions over one graphql-ws socket (GraphQLWsLink) that
// outlives the session token's expiry (../session-socket/socket.ts).
// The documents in ./gql are registered with the gateway at deploy time (./register.ts), so a
// workspace that runs only registered documents for its browser sessions runs these.

export interface ApolloConnectOptions {
  /** The gateway's base URL, whose host names the workspace: `https://connect.example.com`. */
  baseUrl: string;
  /** The credential: in a browser, a session token (`cst_…`) its backend minted. */
  token: () => string;
  /**
   * Mints a new session through the app's backend, after which `token()` returns it: a
   * subscription the gateway ended for the session's expiry starts again on the new one
   * (docs/browser-apps.md, "When a stream's session ends").
   */
  refresh?: () => Promise<void>;
  /** Picks the channel when the credential has several. */
  channelId?: string;
  /** Headers every HTTP request and the socket's upgrade carry besides the credential (a proxy's). */
  headers?: Record<string, string>;
  /** The WebSocket class where there is no global one (Node 20: the `ws` package). */
  webSocketImpl?: unknown;
}

/** SHA-256 in hexadecimal (in a browser: `crypto.subtle.digest`, or the `crypto-hash` package). */
export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The Apollo Client, and the graphql-ws client under its socket (to dispose, or to refresh the session before it expires). */
export function connectApolloClient(options: ApolloConnectOptions): { apollo: ApolloClient; socket: Client & { refresh(): Promise<void> } } {
  const credentials = () => ({
    Authorization: `Bearer ${options.token()}`,
    ...(options.channelId ? { 'X-Channel-Uuid': options.channelId } : {}),
  });
  const http = new HttpLink({
    uri: `${options.baseUrl}/graphql`,
    // A function, so that a refreshed token is used from the next request on.
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...options.headers, ...credentials() } }),
  });
  // The token is read again on every connection; a refused credential (4403) is not retried.
  const socket = sessionSocket({
    url: `${options.baseUrl.replace(/^http/, 'ws')}/graphql`,
    token: options.token,
    ...(options.refresh ? { refresh: options.refresh } : {}),
    ...(options.channelId ? { params: () => ({ 'X-Channel-Uuid': options.channelId! }) } : {}),
    ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
  });
  const isSubscription = ({ query }: ApolloLink.Operation) => {
    const definition = getMainDefinition(query);
    return definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION;
  };
  const link = ApolloLink.from([new PersistedQueryLink({ sha256 }), ApolloLink.split(isSubscription, new GraphQLWsLink(socket), http)]);
  return { apollo: new ApolloClient({ cache: new InMemoryCache(), link }), socket };
}
