import { createHash } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { Kind, OperationTypeNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';

// Apollo Client on the Connect gateway with its defaults: queries and mutations over HTTP through
// PersistedQueryLink (the SHA-256 of each document as graphql-js print() prints it, the text sent
// only when the gateway asks for it), subscriptions over one graphql-ws socket (GraphQLWsLink).
// The documents in ./gql are registered with the gateway at deploy time (./register.ts), so a
// workspace that runs only registered documents for its browser sessions runs these.

export interface ApolloConnectOptions {
  /** The gateway's base URL, whose host names the workspace: `https://connect.example.com`. */
  baseUrl: string;
  /** The credential: in a browser, a session token (`cst_…`) its backend minted. */
  token: () => string;
  /** Picks the channel when the credential has several. */
  channelId?: string;
  /** Headers every HTTP request and the socket's upgrade carry besides the credential (a proxy's). */
  headers?: Record<string, string>;
  /** The WebSocket class where there is no global one (Node 20: the `ws` package). */
  webSocketImpl?: unknown;
}

/** SHA-256 in hexadecimal (in a browser: `crypto.subtle.digest`, or the `crypto-hash` package). */
export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The Apollo Client, and the graphql-ws client under its socket (to dispose, or to reconnect with a new token). */
export function connectApolloClient(options: ApolloConnectOptions): { apollo: ApolloClient; socket: Client } {
  const credentials = () => ({
    Authorization: `Bearer ${options.token()}`,
    ...(options.channelId ? { 'X-Channel-Uuid': options.channelId } : {}),
  });
  const http = new HttpLink({
    uri: `${options.baseUrl}/graphql`,
    // A function, so that a refreshed token is used from the next request on.
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...options.headers, ...credentials() } }),
  });
  const socket = createClient({
    url: `${options.baseUrl.replace(/^http/, 'ws')}/graphql`,
    // Read again on every connection: a reconnect carries the current token.
    connectionParams: credentials,
    ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
    // A refused credential closes the socket with 4403: a new socket with the same token is refused too.
    shouldRetry: (event) => (event as { code?: number }).code !== 4403,
  });
  const isSubscription = ({ query }: ApolloLink.Operation) => {
    const definition = getMainDefinition(query);
    return definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION;
  };
  const link = ApolloLink.from([new PersistedQueryLink({ sha256 }), ApolloLink.split(isSubscription, new GraphQLWsLink(socket), http)]);
  return { apollo: new ApolloClient({ cache: new InMemoryCache(), link }), socket };
}
