import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.js';
import type { Database } from '../../../src/db/database.js';
import { createTestApp, onPostgres, openTestDatabase, type TestApp } from '../../helpers/app.js';
import { runAdminOn } from '../../helpers/admin.js';
import { bearer, issueChannelKey } from '../../helpers/factories.js';
import { restClient } from '../../helpers/rest.js';
import { mintSession, sessionSetup } from '../../helpers/sessions.js';
import { observeSse, subscribeSse } from '../../helpers/sse.js';
import { freePort } from '../../helpers/server-process.js';
import { graphql } from '../../gql/index.js';

/*
 * docs/browser-apps.md and docs/graphql.md: within 5 s of a session being revoked or expiring, on every process, every
 * open subscription receives one error (a `next` whose errors carry TOKEN_EXPIRED or
 * UNAUTHENTICATED) and ends; a message sent after the revocation answered is never delivered.
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const FIVE_SECONDS = 5000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const StreamMessageAdded = graphql(`
  subscription StreamMessageAdded {
    messageAdded { id body sender { type id name } }
  }
`);

const StreamConversationUpdated = graphql(`
  subscription StreamConversationUpdated {
    conversationUpdated { id status }
  }
`);

type Received = { data?: { messageAdded?: { body: string | null } } | null; errors?: { message: string; extensions?: { code?: string } }[] }[];

/** The bodies a stream delivered, and the code of the one error it ended with. */
function outcome(received: Received) {
  const errors = received.filter((event) => event.errors);
  expect(errors).toHaveLength(1);
  expect(received.at(-1)).toBe(errors[0]);
  expect(errors[0]!.data ?? null).toBeNull();
  return {
    bodies: received.filter((event) => event.data).map((event) => event.data!.messageAdded?.body),
    code: errors[0]!.errors![0]!.extensions?.code,
  };
}

let db: Database;
let statements = 0;
beforeAll(async () => {
  db = await openTestDatabase({ onQuery: () => statements++ });
});
afterAll(() => db.close());

const apps: TestApp[] = [];
async function appWith(env: Record<string, string> = {}) {
  const app = await createTestApp(env, { ...db, close: async () => {} });
  apps.push(app);
  return app;
}
afterAll(async () => {
  for (const app of apps) await app.close();
});

const fetchOn = (app: TestApp, host: string) => (path: string, init: RequestInit) => app.fetch(host, path, init);

/**
 * Revokes a session behind the server's back, as another process that could not announce it would,
 * and expects its stream to end within 5 s with UNAUTHENTICATED.
 */
async function expectEndsOnRevocation(app: TestApp, sessionId: string, stream: Awaited<ReturnType<typeof observeSse>>) {
  await app.db.prisma.accessToken.update({ where: { id: sessionId }, data: { revokedAt: new Date() } });
  const revokedAt = Date.now();
  const end = await stream.endsWithin(FIVE_SECONDS + 500);
  expect(end.at - revokedAt).toBeLessThanOrEqual(FIVE_SECONDS);
  expect(outcome(stream.received as Received).code).toBe('UNAUTHENTICATED');
}

describe('one process', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await appWith();
  });

  it('DELETE /sessions/{id} ends the session’s stream at once with UNAUTHENTICATED, then complete; a message sent after is never delivered', async () => {
    const s = await sessionSetup(app);
    const c = await s.contact({ email: 'live@example.com' });
    const stream = await observeSse(fetchOn(app, s.host), bearer(s.session.token), StreamMessageAdded);
    try {
      await s.send({ to: c.id, message: 'before' });
      await stream.waitFor(1);
      expect(stream.received[0]!.data!.messageAdded!).toMatchObject({ body: 'before' });
      const revokedAt = Date.now();
      expect((await s.api.delete(`/sessions/${s.session.id}`)).status).toBe(204);
      expect((await s.send({ to: c.id, message: 'after' })).status).toBe(202);
      const end = await stream.endsWithin(FIVE_SECONDS);
      expect(end.completed).toBe(true);
      expect(end.at - revokedAt).toBeLessThan(FIVE_SECONDS);
      await sleep(200);
      expect(outcome(stream.received as Received)).toEqual({ bodies: ['before'], code: 'UNAUTHENTICATED' });
    } finally {
      await stream.close();
    }
  });

  it('a session’s stream ends at its expiry with TOKEN_EXPIRED, and costs no statement until then', async () => {
    const s = await sessionSetup(app);
    // Minted for 60 s at least: brought forward in the database before the token is first used.
    await app.db.prisma.accessToken.update({ where: { id: s.session.id }, data: { expiresAt: new Date(Date.now() + 2500) } });
    const stream = await observeSse(fetchOn(app, s.host), bearer(s.session.token), StreamConversationUpdated);
    try {
      const expiresAt = (await app.db.prisma.accessToken.findUniqueOrThrow({ where: { id: s.session.id } })).expiresAt!.getTime();
      const end = await stream.endsWithin(FIVE_SECONDS);
      expect(end.completed).toBe(true);
      expect(end.at).toBeGreaterThanOrEqual(expiresAt);
      expect(end.at - expiresAt).toBeLessThan(1000);
      const [event] = stream.received as Received;
      expect(stream.received).toHaveLength(1);
      expect(event!.errors).toEqual([expect.objectContaining({ message: 'Unauthenticated.', path: ['conversationUpdated'], extensions: { code: 'TOKEN_EXPIRED' } })]);
    } finally {
      await stream.close();
    }
    const refused = await restClient(app, s.host, s.session.token).get('/channels');
    expect(refused.body.code).toBe('token_expired');
  });

  it('an expired or revoked session cannot subscribe: 401 TOKEN_EXPIRED or UNAUTHENTICATED; one without read: FORBIDDEN', async () => {
    const s = await sessionSetup(app);
    const expired = await mintSession(s.api, { user: s.user.id });
    await app.db.prisma.accessToken.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await expect(subscribeSse(fetchOn(app, s.host), bearer(expired.token), StreamMessageAdded)).rejects.toThrow(/HTTP 401.*TOKEN_EXPIRED/);
    await s.api.delete(`/sessions/${s.session.id}`);
    await expect(subscribeSse(fetchOn(app, s.host), bearer(s.session.token), StreamMessageAdded)).rejects.toThrow(/HTTP 401.*UNAUTHENTICATED/);
    const sendOnly = await mintSession(s.api, { user: s.user.id, scopes: ['send'] });
    const response = await app.fetch(s.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(sendOnly.token), accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'subscription { messageAdded { id } }' }),
    });
    const text = await response.text();
    expect(text).toContain('"code":"FORBIDDEN"');
    expect(text).not.toContain('"data":{"messageAdded"');
  });

  // Only on PostgreSQL: the embedded database is opened by one process at a time (the admin commands refuse while the server holds it).
  it.skipIf(!onPostgres)('revoking the minting key ends its sessions’ streams within 5 s, though nothing was announced (the key was revoked by another process)', async () => {
    const s = await sessionSetup(app);
    const key = await issueChannelKey(app.db.prisma, s.channel);
    const session = await mintSession(restClient(app, s.host, key.token), { user: s.user.id });
    const stream = await observeSse(fetchOn(app, s.host), bearer(session.token), StreamConversationUpdated);
    try {
      // In this process, as an admin command run beside the server would, without Redis to tell it.
      expect((await runAdminOn(app.db, ['token:revoke', '--token', key.token])).json).toEqual({ revoked: true });
      const revokedAt = Date.now();
      const end = await stream.endsWithin(FIVE_SECONDS + 500);
      expect(end.at - revokedAt).toBeLessThanOrEqual(FIVE_SECONDS);
      expect(outcome(stream.received as Received).code).toBe('UNAUTHENTICATED');
    } finally {
      await stream.close();
    }
  });
});

describe.skipIf(onPostgres)('one process on the embedded database', () => {
  it('hears every change to a credential, so its streams cost no check: no statement while they wait, none per event', async () => {
    // Credentials cached for longer than the test: a cached credential read again as its 5 s run
    // out would land in one of the windows compared below (when depends on the machine's pace).
    const app = await appWith({ AUTH_CACHE_MS: '60000' });
    const s = await sessionSetup(app);
    const c = await s.contact({ email: 'alone@example.com' });
    const stream = await observeSse(fetchOn(app, s.host), bearer(s.session.token), StreamMessageAdded);
    try {
      await sleep(300);
      // Longer than a check's interval (4 s) with nothing sent: no statement at all.
      const idle = statements;
      await sleep(4500);
      expect(statements - idle).toBe(0);
      // An event costs what the send and its one load cost, no subscriber checked: as many statements with three streams as with one.
      expect((await s.send({ to: c.id, message: 'opens the conversation' })).status).toBe(202);
      await stream.waitFor(1);
      await sleep(200);
      const one = statements;
      expect((await s.send({ to: c.id, message: 'first' })).status).toBe(202);
      await stream.waitFor(2);
      await sleep(200);
      const withOne = statements - one;
      const more = [await observeSse(fetchOn(app, s.host), bearer(s.session.token), StreamMessageAdded), await observeSse(fetchOn(app, s.host), bearer(s.session.token), StreamMessageAdded)];
      await sleep(300);
      const three = statements;
      expect((await s.send({ to: c.id, message: 'second' })).status).toBe(202);
      await stream.waitFor(3);
      for (const other of more) await other.waitFor(1);
      await sleep(200);
      expect(statements - three).toBe(withOne);
      for (const other of more) await other.close();
      // Revoked through the API: heard at once.
      expect((await s.api.delete(`/sessions/${s.session.id}`)).status).toBe(204);
      const end = await stream.endsWithin(FIVE_SECONDS);
      expect(end.completed).toBe(true);
      expect(outcome(stream.received as Received)).toEqual({ bodies: ['opens the conversation', 'first', 'second'], code: 'UNAUTHENTICATED' });
    } finally {
      await stream.close();
    }
  });
});

describe('two processes sharing PostgreSQL or PGlite and Redis', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    // A credential cache far longer than 5 s: only the announcement can explain a prompt refusal.
    first = await appWith({ REDIS_URL, AUTH_CACHE_MS: '60000' });
    second = await appWith({ REDIS_URL, AUTH_CACHE_MS: '60000' });
    await sleep(300);
  });

  it('a session revoked on one ends its stream on the other within 5 s, and the message sent after the revocation answered never arrives', async () => {
    const s = await sessionSetup(first);
    const c = await s.contact({ email: 'redis@example.com' });
    const onSecond = restClient(second, s.host, s.session.token);
    expect((await onSecond.get('/channels')).status).toBe(200);
    const stream = await observeSse(fetchOn(second, s.host), bearer(s.session.token), StreamMessageAdded);
    try {
      await s.send({ to: c.id, message: 'before' });
      await stream.waitFor(1);
      const revokedAt = Date.now();
      expect((await s.api.delete(`/sessions/${s.session.id}`)).status).toBe(204);
      // Sent at once after the answer, on either process: neither reaches the stream.
      expect((await s.send({ to: c.id, message: 'after, on the first' })).status).toBe(202);
      expect((await restClient(second, s.host, s.apiKey).post('/messages', { to: c.id, message: 'after, on the second' })).status).toBe(202);
      const end = await stream.endsWithin(FIVE_SECONDS);
      expect(end.at - revokedAt).toBeLessThan(FIVE_SECONDS);
      await sleep(300);
      expect(outcome(stream.received as Received)).toEqual({ bodies: ['before'], code: 'UNAUTHENTICATED' });
      expect((await onSecond.get('/channels')).status).toBe(401);
    } finally {
      await stream.close();
    }
  });

  it('session:revoke --user, run beside the servers, reaches both through Redis', async () => {
    const s = await sessionSetup(first);
    const streams = [
      await observeSse(fetchOn(first, s.host), bearer(s.session.token), StreamConversationUpdated),
      await observeSse(fetchOn(second, s.host), bearer(s.session.token), StreamConversationUpdated),
    ];
    try {
      const revokedAt = Date.now();
      expect(await runAdminOn(db, ['session:revoke', '--user', s.user.id], { REDIS_URL })).toMatchObject({ code: 0, json: { revoked: 1 } });
      for (const stream of streams) {
        const end = await stream.endsWithin(FIVE_SECONDS);
        expect(end.at - revokedAt).toBeLessThan(2000);
        expect(outcome(stream.received as Received).code).toBe('UNAUTHENTICATED');
      }
      for (const app of [first, second]) expect((await restClient(app, s.host, s.session.token).get('/channels')).status).toBe(401);
    } finally {
      for (const stream of streams) await stream.close();
    }
  });

  it('an idle stream costs no statement while announcements are heard', async () => {
    const s = await sessionSetup(second);
    const stream = await observeSse(fetchOn(second, s.host), bearer(s.session.token), StreamConversationUpdated);
    try {
      statements = 0;
      await sleep(FIVE_SECONDS + 500);
      expect(statements).toBe(0);
      expect(stream.received).toEqual([]);
    } finally {
      await stream.close();
    }
  });
});

describe('a process that cannot reach Redis', () => {
  // Only on PostgreSQL: on the embedded database no other process can revoke anything while the server runs.
  it.skipIf(!onPostgres)('falls back to checking its streams: a revocation it was not told of ends the stream within 5 s', async () => {
    const unreachable = `redis://127.0.0.1:${await freePort()}`;
    const app = await appWith({ REDIS_URL: unreachable });
    const s = await sessionSetup(app);
    const stream = await observeSse(fetchOn(app, s.host), bearer(s.session.token), StreamConversationUpdated);
    try {
      await expectEndsOnRevocation(app, s.session.id, stream);
    } finally {
      await stream.close();
    }
  });
});

describe('a process without Redis whose database pool is short', () => {
  // Only on PostgreSQL: on the embedded database streams are never checked, and its one connection is never waited for.
  it.skipIf(!onPostgres)('keeps its streams through a credential check that failed, delivers what waited once a check answers, and still ends a revoked one', async () => {
    // One pooled connection, held below: every statement waits for it, and gives up after 1.5 s.
    const short = await openDatabase({ databaseUrl: inject('databaseUrl'), poolSize: 1 });
    const app = await createTestApp({}, short);
    apps.push(app);
    const s = await sessionSetup(app);
    const contact = await s.contact({ email: 'short-pool@example.com' });
    const stream = await observeSse(fetchOn(app, s.host), bearer(s.session.token), StreamMessageAdded);
    try {
      const first = await s.send({ to: contact.id, message: 'before' });
      expect(first.status).toBe(202);
      await stream.waitFor(1, 10_000);

      const held = short.withSession((session) => session.query('SELECT pg_sleep(7)'));
      // An event arrives while no check can run: as the bus hands on a message sent meanwhile by another process.
      app.events.publish({
        type: 'message.created',
        messageId: first.body.data.message.id,
        conversationId: first.body.data.message.conversationId,
        workspaceId: s.workspace.id,
        channelId: s.channel.id,
      });
      const failed = () => app.logs.some((line) => line.includes('subscription credential check failed'));
      const deadline = Date.now() + 6000;
      while (!failed() && Date.now() < deadline) await sleep(100);
      expect(failed()).toBe(true);
      // Nothing delivered unchecked, and the stream still open.
      expect(stream.received).toHaveLength(1);
      await held;

      // Once a check answers, the event that waited is delivered, and the stream goes on.
      await stream.waitFor(2, 10_000);
      const after = await s.send({ to: contact.id, message: 'after' });
      expect(after.status).toBe(202);
      const received = await stream.waitFor(3, 10_000);
      expect(received.map((event) => (event.data as { messageAdded: { body: string } }).messageAdded.body)).toEqual(['before', 'before', 'after']);
      expect(await Promise.race([stream.ended.then(() => 'ended'), sleep(100).then(() => 'open')])).toBe('open');

      // A revocation behind the server's back still ends it within 5 s.
      await expectEndsOnRevocation(app, s.session.id, stream);
    } finally {
      await stream.close();
    }
  }, 60_000);
});
