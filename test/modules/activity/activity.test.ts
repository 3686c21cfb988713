import { randomUUID } from 'node:crypto';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, openTestDatabase, type TestApp } from '../../helpers/app.js';
import { addChannel, bearer, createConnection } from '../../helpers/factories.js';
import { executeOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';
import { mintSession } from '../../helpers/sessions.js';
import { subscribeSse } from '../../helpers/sse.js';
import { createUser } from '../../../src/modules/users/users.service.js';
import { graphql } from '../../gql/index.js';

/* Presence and typing (docs/inbox.md): POST /conversations/{id}/activity, reportActivity, conversationActivity. */

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const ActivityReport = graphql(`
  mutation ActivityReport($conversationId: ID!, $typing: Boolean!, $from: ID) {
    reportActivity(conversationId: $conversationId, typing: $typing, from: $from) { reported userErrors { field message code } }
  }
`);

const ACTIVITY = parse('subscription ($id: ID!) { conversationActivity(conversationId: $id) { conversationId user { id name } typing viewing at } }');

type Activity = { conversationActivity: { conversationId: string; user: { id: string; name: string }; typing: boolean; viewing: boolean; at: string } };

let seq = 0;
/** A workspace with two channels under one connection token, two users, and a conversation on the second channel. */
async function world(target: TestApp = app) {
  const s = await messagingSetup(target);
  const second = (await addChannel(target.db.prisma, s.workspace.id, 'Second channel')).channel;
  const { token } = await createConnection(target.db.prisma, { workspaceId: s.workspace.id, name: 'Both', channelIds: [s.channel.id, second.id] });
  const contact = await s.contact({ phone: `+1415888${String(1000 + (++seq % 9000)).padStart(4, '0')}` });
  const sent = (await restClient(target, s.host, token, { 'X-Channel-Uuid': second.id }).post('/messages', { to: contact.id, message: 'hello' })).body.data.message as {
    conversationId: string;
  };
  const other = await createUser(target.db.prisma, { workspaceId: s.workspace.id, name: 'Other Agent', email: `other-${randomUUID()}@example.com` });
  const session = await mintSession(restClient(target, s.host, token), { user: s.user.email, channels: [s.channel.id, second.id] });
  const otherSession = await mintSession(restClient(target, s.host, token), { user: other.email, channels: [second.id] });
  return { ...s, second, token, conversationId: sent.conversationId, other, session, otherSession };
}

const watch = (target: TestApp, host: string, token: string, id: string) =>
  subscribeSse<Activity, { id: string }>((path, init) => target.fetch(host, path, init), bearer(token), ACTIVITY as never, { id });

/** Waits until a received activity matches. */
async function until(stream: Awaited<ReturnType<typeof watch>>, match: (a: Activity['conversationActivity']) => boolean, ms = 8000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = stream.received.find((event) => event.data && match(event.data.conversationActivity));
    if (found) return found.data!.conversationActivity;
    if (Date.now() > deadline) throw new Error(`no matching activity in ${JSON.stringify(stream.received)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('POST /conversations/{id}/activity', () => {
  it('a session reports as its user (204), with no X-Channel-Uuid; typing reaches subscribers and lapses 6 s after the last true', async () => {
    const w = await world();
    const viewer = await watch(app, w.host, w.otherSession.token, w.conversationId);
    try {
      await until(viewer, (a) => a.user.id === w.other.id && a.viewing);
      const agent = restClient(app, w.host, w.session.token);
      const typed = await agent.post(`/conversations/${w.conversationId}/activity`, { typing: true });
      expect(typed.status, JSON.stringify(typed.body)).toBe(204);
      const typing = await until(viewer, (a) => a.user.id === w.user.id && a.typing);
      expect(typing).toEqual({ conversationId: w.conversationId, user: { id: w.user.id, name: 'Agent Smith' }, typing: true, viewing: false, at: expect.any(String) });
      const started = Date.now();
      const lapsed = await until(viewer, (a) => a.user.id === w.user.id && !a.typing, 9000);
      expect(lapsed.viewing).toBe(false);
      expect(Date.now() - started).toBeGreaterThan(4500);
      // Naming its own user is fine; anyone else is 403.
      expect((await agent.post(`/conversations/${w.conversationId}/activity`, { typing: false, from: w.user.email })).status).toBe(204);
      const refused = await agent.post(`/conversations/${w.conversationId}/activity`, { typing: true, from: w.other.id });
      expect(refused.status).toBe(403);
    } finally {
      await viewer.close();
    }
  });

  it('a backend credential names the user in from: without it 422 on from; unknown user 422; bad body 422; unknown conversation 404', async () => {
    const w = await world();
    const backend = restClient(app, w.host, w.token);
    const missing = await backend.post(`/conversations/${w.conversationId}/activity`, { typing: true });
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors)).toEqual(['from']);
    const unknown = await backend.post(`/conversations/${w.conversationId}/activity`, { typing: true, from: 'nobody@example.com' });
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.errors)).toEqual(['from']);
    const bad = await backend.post(`/conversations/${w.conversationId}/activity`, { typing: 'yes', from: w.user.id });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors)).toEqual(['typing']);
    expect((await backend.post(`/conversations/${randomUUID()}/activity`, { typing: true, from: w.user.id })).status).toBe(404);
    // A conversation of a channel outside the credential is not there either.
    const third = await addChannel(app.db.prisma, w.workspace.id, 'Third channel');
    const outside = (await restClient(app, w.host, third.apiKey).post('/messages', { to: (await w.contact({ email: `o-${randomUUID()}@example.com` })).id, message: 'x' })).body
      .data.message.conversationId as string;
    expect((await backend.post(`/conversations/${outside}/activity`, { typing: true, from: w.user.id })).status).toBe(404);
    expect((await backend.post(`/conversations/${w.conversationId}/activity`, { typing: true, from: w.user.email })).status).toBe(204);
  });

  it('needs the send scope: a read-only session is 403', async () => {
    const w = await world();
    const reader = await mintSession(restClient(app, w.host, w.token), { user: w.user.email, channels: [w.second.id], scopes: ['read'] });
    expect((await restClient(app, w.host, reader.token).post(`/conversations/${w.conversationId}/activity`, { typing: true })).status).toBe(403);
  });
});

describe('reportActivity and conversationActivity over GraphQL', () => {
  it('streams who views and who types; a viewer leaving is told at once; from rules as REST', async () => {
    const w = await world();
    const first = await watch(app, w.host, w.otherSession.token, w.conversationId);
    const second = await watch(app, w.host, w.session.token, w.conversationId);
    try {
      // Each sees the other viewing.
      await until(first, (a) => a.user.id === w.user.id && a.viewing);
      await until(second, (a) => a.user.id === w.other.id && a.viewing);
      const typed = await executeOperation(app, w.host, bearer(w.session.token), ActivityReport, { conversationId: w.conversationId, typing: true });
      expect(typed.errors).toBeUndefined();
      expect(typed.data!.reportActivity).toEqual({ reported: true, userErrors: [] });
      expect(await until(first, (a) => a.user.id === w.user.id && a.typing)).toMatchObject({ viewing: true, typing: true });
      const stopped = await executeOperation(app, w.host, bearer(w.session.token), ActivityReport, { conversationId: w.conversationId, typing: false });
      expect(stopped.data!.reportActivity!.reported).toBe(true);
      await until(first, (a) => a.user.id === w.user.id && !a.typing && a.viewing);
      // The session's subscription ends: it no longer views.
      await second.close();
      await until(first, (a) => a.user.id === w.user.id && !a.viewing, 3000);

      const forbidden = await executeOperation(app, w.host, bearer(w.session.token), ActivityReport, { conversationId: w.conversationId, typing: true, from: w.other.id });
      expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const noFrom = await executeOperation(app, w.host, bearer(w.token), ActivityReport, { conversationId: w.conversationId, typing: true });
      expect(noFrom.data!.reportActivity).toEqual({ reported: false, userErrors: [{ field: ['from'], message: expect.any(String), code: 'INVALID' }] });
      const unknown = await executeOperation(app, w.host, bearer(w.token), ActivityReport, { conversationId: randomUUID(), typing: true, from: w.user.id });
      expect(unknown.data!.reportActivity).toEqual({ reported: false, userErrors: [{ field: ['conversationId'], message: 'Conversation not found.', code: 'NOT_FOUND' }] });
      const named = await executeOperation(app, w.host, bearer(w.token), ActivityReport, { conversationId: w.conversationId, typing: true, from: w.other.email });
      expect(named.data!.reportActivity!.reported).toBe(true);
      await until(first, (a) => a.user.id === w.other.id && a.typing && a.viewing);
    } finally {
      await first.close();
      await second.close().catch(() => {});
    }
  });

  it('a subscription to a conversation the credential cannot see is refused', async () => {
    const w = await world();
    const stream = await watch(app, w.host, w.otherSession.token, randomUUID());
    const [first] = await stream.waitFor(1);
    await stream.close();
    expect((first!.errors as { extensions?: { code?: string } }[])[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('across processes over Redis', () => {
  /** Two server instances on one database, hearing each other over Redis under a prefix of their own. */
  async function twoProcesses(run: (one: TestApp, two: TestApp) => Promise<void>) {
    const redis = { REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_PREFIX: `activity-${randomUUID()}:` };
    const db = await openTestDatabase();
    const one = await createTestApp(redis, db);
    const two = await createTestApp(redis, db);
    try {
      await run(one, two);
    } finally {
      await two.close();
      await one.close();
    }
  }

  it('viewing and typing reach a subscriber of another server instance; a viewer ending there is told within 5 s', async () => {
    await twoProcesses(async (one, two) => {
      const w = await world(one);
      const watcher = await watch(two, w.host, w.otherSession.token, w.conversationId);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const agent = await watch(one, w.host, w.session.token, w.conversationId);
      try {
        await until(watcher, (a) => a.user.id === w.user.id && a.viewing);
        expect((await restClient(one, w.host, w.session.token).post(`/conversations/${w.conversationId}/activity`, { typing: true })).status).toBe(204);
        await until(watcher, (a) => a.user.id === w.user.id && a.typing && a.viewing);
        // The other way: the agent on process one hears the watcher of process two viewing.
        await until(agent, (a) => a.user.id === w.other.id && a.viewing);
        await agent.close();
        const left = Date.now();
        await until(watcher, (a) => a.user.id === w.user.id && !a.viewing, 5000);
        expect(Date.now() - left).toBeLessThan(5000);
      } finally {
        await watcher.close();
        await agent.close().catch(() => {});
      }
    });
  });

  it('a process that dies without a word stops counting its viewers within 5 s', async () => {
    await twoProcesses(async (one, two) => {
      const w = await world(one);
      const watcher = await watch(one, w.host, w.otherSession.token, w.conversationId);
      const agent = await watch(two, w.host, w.session.token, w.conversationId);
      try {
        await until(watcher, (a) => a.user.id === w.user.id && a.viewing);
        // Process two goes silent, as a killed process would: nothing of it reaches Redis any more.
        await two.events.dispose();
        const gone = Date.now();
        await until(watcher, (a) => a.user.id === w.user.id && !a.viewing, 6000);
        expect(Date.now() - gone).toBeLessThanOrEqual(5000);
      } finally {
        await watcher.close();
        await agent.close().catch(() => {});
      }
    });
  });
});
