import { createHash } from 'node:crypto';
import net from 'node:net';
import { createClient } from 'graphql-sse';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';
import { fetchAs, requestOnPort, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { graphql } from '../gql/index.js';
import { sessionSetup } from '../helpers/sessions.js';
import { runAdminOn } from '../helpers/admin.js';

/** GraphQL over SSE in graphql-sse's single connection mode (docs/graphql.md): one stream for all of a tab's operations. */

const Added = graphql(`
  subscription SingleStreamMessageAdded($conversationId: ID) {
    messageAdded(conversationId: $conversationId) {
      id
      body
    }
  }
`);

const Viewer = graphql(`
  query SingleStreamViewer {
    viewer {
      workspace {
        name
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

const client = (apiKey: string, host: string) =>
  createClient({
    url: `http://127.0.0.1:${served.port}/graphql/stream`,
    singleConnection: true,
    retryAttempts: 0,
    headers: { authorization: `Bearer ${apiKey}` },
    fetchFn: fetchAs(host),
  });

describe('single connection SSE', () => {
  it('runs several subscriptions and a query over one reserved stream', async () => {
    const sse = client(s.apiKey, s.host);
    try {
      const c = await s.contact({ email: 'stream@example.com' });
      const first = await s.send({ to: c.id, message: 'opens' });
      const conversationId = first.body.data.message.conversationId as string;
      const viewer = await new Promise((resolve, reject) => {
        let result: unknown;
        sse.subscribe({ query: print(Viewer) }, { next: (value) => (result = value), error: reject, complete: () => resolve(result) });
      });
      expect(viewer).toEqual({ data: { viewer: { workspace: { name: 'Test workspace' } } } });
      const received: { a: unknown[]; b: unknown[] } = { a: [], b: [] };
      const stopA = sse.subscribe({ query: print(Added), variables: { conversationId } }, { next: (v) => received.a.push(v), error: () => {}, complete: () => {} });
      const stopB = sse.subscribe({ query: print(Added), variables: {} }, { next: (v) => received.b.push(v), error: () => {}, complete: () => {} });
      await new Promise((r) => setTimeout(r, 300));
      const sent = await s.send({ to: c.id, message: 'one stream' });
      const deadline = Date.now() + 5000;
      while ((received.a.length < 1 || received.b.length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const expected = { data: { messageAdded: { id: sent.body.data.message.id, body: 'one stream' } } };
      expect(received.a).toEqual([expected]);
      expect(received.b).toEqual([expected]);
      stopA();
      stopB();
    } finally {
      sse.dispose();
    }
  });

  it('holds a restricted session to its workspace\'s registered documents, as every transport does', async () => {
    const ss = await sessionSetup(app);
    const text = 'query StreamRegistered { viewer { workspace { name } } }';
    const hash = createHash('sha256').update(text).digest('hex');
    expect((await ss.api.post('/graphql/documents', { [hash]: text })).status).toBe(200);
    expect((await runAdminOn(app.db, ['workspace:configure', '--hostname', ss.host, '--trusted-documents-only', 'on'])).code).toBe(0);
    const sse = client(ss.session.token, ss.host);
    const run = (payload: { query: string; extensions?: Record<string, unknown> }) =>
      new Promise<unknown>((resolve) => {
        let result: unknown;
        sse.subscribe(payload, { next: (value) => (result = value), error: (errors) => resolve({ errors }), complete: () => resolve(result) });
      });
    try {
      expect(await run({ query: '', extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).toEqual({ data: { viewer: { workspace: { name: 'Test workspace' } } } });
      const refused = await run({ query: text });
      expect(refused).toMatchObject({ data: null, errors: [{ extensions: { code: 'PERSISTED_QUERY_ONLY' } }] });
    } finally {
      sse.dispose();
    }
  });

  it('needs a credential to reserve, and refuses a token reserved by another credential', async () => {
    expect((await requestOnPort(served.port, s.host, 'PUT', '/graphql/stream')).status).toBe(401);
    const reserved = await requestOnPort(served.port, s.host, 'PUT', '/graphql/stream', { authorization: `Bearer ${s.apiKey}` });
    expect(reserved.status).toBe(201);
    const token = reserved.body;
    const other = await messagingSetup(app);
    const stolen = await requestOnPort(
      served.port,
      other.host,
      'POST',
      '/graphql/stream',
      { authorization: `Bearer ${other.apiKey}`, 'content-type': 'application/json', 'x-graphql-event-stream-token': token },
      JSON.stringify({ query: print(Added) }),
    );
    expect(stolen.status).toBe(403);
  });

  it('drops a reserved stream whose client does not read once STREAM_MAX_BUFFERED_BYTES waits for it, logged once, and releases its reservation', { timeout: 60_000 }, async () => {
    const small = await serveOnPort(app.db, { ...app.env, STREAM_MAX_BUFFERED_BYTES: 256 * 1024 }, { providers: app.providers });
    try {
      const auth = { authorization: `Bearer ${s.apiKey}` };
      const reserved = await requestOnPort(small.port, s.host, 'PUT', '/graphql/stream', auth);
      expect(reserved.status).toBe(201);
      const token = reserved.body;
      // The stream, held on a raw socket that stops reading once it is open.
      const socket = net.connect(small.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.write(`GET /graphql/stream HTTP/1.1\r\nHost: ${s.host}\r\nAuthorization: Bearer ${s.apiKey}\r\nAccept: text/event-stream\r\nX-GraphQL-Event-Stream-Token: ${token}\r\n\r\n`);
      const deadline = Date.now() + 5000;
      while (!Buffer.concat(chunks).toString('latin1').includes('\r\n\r\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(Buffer.concat(chunks).toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
      // Each event 16 times the body (64 KB): the kernel's buffers fill within a few dozen sends.
      const wide = `subscription { messageAdded { id body ${Array.from({ length: 15 }, (_, i) => `b${i}: body`).join(' ')} } }`;
      const subscribe = JSON.stringify({ query: wide, variables: {}, extensions: { operationId: 'one' } });
      const headers = { ...auth, 'content-type': 'application/json', 'x-graphql-event-stream-token': token };
      expect((await requestOnPort(small.port, s.host, 'POST', '/graphql/stream', headers, subscribe)).status).toBe(202);
      await new Promise((r) => setTimeout(r, 300));
      socket.pause();
      const cutOff = () => small.logs.filter((line) => line.includes('event stream cut off: the client does not read')).length;
      const c = await s.contact({ email: 'reserved-never-reads@example.com' });
      const long = 'x'.repeat(4000);
      const send = { ...auth, 'content-type': 'application/json' };
      let sends = 0;
      for (; sends < 500 && cutOff() === 0; sends++) {
        const body = JSON.stringify({ to: c.id, message: `${sends} ${long}` });
        expect((await requestOnPort(small.port, s.host, 'POST', '/api/connect/messages', send, body)).status).toBe(202);
      }
      // Cut off once 256 KiB waited beyond what the kernel took, not buffered for without end.
      expect(sends).toBeLessThan(500);
      for (let i = 0; i < 5; i++) {
        expect((await requestOnPort(small.port, s.host, 'POST', '/api/connect/messages', send, JSON.stringify({ to: c.id, message: `after ${i}` }))).status).toBe(202);
      }
      await new Promise((r) => setTimeout(r, 300));
      expect(cutOff()).toBe(1);
      // Once the client reads, its connection ends; the token it held is released with it.
      const closed = new Promise<boolean>((resolve) => {
        socket.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 15_000).unref();
      });
      socket.resume();
      expect(await closed).toBe(true);
      const again = await requestOnPort(small.port, s.host, 'POST', '/graphql/stream', headers, subscribe);
      expect(again.status).toBe(404);
    } finally {
      await small.close();
    }
  });
});
