import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { fetchAs, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { mintSession, sessionSetup } from '../helpers/sessions.js';
import { subscribeSse } from '../helpers/sse.js';
import { socketClient } from '../helpers/websocket.js';
import { createUser } from '../../src/modules/users/users.service.js';
import { createEventLoads } from '../../src/realtime/event-loads.js';

/*
 * What one event costs the database when `Conversation.assignedToMe` (which reads the caller's
 * user) makes every user a cohort of its own (docs/graphql.md, "Subscriptions"): the message and
 * its conversation are loaded once for the event and shared by every cohort, and `assignedToMe` is
 * worked out from the shared row and each cohort's user, with no statement of its own. So the
 * statements of one send and its event are as many with one cohort as with many.
 */

type Added = { messageAdded: { id: string; channelId: string; conversationId: string; conversation: { id: string; assignedToMe: boolean } } };
const ALL = parse('subscription MixedAll { messageAdded { id channelId conversationId conversation { id assignedToMe } } }') as TypedDocumentNode<
  Added,
  Record<string, never>
>;
const ONE = parse(
  'subscription MixedOne($conversationId: ID) { messageAdded(conversationId: $conversationId) { id channelId conversationId conversation { id assignedToMe } } }',
) as TypedDocumentNode<Added, { conversationId: string }>;

let statements: string[] = [];
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let served: ServedApp;

beforeAll(async () => {
  // Every request pays its authentication, so that each send costs the same statements.
  app = await appOnOwnDatabase({ onQuery: (sql) => statements.push(sql), env: { AUTH_CACHE_MS: '0' } });
  served = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
});
afterAll(async () => {
  await served?.close();
  await app?.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function counts() {
  const text = await (await fetch(`http://127.0.0.1:${served.port}/metrics`)).text();
  const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { results: count('connect_subscription_results_total'), executions: count('connect_subscription_executions_total') };
}

const reads = (table: string) => statements.filter((sql) => /^\s*SELECT\b/i.test(sql) && sql.includes(`FROM "public"."${table}"`)).length;

describe('an event received by many cohorts', () => {
  it('costs the statements of one cohort, and each cohort receives its own user’s assignedToMe', { timeout: 90_000 }, async () => {
    const s = await sessionSetup(app);
    const users = [s.user];
    const tokens = [s.session.token];
    for (let index = 0; index < 3; index++) {
      const user = await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: `Agent ${index}`, email: `agent-${index}@example.com` });
      users.push(user);
      tokens.push((await mintSession(s.api, { user: user.email })).token);
    }
    const contact = await s.contact({ email: 'cohorts@example.com' });
    const opened = await s.send({ to: contact.id, message: 'opens the conversation' });
    expect(opened.status).toBe(202);
    const conversationId = opened.body.data.message.conversationId as string;
    // Assigned to the second user: only that user's subscribers are told true.
    expect((await s.api.post(`/conversations/${conversationId}/assign`, { user: users[1]!.id })).status).toBe(200);
    const onPort = (path: string, init: RequestInit) => fetchAs(s.host)(`http://127.0.0.1:${served.port}${path}`, init);

    /** Subscribers of the first `userCount` users (a socket each on ALL and ONE, an SSE stream on ALL), then one send: its statements. */
    const oneSend = async (userCount: number, message: string) => {
      const sockets = tokens.slice(0, userCount).map((token) => socketClient(served.port, s.host, { Authorization: `Bearer ${token}` }));
      const streams: { user: number; waitFor(count: number, ms?: number): Promise<{ data?: Added | null; errors?: unknown }[]> }[] = [];
      for (const [user, socket] of sockets.entries()) {
        streams.push({ user, ...socket.subscribe(ALL) }, { user, ...socket.subscribe(ONE, { conversationId }) });
        streams.push({ user, ...(await subscribeSse(onPort, { authorization: `Bearer ${tokens[user]}` }, ALL)) });
      }
      await sleep(500);
      const before = await counts();
      statements = [];
      const sent = await s.send({ to: contact.id, message });
      expect(sent.status).toBe(202);
      for (const stream of streams) {
        const [result] = await stream.waitFor(1, 10_000);
        expect(result!.errors).toBeUndefined();
        expect(result!.data!.messageAdded).toEqual({
          id: sent.body.data.message.id,
          channelId: s.channel.id,
          conversationId,
          conversation: { id: conversationId, assignedToMe: stream.user === 1 },
        });
      }
      await sleep(300);
      const after = await counts();
      const seen = { statements: [...statements], messages: reads('messages'), conversations: reads('conversations') };
      for (const stream of streams) await ('close' in stream ? (stream as unknown as { close(): Promise<void> }).close() : (stream as unknown as { stop(): void }).stop());
      for (const socket of sockets) await socket.dispose();
      return { ...seen, executions: after.executions - before.executions, results: after.results - before.results };
    };

    const one = await oneSend(1, 'to one user');
    const four = await oneSend(4, 'to four users');
    // Four users, two selections each: eight cohorts, against two for one user.
    expect(one.executions).toBe(2);
    expect(four.executions).toBe(8);
    expect(four.results).toBe(12);
    // The event's message and conversation are read once whatever the cohorts…
    expect(four.messages).toBe(1);
    expect(four.conversations).toBe(one.conversations);
    // …and the send with its event costs no more statements with eight cohorts than with two.
    expect(four.statements.length, four.statements.join('\n')).toBe(one.statements.length);
  });
});

describe('an event whose shared load fails', () => {
  it('gives every cohort that asks, then or later, the same failure, and loads it once; the next event loads afresh', async () => {
    // The app's own event loads (src/app.ts makes one per app), as the resolvers call them.
    const loads = createEventLoads();
    const query = { select: { id: true } };
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(new Error('timeout exceeded when trying to connect'));
    };
    const event = { messageId: 'm1' };
    // Two cohorts executing together, then one after the failure was known.
    const together = [loads.load(event, query, failing), loads.load(event, query, failing)];
    for (const load of together) await expect(load).rejects.toThrow('timeout exceeded');
    await expect(loads.load(event, query, failing)).rejects.toThrow('timeout exceeded');
    expect(calls).toBe(1);
    // Another event is its own load.
    await expect(loads.load({ messageId: 'm2' }, query, () => Promise.resolve('loaded'))).resolves.toBe('loaded');
  });

  it('through the surface: every cohort of an event whose message cannot be read receives an error, from one read', { timeout: 60_000 }, async () => {
    const s = await sessionSetup(app);
    const tokens = [s.session.token];
    for (let index = 0; index < 3; index++) {
      const user = await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: `Reader ${index}`, email: `reader-${index}@example.com` });
      tokens.push((await mintSession(s.api, { user: user.email })).token);
    }
    const contact = await s.contact({ email: 'unreadable@example.com' });
    const opened = await s.send({ to: contact.id, message: 'opens the conversation' });
    expect(opened.status).toBe(202);
    const conversationId = opened.body.data.message.conversationId as string;
    const sockets = tokens.map((token) => socketClient(served.port, s.host, { Authorization: `Bearer ${token}` }));
    const streams = sockets.map((socket) => socket.subscribe(ALL));
    await sleep(500);
    statements = [];
    // A message event whose message is not there (as if its read failed): what the bus carries from a send.
    app.events.publish({ type: 'message.created', messageId: '00000000-0000-7000-8000-000000000000', conversationId, workspaceId: s.workspace.id, channelId: s.channel.id });
    for (const stream of streams) {
      const [result] = await stream.waitFor(1, 10_000);
      expect(result!.errors?.length).toBe(1);
    }
    await sleep(300);
    expect(reads('messages')).toBe(1);
    // The streams go on: the next message reaches each with its data.
    const sent = await s.send({ to: contact.id, message: 'after the failure' });
    for (const stream of streams) expect((await stream.waitFor(2, 10_000))[1]!.data!.messageAdded.id).toBe(sent.body.data.message.id);
    for (const stream of streams) stream.stop();
    for (const socket of sockets) await socket.dispose();
  });
});
