import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { fetchAs } from '../helpers/real-port.js';
import { restClient } from '../helpers/rest.js';
import { mintSession, sessionSetup } from '../helpers/sessions.js';
import { subscribeSse } from '../helpers/sse.js';
import { socketClient } from '../helpers/websocket.js';
import { addChannel, createConnection } from '../helpers/factories.js';
import { createUser } from '../../src/modules/users/users.service.js';
import { schema } from '../../src/schema.js';
import { operationReads } from '../../src/graphql/caller-reads.js';
import { servedAppPerFile } from '../helpers/served-app.js';

/*
 * A cohort is the subscribers that cannot see different data (docs/architecture.md, "The realtime
 * engine"): its key follows what the selected fields declare they read of the caller. Two users of
 * one workspace on the same subscription each receive their own `assignedToMe`; a selection that
 * reads nothing of the user is still executed once for both.
 */

type Updated = { conversationUpdated: { id: string; assignedToMe?: boolean } };
const MINE = parse('subscription CohortMine($id: ID) { conversationUpdated(id: $id) { id assignedToMe } }') as TypedDocumentNode<Updated, { id: string }>;
const THROUGH_FRAGMENT = parse(
  'subscription CohortFragment($id: ID) { conversationUpdated(id: $id) { id ...Mine } } fragment Mine on Node { ... on Conversation { assignedToMe } }',
) as TypedDocumentNode<Updated, { id: string }>;
const CHANNEL_WIDE = parse('subscription CohortChannelWide { messageAdded { id } }') as TypedDocumentNode<{ messageAdded: { id: string } }, Record<string, never>>;
const PLAIN = parse('subscription CohortPlain($id: ID) { conversationUpdated(id: $id) { id } }') as TypedDocumentNode<Updated, { id: string }>;

const port = servedAppPerFile();

async function counts() {
  const text = await (await fetch(`http://127.0.0.1:${port.served.port}/metrics`)).text();
  const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { results: count('connect_subscription_results_total'), executions: count('connect_subscription_executions_total') };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cohorts keyed from declarations', () => {
  it('knows what a selection reads of the caller from the fields it may select, fragments and abstract positions included', () => {
    expect([...operationReads(schema, MINE)]).toContain('user');
    expect([...operationReads(schema, THROUGH_FRAGMENT)]).toContain('user');
    expect([...operationReads(schema, PLAIN)]).not.toContain('user');
    const field = schema.getType('Conversation') as unknown as { getFields(): Record<string, { extensions: { reads?: string[] } }> };
    expect(field.getFields().assignedToMe!.extensions.reads).toEqual(['user']);
  });

  it("gives two users of one workspace on the same subscription each their own assignedToMe, and a backend credential false; REST says the same", { timeout: 90_000 }, async () => {
    const s = await sessionSetup(port.app);
    const other = await createUser(port.app.db.prisma, { workspaceId: s.workspace.id, name: 'Other Agent', email: 'other-agent@example.com' });
    const otherSession = await mintSession(s.api, { user: other.email });
    const contact = await s.contact({ email: 'cohort@example.com' });
    const sent = await s.send({ to: contact.id, message: 'hello' });
    expect(sent.status).toBe(202);
    const conversationId = sent.body.data.message.conversationId as string;
    const onPort = (path: string, init: RequestInit) => fetchAs(s.host)(`http://127.0.0.1:${port.served.port}${path}`, init);

    const mineSocket = socketClient(port.served.port, s.host, { Authorization: `Bearer ${s.session.token}` });
    const theirsSocket = socketClient(port.served.port, s.host, { Authorization: `Bearer ${otherSession.token}` });
    const subscribers = {
      me: mineSocket.subscribe(MINE, { id: conversationId }),
      meThroughFragment: await subscribeSse(onPort, { authorization: `Bearer ${s.session.token}` }, THROUGH_FRAGMENT, { id: conversationId }),
      them: theirsSocket.subscribe(MINE, { id: conversationId }),
      themOverSse: await subscribeSse(onPort, { authorization: `Bearer ${otherSession.token}` }, MINE, { id: conversationId }),
      backend: await subscribeSse(onPort, { authorization: `Bearer ${s.apiKey}` }, MINE, { id: conversationId }),
    };
    const plain = [
      mineSocket.subscribe(PLAIN, { id: conversationId }),
      await subscribeSse(onPort, { authorization: `Bearer ${otherSession.token}` }, PLAIN, { id: conversationId }),
    ];
    await sleep(500);
    const before = await counts();

    expect((await s.api.post(`/conversations/${conversationId}/assign`, { user: s.user.id })).status).toBe(200);
    const first = async (stream: { waitFor(count: number, ms?: number): Promise<{ data?: Updated | null }[]> }, count: number) =>
      (await stream.waitFor(count, 10_000))[count - 1]!.data!.conversationUpdated;
    expect(await first(subscribers.me, 1)).toEqual({ id: conversationId, assignedToMe: true });
    expect(await first(subscribers.meThroughFragment, 1)).toEqual({ id: conversationId, assignedToMe: true });
    expect(await first(subscribers.them, 1)).toEqual({ id: conversationId, assignedToMe: false });
    expect(await first(subscribers.themOverSse, 1)).toEqual({ id: conversationId, assignedToMe: false });
    expect(await first(subscribers.backend, 1)).toEqual({ id: conversationId, assignedToMe: false });
    for (const stream of plain) expect(await first(stream, 1)).toEqual({ id: conversationId });
    await sleep(300);
    // One execution for each user's cohort of each selection that reads the user (the session
    // user's, the other user's, the backend's: three for MINE, two for the fragment's document,
    // which only one user holds), and one for both users of the selection that does not.
    const after = await counts();
    expect(after.executions - before.executions).toBe(3 + 1 + 1);
    expect(after.results - before.results).toBe(5 + 2);

    expect((await s.api.post(`/conversations/${conversationId}/assign`, { user: other.id })).status).toBe(200);
    expect(await first(subscribers.me, 2)).toEqual({ id: conversationId, assignedToMe: false });
    expect(await first(subscribers.them, 2)).toEqual({ id: conversationId, assignedToMe: true });
    expect(await first(subscribers.themOverSse, 2)).toEqual({ id: conversationId, assignedToMe: true });
    expect(await first(subscribers.backend, 2)).toEqual({ id: conversationId, assignedToMe: false });

    // REST's conversation view says the same to each caller.
    const theirs = restClient(port.app, s.host, otherSession.token);
    expect((await theirs.get(`/conversations/${conversationId}`)).body.data.conversation.assignedToMe).toBe(true);
    expect((await s.browser.get(`/conversations/${conversationId}`)).body.data.conversation.assignedToMe).toBe(false);
    expect((await s.api.get(`/conversations/${conversationId}`)).body.data.conversation.assignedToMe).toBe(false);
    const listed = (await theirs.get('/conversations')).body.data as { id: string; assignedToMe: boolean }[];
    expect(listed.find((row) => row.id === conversationId)?.assignedToMe).toBe(true);

    subscribers.me.stop();
    subscribers.them.stop();
    for (const stream of [subscribers.meThroughFragment, subscribers.themOverSse, subscribers.backend, plain[1] as { close(): Promise<void> }]) await (stream as { close(): Promise<void> }).close();
    await mineSocket.dispose();
    await theirsSocket.dispose();
  });

  it('never shares a result between credentials of different channel sets; two of one set share one execution', { timeout: 60_000 }, async () => {
    const s = await sessionSetup(port.app);
    const b = (await addChannel(port.app.db.prisma, s.workspace.id, 'Cohort B')).channel;
    const c = (await addChannel(port.app.db.prisma, s.workspace.id, 'Cohort C')).channel;
    const over = async (channelIds: string[]) => {
      const { token } = await createConnection(port.app.db.prisma, { workspaceId: s.workspace.id, name: channelIds.join('+'), channelIds });
      return (await mintSession(restClient(port.app, s.host, token), { user: s.user.email })).token;
    };
    // The same user, none naming a channel: what tells them apart is the set of channels alone.
    const tokens = { ab: await over([s.channel.id, b.id]), abAgain: await over([s.channel.id, b.id]), ac: await over([s.channel.id, c.id]) };
    const onPort = (path: string, init: RequestInit) => fetchAs(s.host)(`http://127.0.0.1:${port.served.port}${path}`, init);
    const sockets = Object.values(tokens).map((token) => socketClient(port.served.port, s.host, { Authorization: `Bearer ${token}` }));
    const streams = [...sockets.map((socket) => socket.subscribe(CHANNEL_WIDE)), await subscribeSse(onPort, { authorization: `Bearer ${tokens.ac}` }, CHANNEL_WIDE)];
    try {
      await sleep(500);
      const before = await counts();
      const contact = await s.contact({ email: 'cohort-channels@example.com' });
      const sent = await s.send({ to: contact.id, message: 'on A' });
      expect(sent.status).toBe(202);
      for (const stream of streams) expect((await stream.waitFor(1, 10_000))[0]!.data).toEqual({ messageAdded: { id: sent.body.data.message.id } });
      await sleep(300);
      // One execution for A+B (both sessions), one for A+C (over the socket and over SSE).
      const after = await counts();
      expect(after.executions - before.executions).toBe(2);
      expect(after.results - before.results).toBe(4);
    } finally {
      for (const stream of streams) await ('close' in stream ? stream.close() : stream.stop());
      for (const socket of sockets) await socket.dispose();
    }
  });
});
