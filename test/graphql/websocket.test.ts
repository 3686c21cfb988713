import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';
import { requestOnPort, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { recordingSocket, socketClient, type RecordingSocket } from '../helpers/websocket.js';
import { mintSession, sessionSetup } from '../helpers/sessions.js';
import { runAdminOn } from '../helpers/admin.js';
import { graphql } from '../gql/index.js';
import { createConnection } from '../../src/modules/credentials/credentials.service.js';

/** GraphQL over WebSocket (docs/graphql.md): the graphql-transport-ws protocol on /graphql, on a real port. */

const Viewer = graphql(`
  query SocketViewer {
    viewer {
      workspace {
        name
      }
      channel {
        id
      }
    }
  }
`);

const Rename = graphql(`
  mutation SocketRename($id: ID!, $name: String) {
    updateContact(id: $id, input: { name: $name }) {
      contact {
        id
        name
      }
      userErrors {
        message
      }
    }
  }
`);

const Added = graphql(`
  subscription SocketMessageAdded($conversationId: ID) {
    messageAdded(conversationId: $conversationId) {
      id
      body
      conversationId
    }
  }
`);

const TooDeep = graphql(`
  query SocketTooDeep {
    conversations {
      edges {
        node {
          messages {
            edges {
              node {
                conversation {
                  messages {
                    edges {
                      node {
                        conversation {
                          id
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
`);

let app: TestApp;
let served: ServedApp;
let s: Awaited<ReturnType<typeof messagingSetup>>;

beforeAll(async () => {
  app = await createTestApp();
  served = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
  s = await messagingSetup(app);
});
afterAll(async () => {
  await served.close();
  await app.close();
});

const auth = () => ({ Authorization: `Bearer ${s.apiKey}` });

/** Starts each subscription on the socket, and resolves once the server has subscribed them (a query sent after is answered after). */
async function live(socket: RecordingSocket, subscriptions: Record<string, string>) {
  for (const [id, query] of Object.entries(subscriptions)) socket.subscribe(id, query);
  socket.subscribe('ready', '{ viewer { workspace { name } } }');
  await socket.until((messages) => messages.some((message) => message.id === 'ready' && message.type === 'complete'));
  await new Promise((r) => setTimeout(r, 100));
}

/** The last messages of an operation whose credential lapsed: one result with the error, then complete. */
const endedWith = (id: string, code: string) => [
  { id, type: 'next', payload: { data: null, errors: [expect.objectContaining({ message: 'Unauthenticated.', extensions: { code } })] } },
  { id, type: 'complete' },
];

/** `promise`, or a failure after `ms`. */
const within = <T,>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms))]);

describe('GraphQL over WebSocket', () => {
  it('runs queries and mutations with the credential of connection_init, header names in any case', async () => {
    const socket = socketClient(served.port, s.host, { authorization: `Bearer ${s.apiKey}` });
    try {
      const viewer = await socket.run(Viewer);
      expect(viewer.data).toEqual({ viewer: { workspace: { name: 'Test workspace' }, channel: { id: s.channel.id } } });
      const c = await s.contact({ email: 'socket@example.com' });
      const renamed = await socket.run(Rename, { id: c.id, name: 'Over a socket' });
      expect(renamed.data?.updateContact).toEqual({ contact: { id: c.id, name: 'Over a socket' }, userErrors: [] });
      expect((await s.api.get(`/contacts/${c.id}`)).body.data.contact.name).toBe('Over a socket');
    } finally {
      await socket.dispose();
    }
  });

  it('delivers messageAdded for a message sent over REST', async () => {
    const socket = socketClient(served.port, s.host, auth());
    try {
      const c = await s.contact({ email: 'socket-sub@example.com' });
      const first = await s.send({ to: c.id, message: 'opens the conversation' });
      const conversationId = first.body.data.message.conversationId as string;
      const subscription = socket.subscribe(Added, { conversationId });
      // The subscription is live once the server has subscribed: a query after it on the same socket is answered after.
      await socket.run(Viewer);
      await new Promise((r) => setTimeout(r, 100));
      const sent = await s.send({ to: c.id, message: 'over the socket' });
      const [event] = await subscription.waitFor(1);
      expect(event!.data?.messageAdded).toEqual({ id: sent.body.data.message.id, body: 'over the socket', conversationId });
      subscription.stop();
    } finally {
      await socket.dispose();
    }
  });

  it('closes the socket with 4403 for a missing, malformed or unknown credential, or a host that names no workspace', async () => {
    for (const [label, params, host] of [
      ['none', undefined, s.host],
      ['empty payload', {}, s.host],
      ['not a bearer', { Authorization: s.apiKey }, s.host],
      ['unknown key', { Authorization: 'Bearer cak_unknown' }, s.host],
      ['another host', auth(), 'nobody.example'],
    ] as const) {
      const socket = socketClient(served.port, host, params as Record<string, unknown> | undefined);
      const closed = await socket.closed;
      expect(closed.code, label).toBe(4403);
      await socket.dispose();
    }
  });

  it('runs as a session; once it is revoked, each open operation gets one UNAUTHENTICATED error then complete, and the socket then closes with 4403', async () => {
    const ss = await sessionSetup(app);
    const socket = await recordingSocket(served.port, ss.host, { Authorization: `Bearer ${ss.session.token}` });
    try {
      await live(socket, { a: 'subscription { messageAdded { id body } }', b: 'subscription { conversationUpdated { id } }' });
      expect((await ss.api.delete(`/sessions/${ss.session.id}`)).status).toBe(204);
      const closed = await within(socket.closed, 5000).catch((error: Error) => expect.fail(`${error.message}: ${JSON.stringify(socket.messages)}`));
      expect(closed.code).toBe(4403);
      for (const id of ['a', 'b']) expect(socket.of(id)).toEqual(endedWith(id, 'UNAUTHENTICATED'));
      // A message sent after the revocation answered never reaches it.
      const c = await ss.contact({ email: 'after-revocation@example.com' });
      await ss.send({ to: c.id, message: 'too late' });
      await new Promise((r) => setTimeout(r, 200));
      expect(JSON.stringify(socket.messages)).not.toContain('too late');
    } finally {
      socket.close();
    }
  });

  it('once a session expires, each open operation gets one TOKEN_EXPIRED error then complete, and the socket then closes with 4401', async () => {
    const ss = await sessionSetup(app);
    // Minted for 60 s at least: brought forward in the database before the token is first used.
    await app.db.prisma.accessToken.update({ where: { id: ss.session.id }, data: { expiresAt: new Date(Date.now() + 4000) } });
    const socket = await recordingSocket(served.port, ss.host, { Authorization: `Bearer ${ss.session.token}` });
    try {
      await live(socket, { a: 'subscription { messageAdded { id body } }', b: 'subscription { messageUpdated { id status } }', c: 'subscription { conversationUpdated { id } }' });
      const c = await ss.contact({ email: 'before-expiry@example.com' });
      expect((await ss.send({ to: c.id, message: 'before expiry' })).status).toBe(202);
      await socket.until((messages) => messages.some((message) => message.id === 'a'));
      const closed = await within(socket.closed, 5000);
      expect(closed.code).toBe(4401);
      expect(socket.of('a')).toEqual([{ id: 'a', type: 'next', payload: { data: { messageAdded: expect.objectContaining({ body: 'before expiry' }) } } }, ...endedWith('a', 'TOKEN_EXPIRED')]);
      for (const id of ['b', 'c']) expect(socket.of(id).slice(-2)).toEqual(endedWith(id, 'TOKEN_EXPIRED'));
      for (const id of ['b', 'c']) expect(JSON.stringify(socket.of(id).slice(0, -2))).not.toContain('errors');
    } finally {
      socket.close();
    }
  });

  it('closes a socket with no operation open when its session lapses: 4401 at expiry, 4403 at revocation', async () => {
    for (const [lapse, close] of [
      ['expired', 4401],
      ['revoked', 4403],
    ] as const) {
      const ss = await sessionSetup(app);
      if (lapse === 'expired') await app.db.prisma.accessToken.update({ where: { id: ss.session.id }, data: { expiresAt: new Date(Date.now() + 3000) } });
      const socket = await recordingSocket(served.port, ss.host, { Authorization: `Bearer ${ss.session.token}` });
      try {
        // One operation answered and completed: nothing is open when the session lapses.
        socket.subscribe('viewer', '{ viewer { workspace { name } } }');
        await socket.until((messages) => messages.some((message) => message.id === 'viewer' && message.type === 'complete'));
        const opened = Date.now();
        if (lapse === 'revoked') expect((await ss.api.delete(`/sessions/${ss.session.id}`)).status).toBe(204);
        const closed = await within(socket.closed, 8000);
        expect(closed.code, lapse).toBe(close);
        // At the lapse, not at a later operation: expiry by its timer, revocation within 5 s.
        expect(Date.now() - opened, lapse).toBeLessThan(lapse === 'expired' ? 6000 : 5500);
        expect(socket.messages.filter((message) => message.id !== 'viewer' && message.type !== 'connection_ack'), lapse).toEqual([]);
      } finally {
        socket.close();
      }
    }
  });

  it('closes a socket whose connection_init carries an expired session with 4401, a revoked one with 4403', async () => {
    const ss = await sessionSetup(app);
    const expired = await mintSession(ss.api, { user: ss.user.id });
    await app.db.prisma.accessToken.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const revoked = await mintSession(ss.api, { user: ss.user.id });
    expect((await ss.api.delete(`/sessions/${revoked.id}`)).status).toBe(204);
    for (const [session, code] of [
      [expired, 4401],
      [revoked, 4403],
    ] as const) {
      const socket = await recordingSocket(served.port, ss.host, { Authorization: `Bearer ${session.token}` });
      expect((await socket.closed).code).toBe(code);
      expect(socket.messages).toEqual([]);
    }
  });

  it('runs a registered document by id, and refuses a restricted session\'s text with PERSISTED_QUERY_ONLY', async () => {
    const ss = await sessionSetup(app);
    const text = 'query SocketRegistered { viewer { workspace { name } } }';
    const hash = createHash('sha256').update(text).digest('hex');
    expect((await ss.api.post('/graphql/documents', { [hash]: text })).status).toBe(200);
    expect((await runAdminOn(app.db, ['workspace:configure', '--hostname', ss.host, '--trusted-documents-only', 'on'])).code).toBe(0);
    const socket = socketClient(served.port, ss.host, { Authorization: `Bearer ${ss.session.token}` });
    const raw = (payload: { query: string; extensions?: Record<string, unknown> }) =>
      new Promise<unknown>((resolve) => {
        let result: unknown;
        socket.client.subscribe(payload, { next: (value) => (result = value), error: (errors) => resolve({ errors }), complete: () => resolve(result) });
      });
    try {
      expect(await raw({ query: '', extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).toEqual({ data: { viewer: { workspace: { name: 'Test workspace' } } } });
      expect(JSON.stringify(await raw({ query: text }))).toContain('PERSISTED_QUERY_ONLY');
      expect(JSON.stringify(await raw({ query: '', extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } }))).toContain('PERSISTED_QUERY_NOT_FOUND');
    } finally {
      await socket.dispose();
    }
  });

  it('applies the document limits and masks nothing it should not', async () => {
    const socket = socketClient(served.port, s.host, auth());
    try {
      const deep = await socket.run(TooDeep).catch((errors: unknown) => ({ errors }));
      expect(JSON.stringify(deep)).toContain('QUERY_TOO_COMPLEX');
    } finally {
      await socket.dispose();
    }
  });

  it('counts every operation against the credential budget: over it, that operation is RATE_LIMITED', async () => {
    const limited = await serveOnPort(app.db, { ...app.env, RATE_LIMIT_PER_MINUTE: 3 }, { providers: app.providers });
    const ws = await messagingSetup(app);
    const socket = socketClient(limited.port, ws.host, { Authorization: `Bearer ${ws.apiKey}` });
    try {
      // connection_init counts one; then two operations fit.
      expect((await socket.run(Viewer)).data?.viewer?.workspace.name).toBe('Test workspace');
      expect((await socket.run(Viewer)).data).toBeDefined();
      const refused = await socket.run(Viewer).catch((errors: unknown) => ({ errors }));
      expect(JSON.stringify(refused)).toContain('RATE_LIMITED');
    } finally {
      await socket.dispose();
      await limited.close();
    }
  });

  it("closes with 4403 a session's socket that a page of an origin outside the session's origins opened, even one CORS_ORIGINS allows", async () => {
    const ss = await sessionSetup(app, { origins: ['https://app.example'] });
    const cors = await serveOnPort(app.db, { ...app.env, CORS_ORIGINS: ['https://app.example', 'https://other.example'] }, { providers: app.providers });
    const token = { Authorization: `Bearer ${ss.session.token}` };
    const listed = socketClient(cors.port, ss.host, token, { origin: 'https://app.example' });
    const script = socketClient(cors.port, ss.host, token);
    const other = socketClient(cors.port, ss.host, token, { origin: 'https://other.example' });
    try {
      expect((await listed.run(Viewer)).data?.viewer?.channel?.id).toBe(ss.channel.id);
      // No Origin (not a browser page): not refused by the session's origins, as over HTTP.
      expect((await script.run(Viewer)).data?.viewer?.channel?.id).toBe(ss.channel.id);
      const closed = await Promise.race([other.closed, new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
      expect(closed?.code).toBe(4403);
      // A backend credential has no origins: any allowed origin may use it.
      const backend = socketClient(cors.port, ss.host, { Authorization: `Bearer ${ss.apiKey}` }, { origin: 'https://other.example' });
      try {
        expect((await backend.run(Viewer)).data?.viewer?.channel?.id).toBe(ss.channel.id);
      } finally {
        await backend.dispose();
      }
    } finally {
      await Promise.all([listed.dispose(), script.dispose(), other.dispose()]);
      await cors.close();
    }
  });

  it('refuses an upgrade from a browser origin that CORS_ORIGINS does not list, and an upgrade elsewhere than /graphql', async () => {
    const upgrade = (port: number, path: string, origin?: string) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request({
          port,
          host: '127.0.0.1',
          path,
          headers: {
            host: s.host,
            connection: 'Upgrade',
            upgrade: 'websocket',
            'sec-websocket-version': '13',
            'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64'),
            'sec-websocket-protocol': 'graphql-transport-ws',
            ...(origin ? { origin } : {}),
          },
        });
        request.on('upgrade', (response, socket) => {
          socket.destroy();
          resolve(response.statusCode!);
        });
        request.on('response', (response) => {
          response.resume();
          resolve(response.statusCode!);
        });
        request.on('error', reject);
        request.end();
      });
    expect(await upgrade(served.port, '/graphql')).toBe(101);
    expect(await upgrade(served.port, '/graphql', `http://${s.host}`)).toBe(101);
    expect(await upgrade(served.port, '/graphql', 'https://elsewhere.example')).toBe(403);
    expect(await upgrade(served.port, '/api/connect/contacts')).toBe(404);
    const cors = await serveOnPort(app.db, { ...app.env, CORS_ORIGINS: ['https://app.example'] }, { providers: app.providers });
    try {
      expect(await upgrade(cors.port, '/graphql', 'https://app.example')).toBe(101);
      expect(await upgrade(cors.port, '/graphql', 'https://elsewhere.example')).toBe(403);
    } finally {
      await cors.close();
    }
  });

  it('closes every socket at once when the server shuts down (1001), so clients reconnect elsewhere', async () => {
    const own = await serveOnPort(app.db, app.env, { providers: app.providers });
    const socket = socketClient(own.port, s.host, auth());
    await socket.run(Viewer);
    const subscription = socket.subscribe(Added, {});
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await own.close();
    const closed = await socket.closed;
    expect(closed.code).toBe(1001);
    expect(Date.now() - started).toBeLessThan(2000);
    await subscription.done;
    await socket.dispose();
  });

  /**
   * A raw graphql-transport-ws connection on `port`: the handshake and connection_init done (and
   * acknowledged); `send` writes messages as a client's frames, in one write.
   */
  async function rawConnection(port: number, host: string, apiKey: string) {
    const socket = net.connect(port, '127.0.0.1');
    onTestFinished(() => void socket.destroy());
    await new Promise((r) => socket.once('connect', r));
    const key = Buffer.from('0123456789abcdef').toString('base64');
    socket.write(
      `GET /graphql HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
    );
    const frame = (message: object) => {
      const payload = Buffer.from(JSON.stringify(message));
      const mask = Buffer.from([1, 2, 3, 4]);
      const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
      const header = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
      return Buffer.concat([header, mask, masked]);
    };
    const send = (...messages: object[]) => socket.write(Buffer.concat(messages.map(frame)));
    send({ type: 'connection_init', payload: { Authorization: `Bearer ${apiKey}` } });
    await new Promise((r) => setTimeout(r, 300));
    return { socket, send };
  }

  /**
   * A raw socket on a server of its own with `env`: it completes the handshake and connection_init,
   * subscribes `subscriptions` times, then never reads while REST sends of 4 KB arrive until
   * `enough()` (or 200 sends): what the server did meanwhile, and what the socket reads once it
   * reads again.
   */
  async function neverReads(env: Partial<TestApp['env']>, subscriptions: number, enough: (logs: string[]) => boolean) {
    const small = await serveOnPort(app.db, { ...app.env, ...env }, { providers: app.providers });
    onTestFinished(() => small.close());
    const ws = await messagingSetup(app);
    const { socket, send: write } = await rawConnection(small.port, ws.host, ws.apiKey);
    for (let id = 1; id <= subscriptions; id++) write({ id: String(id), type: 'subscribe', payload: { query: 'subscription { messageAdded { id body } }' } });
    await new Promise((r) => setTimeout(r, 500));
    socket.pause();
    const c = await ws.contact({ email: 'never-reads@example.com' });
    const long = 'x'.repeat(4000);
    const body = (i: number) => JSON.stringify({ to: c.id, message: `${i} ${long}` });
    const headers = { authorization: `Bearer ${ws.apiKey}`, 'content-type': 'application/json' };
    // Each send is an event of 4 KB for each subscription: far more than the kernel buffers hold.
    for (let i = 0; i < 200 && !enough(small.logs); i++) expect((await requestOnPort(small.port, ws.host, 'POST', '/api/connect/messages', headers, body(i))).status).toBe(202);
    const deadline = Date.now() + 15_000;
    while (!enough(small.logs) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const logs = [...small.logs];
    // The server goes on answering others.
    const answered = (await requestOnPort(small.port, ws.host, 'GET', '/api/connect/contacts?limit=1', { authorization: `Bearer ${ws.apiKey}` })).status;
    // What the client reads at last, until the server closes the connection or 10 s pass.
    const read: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => read.push(chunk));
    const closed = new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 10_000).unref();
    });
    socket.resume();
    const text = () => Buffer.concat(read).toString('latin1');
    const send = async (i: number) => (await requestOnPort(small.port, ws.host, 'POST', '/api/connect/messages', headers, body(i))).status;
    return { logs, live: small.logs, send, answered, text, closed, completes: () => (text().match(/"type":"complete"/g) ?? []).length };
  }
  const socketsCutOff = (logs: string[]) => logs.filter((line) => line.includes('graphql websocket cut off: the client does not read')).length;

  it('cuts off a socket whose unread output passes STREAM_MAX_BUFFERED_BYTES: the connection is closed, not buffered for, logged once', { timeout: 60_000 }, async () => {
    const seen = await neverReads({ STREAM_MAX_BUFFERED_BYTES: 256 * 1024 }, 40, (logs) => socketsCutOff(logs) >= 1);
    // Results still pending for it, and events after, are not logged again: one line per connection.
    for (let i = 0; i < 10; i++) expect(await seen.send(1000 + i)).toBe(202);
    await new Promise((r) => setTimeout(r, 500));
    expect(socketsCutOff(seen.live)).toBe(1);
    expect(seen.answered).toBe(200);
    // Once the client reads what the kernel held, the connection ends: the server holds nothing more for it.
    expect(await seen.closed).toBe(true);
    expect(seen.completes()).toBe(0);
  });

  it('logs a socket cut off for not reading once, however many answers were on their way to it', { timeout: 60_000 }, async () => {
    const small = await serveOnPort(app.db, { ...app.env, STREAM_MAX_BUFFERED_BYTES: 1024 * 1024 }, { providers: app.providers });
    onTestFinished(() => small.close());
    const ws = await messagingSetup(app);
    // A connection to 200 channels named with 255 characters: each answer below is 500 KB, and none
    // reads the database, so the queries are answered together, far past what the kernel and the limit hold.
    const names = Array.from({ length: 200 }, (_, i) => `${i}`.padEnd(255, 'n'));
    await app.db.prisma.channel.createMany({ data: names.map((name) => ({ workspaceId: ws.workspace.id, name })) });
    const channels = await app.db.prisma.channel.findMany({ where: { workspaceId: ws.workspace.id }, select: { id: true } });
    const { token } = await createConnection(app.db.prisma, { workspaceId: ws.workspace.id, name: 'Wide', channelIds: channels.map((c) => c.id) });
    const { socket, send } = await rawConnection(small.port, ws.host, token);
    socket.pause();
    const query = `{ ${Array.from({ length: 10 }, (_, i) => `a${i}: viewer { channels { name } }`).join(' ')} }`;
    const queries = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: String(from + i), type: 'subscribe', payload: { query } }));
    // Eighty answers of 500 KB at once, far past what the kernel and the limit hold: the first to find
    // the socket's output past its limit cuts it off, and the others, on their way at the same moment, find it cut off.
    send(...queries(1, 80));
    const deadline = Date.now() + 20_000;
    while (socketsCutOff(small.logs) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    expect(socketsCutOff(small.logs)).toBe(1);
  });
});
