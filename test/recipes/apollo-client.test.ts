import { randomUUID } from 'node:crypto';
import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectApolloClient } from '../../examples/apollo-client/client.js';
import { MessageAddedSubscription, SendMessageMutation, ThreadQuery, ViewerQuery } from '../../examples/apollo-client/operations.js';
import { recipeServer } from '../helpers/recipe-server.js';

// Apollo Client 4 at its defaults — PersistedQueryLink (the SHA-256 of print() of each document)
// in front of HttpLink and GraphQLWsLink (which sends the text beside the id) — runs a browser
// session's query, mutation and subscription against a workspace that runs only its registered
// documents for sessions, on a real port. The registered manifest is the one graphql-codegen
// wrote for the recipe (examples/apollo-client), posted as a deploy step posts it.

const live = recipeServer(new URL('../../examples/apollo-client/gql/persisted-documents.json', import.meta.url));
/** Every GraphQL request body sent over HTTP, as JSON. */
const sent: Record<string, any>[] = [];
/** Every message the socket sent, as JSON. */
const socketSent: Record<string, any>[] = [];

/** The recipe's client on the session token, with a recording fetch and socket. */
function client() {
  const host = live.s.host;
  class HostedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: { host } });
      const send = this.send.bind(this);
      this.send = ((data: string, ...rest: never[]) => {
        socketSent.push(JSON.parse(String(data)));
        return send(data, ...rest);
      }) as typeof this.send;
    }
  }
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
    return realFetch(input, init);
  }) as typeof fetch;
  const connected = connectApolloClient({
    baseUrl: `http://127.0.0.1:${live.served.port}`,
    token: () => live.s.session.token,
    headers: { 'x-forwarded-host': host },
    webSocketImpl: HostedWebSocket,
  });
  return {
    ...connected,
    async dispose() {
      globalThis.fetch = realFetch;
      connected.apollo.stop();
      await connected.socket.dispose();
    },
  };
}

describe('Apollo Client with PersistedQueryLink, HttpLink and GraphQLWsLink at their defaults', () => {
  it("runs a session's query, mutation and subscription on a workspace that runs only registered documents", async () => {
    const { apollo, dispose } = client();
    try {
      const viewer = await apollo.query({ query: ViewerQuery, fetchPolicy: 'network-only' });
      expect(viewer.error).toBeUndefined();
      expect(viewer.data?.viewer?.workspace.id).toBe(live.s.workspace.id);
      // The hash alone, found at once: no PersistedQueryNotFound round trip, no text sent.
      expect(sent).toHaveLength(1);
      expect(sent[0]!.query).toBeUndefined();
      expect(sent[0]!.extensions.persistedQuery.sha256Hash).toMatch(/^[0-9a-f]{64}$/);

      const contact = await live.s.contact({ phone: '+14155550123' });
      const opened = await live.s.send({ to: contact.id, message: 'opens the conversation' });
      const conversationId = opened.body.data.message.conversationId as string;

      const events = firstValueFrom(apollo.subscribe({ query: MessageAddedSubscription, variables: { conversationId } }).pipe(take(1), toArray()));
      // The socket carries the text beside the id; the subscription is live once the server answered it.
      await waitUntil(() => socketSent.some((message) => message.type === 'subscribe'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const subscribe = socketSent.find((message) => message.type === 'subscribe')!;
      expect(subscribe.payload.query).toContain('ApolloMessageAdded');
      expect(subscribe.payload.extensions.persistedQuery.sha256Hash).toMatch(/^[0-9a-f]{64}$/);

      const body = `from Apollo ${randomUUID()}`;
      const result = await apollo.mutate({ mutation: SendMessageMutation, variables: { input: { to: { contactId: contact.id }, message: body } } });
      expect(result.error).toBeUndefined();
      expect(result.data?.sendMessage?.userErrors).toEqual([]);
      expect(result.data?.sendMessage?.message).toMatchObject({ body, conversationId, status: expect.any(String) });
      expect(await live.app.db.prisma.message.count({ where: { body } })).toBe(1);

      const [event] = await events;
      expect(event!.error).toBeUndefined();
      expect(event!.data?.messageAdded).toMatchObject({ id: result.data!.sendMessage!.message!.id, body, conversationId });

      const thread = await apollo.query({ query: ThreadQuery, variables: { conversationId, last: 2 }, fetchPolicy: 'network-only' });
      expect(thread.data?.messages?.edges.map((edge) => edge.node.body)).toContain(body);
      // Every HTTP request sent the hash alone.
      expect(sent.every((request) => request.query === undefined)).toBe(true);
    } finally {
      await dispose();
    }
  });
});

async function waitUntil(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
