import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { messagingSetup } from '../helpers/messaging.js';
import { sessionSetup } from '../helpers/sessions.js';

// graphql-sse's single connection mode (docs/graphql.md, docs/operating-safely.md): reservations
// belong to the credential that made them, are capped per credential and per process without ever
// evicting one, are released when their stream ends or is not connected within 30 s; operations
// may name registered documents; a stream ends when its credential is revoked.

const TOKEN = 'x-graphql-event-stream-token';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let app: TestApp;
/** The same with room for 5 reservations in all. */
let capped: TestApp;
beforeAll(async () => {
  app = await createTestApp({ SSE_RESERVATIONS_PER_CREDENTIAL: '3' });
  capped = await createTestApp({ SSE_RESERVATIONS_PER_CREDENTIAL: '3', SSE_RESERVATIONS_MAX: '5' }, { ...app.db, close: async () => {} });
});
afterAll(async () => {
  await capped.close();
  await app.close();
});

const reserve = (host: string, credential: string, on = app) => on.fetch(host, '/graphql/stream', { method: 'PUT', headers: { ...bearer(credential), accept: 'text/plain' } });

/** A reserved stream held open: everything it has sent so far as text, and whether it has ended. */
async function connect(host: string, credential: string, token: string, on = app) {
  const controller = new AbortController();
  const response = await on.fetch(host, '/graphql/stream', {
    headers: { ...bearer(credential), accept: 'text/event-stream', [TOKEN]: token },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const stream = { text: '', ended: false, close: () => controller.abort() };
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        stream.text += decoder.decode(value, { stream: true });
      }
    } catch {
      // aborted
    }
    stream.ended = true;
  })();
  return stream;
}

/** The stream's events so far, their data parsed. */
const eventsOf = (text: string) =>
  text
    .split('\n\n')
    .map((block) => /^event: (\w+)\ndata: (.*)$/s.exec(block))
    .filter((match) => match !== null)
    .map((match) => ({ event: match[1], data: JSON.parse(match[2]!) as any }));

async function until(check: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

const operate = (host: string, credential: string, token: string, body: Record<string, unknown>) =>
  app.fetch(host, '/graphql/stream', {
    method: 'POST',
    headers: { ...bearer(credential), 'content-type': 'application/json', [TOKEN]: token },
    body: JSON.stringify(body),
  });

describe('reservations', () => {
  it('are capped per credential (429) and per process (503), and one workspace never evicts another’s', async () => {
    const a = await messagingSetup(app);
    const b = await messagingSetup(app);
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) {
      const reserved = await reserve(a.host, a.apiKey, capped);
      expect(reserved.status).toBe(201);
      mine.push(await reserved.text());
    }
    const fourth = await reserve(a.host, a.apiKey, capped);
    expect(fourth.status).toBe(429);
    expect(await fourth.json()).toEqual({ status: 'error', message: expect.stringContaining('3 reserved event streams') });
    // The other workspace reserves up to the process's cap of 5, then is refused: nothing of A's is dropped.
    expect((await reserve(b.host, b.apiKey, capped)).status).toBe(201);
    expect((await reserve(b.host, b.apiKey, capped)).status).toBe(201);
    const full = await reserve(b.host, b.apiKey, capped);
    expect(full.status).toBe(503);
    expect(await full.json()).toEqual({ status: 'error', message: expect.any(String) });
    const streams: Awaited<ReturnType<typeof connect>>[] = [];
    for (const token of mine) streams.push(await connect(a.host, a.apiKey, token, capped));
    // A stream that ended releases its reservation: B may reserve once more.
    streams[0]!.close();
    await until(() => streams[0]!.ended, 5000, 'the stream ends');
    let again: Response | undefined;
    for (let i = 0; i < 50; i++) {
      again = await reserve(b.host, b.apiKey, capped);
      if (again.status === 201) break;
      await sleep(50);
    }
    expect(again!.status).toBe(201);
    // The ended stream's token is gone.
    const gone = await capped.fetch(a.host, '/graphql/stream', { headers: { ...bearer(a.apiKey), accept: 'text/event-stream', [TOKEN]: mine[0]! } });
    expect(gone.status).toBe(404);
    for (const stream of streams) stream.close();
  });

  it('is released when its stream is not connected within 30 s', { timeout: 90_000 }, async () => {
    const s = await messagingSetup(app);
    const first = await (await reserve(s.host, s.apiKey)).text();
    expect((await reserve(s.host, s.apiKey)).status).toBe(201);
    expect((await reserve(s.host, s.apiKey)).status).toBe(201);
    expect((await reserve(s.host, s.apiKey)).status).toBe(429);
    await sleep(31_000);
    expect((await reserve(s.host, s.apiKey)).status).toBe(201);
    const late = await app.fetch(s.host, '/graphql/stream', { headers: { ...bearer(s.apiKey), accept: 'text/event-stream', [TOKEN]: first } });
    expect(late.status).toBe(404);
  });
});

describe('operations on a reserved stream', () => {
  it('may name a registered document by documentId or extensions.persistedQuery', async () => {
    const s = await messagingSetup(app);
    const text = 'query ReservedById { viewer { workspace { name } } }';
    const hash = createHash('sha256').update(text).digest('hex');
    expect((await s.api.post('/graphql/documents', { [hash]: text })).status).toBe(200);
    const token = await (await reserve(s.host, s.apiKey)).text();
    const stream = await connect(s.host, s.apiKey, token);
    try {
      const byId = await operate(s.host, s.apiKey, token, { documentId: `sha256:${hash}`, extensions: { operationId: 'one' } });
      expect(byId.status).toBe(202);
      const byPersisted = await operate(s.host, s.apiKey, token, { extensions: { operationId: 'two', persistedQuery: { version: 1, sha256Hash: hash } } });
      expect(byPersisted.status).toBe(202);
      const unknown = await operate(s.host, s.apiKey, token, { documentId: `sha256:${'0'.repeat(64)}`, extensions: { operationId: 'three' } });
      expect(unknown.status).toBe(202);
      await until(() => eventsOf(stream.text).filter((e) => e.event === 'complete').length === 3, 5000, 'three results');
      const results = Object.fromEntries(eventsOf(stream.text).filter((e) => e.event === 'next').map((e) => [e.data.id, e.data.payload]));
      const viewer = { data: { viewer: { workspace: { name: 'Test workspace' } } } };
      expect(results).toEqual({ one: viewer, two: viewer, three: { data: null, errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] } });
    } finally {
      stream.close();
    }
  });
});

describe('a reserved stream whose credential is revoked or expires', () => {
  it('ends, after its subscriptions’ last errors', async () => {
    const s = await sessionSetup(app);
    const token = await (await reserve(s.host, s.session.token)).text();
    const stream = await connect(s.host, s.session.token, token);
    try {
      for (const id of ['a', 'b']) {
        const started = await operate(s.host, s.session.token, token, { query: 'subscription { messageAdded { id } }', extensions: { operationId: id } });
        expect(started.status).toBe(202);
      }
      await sleep(300);
      expect((await s.api.delete(`/sessions/${s.session.id}`)).status).toBe(204);
      await until(() => stream.ended, 5000, 'the stream ends');
      const events = eventsOf(stream.text);
      for (const id of ['a', 'b']) {
        const mine = events.filter((e) => e.data.id === id);
        expect(mine.map((e) => e.event)).toEqual(['next', 'complete']);
        expect(mine[0]!.data.payload).toMatchObject({ data: null, errors: [{ message: 'Unauthenticated.', extensions: { code: 'UNAUTHENTICATED' } }] });
      }
    } finally {
      stream.close();
    }
  });

  it('ends at its expiry, after each subscription’s one TOKEN_EXPIRED error and complete', async () => {
    const s = await sessionSetup(app);
    // Minted for 60 s at least: brought forward in the database before the token is first used.
    await app.db.prisma.accessToken.update({ where: { id: s.session.id }, data: { expiresAt: new Date(Date.now() + 3000) } });
    const token = await (await reserve(s.host, s.session.token)).text();
    const stream = await connect(s.host, s.session.token, token);
    try {
      for (const id of ['a', 'b']) {
        const started = await operate(s.host, s.session.token, token, { query: 'subscription { conversationUpdated { id } }', extensions: { operationId: id } });
        expect(started.status).toBe(202);
      }
      await until(() => stream.ended, 5000, 'the stream ends');
      const events = eventsOf(stream.text);
      for (const id of ['a', 'b']) {
        const mine = events.filter((e) => e.data.id === id);
        expect(mine.map((e) => e.event)).toEqual(['next', 'complete']);
        expect(mine[0]!.data.payload).toMatchObject({ data: null, errors: [{ message: 'Unauthenticated.', extensions: { code: 'TOKEN_EXPIRED' } }] });
      }
    } finally {
      stream.close();
    }
  });

  it('ends at once when no operation runs on it', async () => {
    const s = await sessionSetup(app);
    const token = await (await reserve(s.host, s.session.token)).text();
    const stream = await connect(s.host, s.session.token, token);
    try {
      await sleep(100);
      expect(stream.ended).toBe(false);
      expect((await s.api.delete(`/sessions/${s.session.id}`)).status).toBe(204);
      await until(() => stream.ended, 5000, 'the stream ends');
    } finally {
      stream.close();
    }
  });
});
