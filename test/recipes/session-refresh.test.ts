import { randomUUID } from 'node:crypto';
import { print } from 'graphql';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectApolloClient } from '../../examples/apollo-client/client.js';
import { sessionSocket } from '../../examples/session-socket/socket.js';
import { connectUrqlClient } from '../../examples/session-socket/urql.js';
import { mintSession, sessionSetup, type MintedSession } from '../helpers/sessions.js';
import { graphql } from '../gql/index.js';
import { servedAppPerFile } from '../helpers/served-app.js';

// The refresh recipes of docs/browser-apps.md ("When a stream's session ends"), each on a live
// server: a browser session's subscription runs until the session expires; the gateway ends it
// with TOKEN_EXPIRED, then complete, then closes the socket with 4401; the recipe mints a new
// session, reconnects and subscribes again, and the subscriber receives every later event without
// having seen the error or an end. Plain graphql-ws (examples/session-socket/socket.ts), Apollo
// Client (examples/apollo-client/client.ts) and urql (examples/session-socket/urql.ts).

const RefreshMessageAdded = graphql(`
  subscription RefreshMessageAdded {
    messageAdded { id body }
  }
`);

/** How long the first session of each run lives once minted. */
const SHORT_LIFE_MS = 4000;

// fetch sends the URL's host: the workspace is named by X-Forwarded-Host, which the server trusts here.
const port = servedAppPerFile({ TRUST_PROXY: '1' });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

/** What a recipe is given: where the gateway is, the session's current token and how to refresh it, a WebSocket naming the workspace. */
interface Wiring {
  baseUrl: string;
  host: string;
  token: () => string;
  refresh: () => Promise<void>;
  webSocketImpl: unknown;
}

/** A recipe under test: its socket (to watch) and a subscription to messageAdded whose every event body reaches `onBody`. */
type Recipe = (wiring: Wiring) => {
  socket: { on: ReturnType<typeof sessionSocket>['on'] };
  subscribe(onBody: (body: string) => void, onEnd: (how: string) => void): () => void;
  dispose(): Promise<void> | void;
};

const recipes: Record<string, Recipe> = {
  'graphql-ws': ({ baseUrl, token, refresh, webSocketImpl }) => {
    const socket = sessionSocket({ url: `${baseUrl.replace(/^http/, 'ws')}/graphql`, token, refresh, webSocketImpl });
    return {
      socket,
      subscribe: (onBody, onEnd) =>
        socket.subscribe<{ messageAdded: { body: string } }>(
          { query: print(RefreshMessageAdded) },
          {
            next: (result) => (result.data ? onBody(result.data.messageAdded.body ?? '') : onEnd(`errors ${JSON.stringify(result.errors)}`)),
            error: (error) => onEnd(`error ${JSON.stringify(error)}`),
            complete: () => onEnd('complete'),
          },
        ),
      dispose: () => socket.dispose(),
    };
  },
  'Apollo Client': ({ baseUrl, host, token, refresh, webSocketImpl }) => {
    const { apollo, socket } = connectApolloClient({ baseUrl, token, refresh, headers: { 'x-forwarded-host': host }, webSocketImpl });
    return {
      socket,
      subscribe: (onBody, onEnd) => {
        const subscription = apollo.subscribe({ query: RefreshMessageAdded }).subscribe({
          next: (result) => (result.data ? onBody(result.data.messageAdded.body ?? '') : onEnd(`error ${String(result.error)}`)),
          error: (error) => onEnd(`error ${String(error)}`),
          complete: () => onEnd('complete'),
        });
        return () => subscription.unsubscribe();
      },
      dispose: async () => {
        apollo.stop();
        await socket.dispose();
      },
    };
  },
  urql: ({ baseUrl, host, token, refresh, webSocketImpl }) => {
    const socket = sessionSocket({ url: `${baseUrl.replace(/^http/, 'ws')}/graphql`, token, refresh, webSocketImpl });
    const urql = connectUrqlClient({ baseUrl, token, socket, headers: { 'x-forwarded-host': host } });
    return {
      socket,
      subscribe: (onBody, onEnd) => {
        const subscription = urql.subscription(RefreshMessageAdded, {}).subscribe((result) => {
          if (result.data) onBody(result.data.messageAdded.body ?? '');
          else onEnd(`error ${String(result.error)}`);
        });
        return () => subscription.unsubscribe();
      },
      dispose: () => socket.dispose(),
    };
  },
};

describe.each(Object.entries(recipes))('the refresh recipe with %s', (_name, recipe) => {
  it('outlives the session: TOKEN_EXPIRED, complete and 4401 on the wire; a new session, a new socket, and every later event', async () => {
    const s = await sessionSetup(port.app);
    const contact = await s.contact({ email: `refresh-${randomUUID()}@example.com` });
    let session: MintedSession = await mintSession(s.api, { user: s.user.id });
    // Minted for 60 s at least: brought forward in the database before the token is first used.
    await port.app.db.prisma.accessToken.update({ where: { id: session.id }, data: { expiresAt: new Date(Date.now() + SHORT_LIFE_MS) } });
    const first = session;
    let refreshes = 0;
    const host = s.host;
    class HostedWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers: { host } });
      }
    }
    const wiring: Wiring = {
      baseUrl: `http://127.0.0.1:${port.served.port}`,
      host,
      token: () => session.token,
      // The app's own backend would mint it: here the test's backend credential does.
      refresh: async () => {
        session = await mintSession(s.api, { user: s.user.id });
        refreshes++;
      },
      webSocketImpl: HostedWebSocket,
    };
    const client = recipe(wiring);
    const messages: { id?: string; type: string; payload?: any }[] = [];
    const closes: number[] = [];
    let connections = 0;
    client.socket.on('message', (message) => messages.push(message as never));
    client.socket.on('closed', (event) => closes.push((event as { code: number }).code));
    client.socket.on('connected', () => connections++);
    const bodies: string[] = [];
    const ends: string[] = [];
    const stop = client.subscribe(
      (body) => bodies.push(body),
      (how) => ends.push(how),
    );
    try {
      await until(() => connections === 1, 5000, 'the socket is connected');
      await sleep(300);
      expect((await s.send({ to: contact.id, message: 'before expiry' })).status).toBe(202);
      await until(() => bodies.length === 1, 2000, 'the first event');

      // The session expires: the gateway ends the stream and closes the socket with 4401.
      await until(() => closes.length > 0, SHORT_LIFE_MS + 3000, 'the socket closes');
      expect(closes[0]).toBe(4401);
      const ended = messages.filter((message) => message.type === 'next' || message.type === 'complete');
      expect(ended.slice(-2).map((message) => [message.type, message.payload?.errors?.[0]?.extensions?.code])).toEqual([
        ['next', 'TOKEN_EXPIRED'],
        ['complete', undefined],
      ]);

      // The recipe minted a new session, reconnected with it and subscribed again.
      await until(() => connections === 2, 5000, 'the socket reconnects');
      expect(refreshes).toBe(1);
      expect(session.token).not.toBe(first.token);
      await sleep(300);
      expect((await s.send({ to: contact.id, message: 'after the refresh' })).status).toBe(202);
      await until(() => bodies.length === 2, 3000, 'the event after the refresh');
      expect(bodies).toEqual(['before expiry', 'after the refresh']);
      // The subscriber saw neither the error nor an end.
      expect(ends).toEqual([]);
    } finally {
      stop();
      await client.dispose();
    }
  });
});
