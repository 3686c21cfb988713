import { cacheExchange, Client, fetchExchange, subscriptionExchange } from '@urql/core';
import type { Client as SocketClient } from 'graphql-ws';

// urql on a browser session: queries and mutations over HTTP with the current token, subscriptions
// over the session socket (./socket.ts), whose streams outlive the token's expiry
// (docs/browser-apps.md, "When a stream's session ends"). The same exchange serves urql's React
// bindings (`urql`'s Provider and useSubscription).

export function connectUrqlClient(options: { baseUrl: string; token: () => string; socket: SocketClient; headers?: Record<string, string> }): Client {
  return new Client({
    url: `${options.baseUrl}/graphql`,
    // A function, so that a refreshed token is used from the next request on.
    fetchOptions: () => ({ headers: { ...options.headers, Authorization: `Bearer ${options.token()}` } }),
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: options.socket.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
}
