import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createTestApp, onPostgres, type TestApp } from '../../helpers/app.js';
import { addChannel, createConnection } from '../../helpers/factories.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';
import { receiveMessage } from '../../../src/modules/inbound/inbound.service.js';
import { createUser } from '../../../src/modules/users/users.service.js';

/* docs/inbox.md: the inbox over REST. */

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

let seq = 0;

async function setup() {
  const s = await messagingSetup(app);
  const channel = { id: s.channel.id, workspaceId: s.workspace.id, name: s.channel.name };
  /** A reply from `phone`, stored by the inbound path as a provider's webhook would be. */
  async function reply(phone: string, body: string, at = new Date()) {
    await receiveMessage({ prisma: app.db.prisma, logger: pino({ level: 'silent' }) }, channel, {
      kind: 'message',
      providerId: `wamid.${++seq}.${Date.now()}`,
      from: { phone },
      at,
      body,
      media: [],
    });
  }
  async function conversationWith(phone: string, text = 'hello') {
    const contact = await s.contact({ phone, name: `Contact ${phone}` });
    const sent = await s.send({ to: contact.id, message: text });
    return { contact, conversationId: sent.body.data.message.conversationId as string, messageId: sent.body.data.message.id as string };
  }
  return { ...s, reply, conversationWith };
}

const phone = () => `+1415555${String(1000 + (++seq % 9000)).padStart(4, '0')}`;

describe('the conversation view', () => {
  it('carries assignee, labels, unreadCount, lastReadAt and lastMessage', async () => {
    const s = await setup();
    const p = phone();
    const { conversationId, messageId } = await s.conversationWith(p, 'first words');
    const fresh = (await s.api.get(`/conversations/${conversationId}`)).body.data.conversation;
    expect(fresh).toMatchObject({ assignee: null, labels: [], unreadCount: 0, lastReadAt: null, lastMessage: { id: messageId, body: 'first words', direction: 'outbound' } });
    await s.reply(p, 'a reply');
    await s.reply(p, 'another reply');
    const after = (await s.api.get(`/conversations/${conversationId}`)).body.data.conversation;
    expect(after.unreadCount).toBe(2);
    expect(after.lastMessage).toMatchObject({ body: 'another reply', direction: 'inbound', sender: { type: 'contact' } });
  });
});

describe('POST /conversations/{id}/assign', () => {
  it('assigns by id or email, unassigns with null, records the state change with its actor; an unknown user is 422 on user', async () => {
    const s = await setup();
    const { conversationId } = await s.conversationWith(phone());
    const byId = await s.api.post(`/conversations/${conversationId}/assign`, { user: s.user.id });
    expect(byId.status).toBe(200);
    expect(byId.body.data.conversation.assignee).toEqual({ id: s.user.id, name: 'Agent Smith', email: 'Agent@Example.com' });
    const changes = byId.body.data.conversation.stateChanges;
    expect(changes.at(-1)).toMatchObject({ type: 'assigned', actor: { type: 'channel', id: s.channel.id } });

    // The same user again changes nothing.
    const again = await s.api.post(`/conversations/${conversationId}/assign`, { user: 'agent@example.com' });
    expect(again.status).toBe(200);
    expect(again.body.data.conversation.stateChanges).toHaveLength(changes.length);

    const unknown = await s.api.post(`/conversations/${conversationId}/assign`, { user: 'nobody@example.com' });
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.errors)).toEqual(['user']);
    const missing = await s.api.post(`/conversations/${conversationId}/assign`, {});
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors)).toEqual(['user']);

    const unassigned = await s.api.post(`/conversations/${conversationId}/assign`, { user: null });
    expect(unassigned.status).toBe(200);
    expect(unassigned.body.data.conversation.assignee).toBeNull();
    expect(unassigned.body.data.conversation.stateChanges.at(-1).type).toBe('unassigned');
  });

  it("another workspace's user is unknown", async () => {
    const s = await setup();
    const other = await setup();
    const { conversationId } = await s.conversationWith(phone());
    const refused = await s.api.post(`/conversations/${conversationId}/assign`, { user: other.user.id });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.user).toBeDefined();
  });
});

describe('POST /conversations/{id}/read', () => {
  it('reads through the latest message by default, or through a given one; never moves back', async () => {
    const s = await setup();
    const p = phone();
    const { conversationId, messageId } = await s.conversationWith(p);
    await s.reply(p, 'one', new Date(Date.now() + 1000));
    await s.reply(p, 'two', new Date(Date.now() + 2000));
    const messages = (await s.api.get(`/messages?conversation_id=${conversationId}`)).body.data as { id: string; body: string; createdAt: string }[];
    const one = messages.find((m) => m.body === 'one')!;
    const two = messages.find((m) => m.body === 'two')!;

    const partly = await s.api.post(`/conversations/${conversationId}/read`, { through: one.id });
    expect(partly.status).toBe(200);
    expect(partly.body.data.conversation).toMatchObject({ lastReadAt: one.createdAt, unreadCount: 1 });

    const all = await s.api.post(`/conversations/${conversationId}/read`);
    expect(all.body.data.conversation).toMatchObject({ lastReadAt: two.createdAt, unreadCount: 0 });

    const back = await s.api.post(`/conversations/${conversationId}/read`, { through: messageId });
    expect(back.status).toBe(200);
    expect(back.body.data.conversation).toMatchObject({ lastReadAt: two.createdAt, unreadCount: 0 });

    await s.reply(p, 'three', new Date(Date.now() + 3000));
    expect((await s.api.get(`/conversations/${conversationId}`)).body.data.conversation.unreadCount).toBe(1);
  });

  it('a through naming no message of the conversation is 422 on through, and changes nothing', async () => {
    const s = await setup();
    const first = await s.conversationWith(phone());
    const second = await s.conversationWith(phone());
    for (const through of [second.messageId, 'not-a-uuid', '0190a5b0-0000-7000-8000-000000000000']) {
      const refused = await s.api.post(`/conversations/${first.conversationId}/read`, { through });
      expect(refused.status).toBe(422);
      expect(Object.keys(refused.body.errors)).toEqual(['through']);
    }
    expect((await s.api.get(`/conversations/${first.conversationId}`)).body.data.conversation.lastReadAt).toBeNull();
  });
});

describe('POST /conversations/{id}/labels', () => {
  it('trims, lowercases, sorts and de-duplicates; removes without case', async () => {
    const s = await setup();
    const { conversationId } = await s.conversationWith(phone());
    const added = await s.api.post(`/conversations/${conversationId}/labels`, { add: ['  VIP ', 'billing', 'vip', 'Bug'] });
    expect(added.status).toBe(200);
    expect(added.body.data.conversation.labels).toEqual(['billing', 'bug', 'vip']);
    const removed = await s.api.post(`/conversations/${conversationId}/labels`, { remove: ['BILLING'], add: ['zeta'] });
    expect(removed.body.data.conversation.labels).toEqual(['bug', 'vip', 'zeta']);
  });

  it('a label of 0 or over 50 characters, or a 21st label, is 422 on add and changes nothing', async () => {
    const s = await setup();
    const { conversationId } = await s.conversationWith(phone());
    for (const add of [['   '], ['x'.repeat(51)], [7]]) {
      const refused = await s.api.post(`/conversations/${conversationId}/labels`, { add });
      expect(refused.status, JSON.stringify(add)).toBe(422);
      expect(Object.keys(refused.body.errors)).toEqual(['add']);
    }
    const twenty = Array.from({ length: 20 }, (_, i) => `label-${String(i).padStart(2, '0')}`);
    expect((await s.api.post(`/conversations/${conversationId}/labels`, { add: twenty })).status).toBe(200);
    const over = await s.api.post(`/conversations/${conversationId}/labels`, { add: ['one-more'] });
    expect(over.status).toBe(422);
    expect(Object.keys(over.body.errors)).toEqual(['add']);
    expect((await s.api.get(`/conversations/${conversationId}`)).body.data.conversation.labels).toEqual(twenty);
    // Swapping one for another stays within the limit.
    const swapped = await s.api.post(`/conversations/${conversationId}/labels`, { add: ['one-more'], remove: ['label-00'] });
    expect(swapped.status).toBe(200);
    expect(swapped.body.data.conversation.labels).toHaveLength(20);
  });

  it.runIf(onPostgres)('concurrent changes never lose one another', async () => {
    const s = await setup();
    const { conversationId } = await s.conversationWith(phone());
    const labels = Array.from({ length: 12 }, (_, i) => `c${i}`);
    const answers = await Promise.all(labels.map((label) => s.api.post(`/conversations/${conversationId}/labels`, { add: [label] })));
    expect(answers.map((answer) => answer.status)).toEqual(labels.map(() => 200));
    expect((await s.api.get(`/conversations/${conversationId}`)).body.data.conversation.labels).toEqual([...labels].sort());
    await Promise.all(labels.slice(0, 6).map((label) => s.api.post(`/conversations/${conversationId}/labels`, { remove: [label] })));
    expect((await s.api.get(`/conversations/${conversationId}`)).body.data.conversation.labels).toEqual(labels.slice(6).sort());
  });
});

describe('GET /conversations filters', () => {
  it('assignee (id, email, none), unread, label, search and sort=last_message', async () => {
    const s = await setup();
    const pa = phone();
    const pb = phone();
    const a = await s.conversationWith(pa, 'about the invoice');
    const b = await s.conversationWith(pb, 'about the delivery');
    await s.api.post(`/conversations/${a.conversationId}/assign`, { user: s.user.id });
    await s.api.post(`/conversations/${b.conversationId}/labels`, { add: ['Urgent'] });
    await s.reply(pa, 'a reply', new Date(Date.now() + 1000));
    const ids = async (query: string) => {
      const answer = await s.api.get(`/conversations${query}`);
      expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
      return (answer.body.data as { id: string }[]).map((c) => c.id);
    };
    expect(await ids(`?assignee=${s.user.id}`)).toEqual([a.conversationId]);
    expect(await ids('?assignee=AGENT@example.com')).toEqual([a.conversationId]);
    expect(await ids('?assignee=none')).toEqual([b.conversationId]);
    expect(await ids('?unread=true')).toEqual([a.conversationId]);
    expect(await ids('?label=URGENT')).toEqual([b.conversationId]);
    expect(await ids('?search=invoice')).toEqual([a.conversationId]);
    expect(await ids(`?search=${encodeURIComponent(`Contact ${pb}`)}`)).toEqual([b.conversationId]);
    expect(await ids('')).toEqual([b.conversationId, a.conversationId]);
    expect(await ids('?sort=last_message')).toEqual([a.conversationId, b.conversationId]);
    expect(await ids('?sort=last_message&limit=1')).toEqual([a.conversationId]);
    const next = (await s.api.get('/conversations?sort=last_message&limit=1')).body.meta.next_cursor;
    expect(await ids(`?sort=last_message&limit=1&cursor=${next}`)).toEqual([b.conversationId]);

    expect((await s.api.get('/conversations?assignee=nobody@example.com')).body.errors.assignee).toBeDefined();
    expect((await s.api.get('/conversations?sort=newest')).body.errors.sort).toBeDefined();
    expect((await s.api.get('/conversations?unread=yes')).body.errors.unread).toBeDefined();
  });

  it('encrypted content never matches a search', async () => {
    const s = await setup();
    const contact = await s.contact({ phone: phone() });
    await s.send({ to: contact.id, message: 'ciphertextsecretword', is_encrypted: true });
    expect((await s.api.get('/conversations?search=ciphertextsecretword')).body.data).toEqual([]);
  });

  it('a credential of several channels without X-Channel-Uuid lists all of them; channel_id narrows; another is 422', async () => {
    const s = await setup();
    const second = (await addChannel(app.db.prisma, s.workspace.id, 'Second channel')).channel;
    const { token } = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Both', channelIds: [s.channel.id, second.id] });
    const both = restClient(app, s.host, token);
    const contact = await s.contact({ phone: phone() });
    const one = (await restClient(app, s.host, token, { 'X-Channel-Uuid': s.channel.id }).post('/messages', { to: contact.id, message: 'on the first' })).body.data.message;
    const two = (await restClient(app, s.host, token, { 'X-Channel-Uuid': second.id }).post('/messages', { to: contact.id, message: 'on the second' })).body.data.message;
    const all = await both.get('/conversations');
    expect(all.status).toBe(200);
    expect((all.body.data as { id: string; channelId: string }[]).map((c) => [c.id, c.channelId])).toEqual([
      [two.conversationId, second.id],
      [one.conversationId, s.channel.id],
    ]);
    expect((await both.get(`/conversations?channel_id=${second.id}`)).body.data.map((c: { id: string }) => c.id)).toEqual([two.conversationId]);
    const other = await setup();
    const refused = await both.get(`/conversations?channel_id=${other.channel.id}`);
    expect(refused.status).toBe(422);
    expect(Object.keys(refused.body.errors)).toEqual(['channel_id']);
  });
});

describe('one conversation of a credential with several channels', () => {
  /** A workspace with two channels under one connection token, a conversation on each. */
  async function twoChannels() {
    const s = await setup();
    const second = (await addChannel(app.db.prisma, s.workspace.id, 'Second channel')).channel;
    const { token } = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Both', channelIds: [s.channel.id, second.id] });
    const contact = await s.contact({ phone: `+1415777${String(1000 + (++seq % 9000)).padStart(4, '0')}` });
    const on = async (channelId: string, message: string) =>
      (await restClient(app, s.host, token, { 'X-Channel-Uuid': channelId }).post('/messages', { to: contact.id, message })).body.data.message as {
        id: string;
        conversationId: string;
      };
    const first = await on(s.channel.id, 'on the first');
    const onSecond = await on(second.id, 'on the second') as { id: string; conversationId: string; contactId: string };
    // A channel of the same workspace the credential does not cover.
    const third = await addChannel(app.db.prisma, s.workspace.id, 'Third channel');
    const outside = (await restClient(app, s.host, third.apiKey).post('/messages', { to: contact.id, message: 'elsewhere' })).body.data.message as { conversationId: string };
    return { ...s, second, token, first, onSecond, outside };
  }

  /**
   * Every read and action on one conversation takes its channel from the conversation: no
   * X-Channel-Uuid needed, the change recorded as `actor`; a conversation of a channel outside the
   * credential is 404, as is one of another channel when the header names one. Starting a send
   * without a channel is still 400.
   */
  async function takesTheChannelFromTheConversation(token: string, w: Awaited<ReturnType<typeof twoChannels>>, actor: Record<string, unknown>) {
    const id = w.onSecond.conversationId;
    const bare = restClient(app, w.host, token);
    const got = await bare.get(`/conversations/${id}`);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.data.conversation).toMatchObject({ id, channelId: w.second.id });
    const messages = await bare.get(`/messages?conversation_id=${id}`);
    expect(messages.status).toBe(200);
    expect(messages.body.data.map((m: { id: string }) => m.id)).toEqual([w.onSecond.id]);
    const assigned = await bare.post(`/conversations/${id}/assign`, { user: w.user.id });
    expect(assigned.status).toBe(200);
    expect(assigned.body.data.conversation.stateChanges.at(-1)).toMatchObject({ type: 'assigned', actor });
    const read = await bare.post(`/conversations/${id}/read`, { through: w.onSecond.id });
    expect(read.status).toBe(200);
    expect(read.body.data.conversation.lastReadAt).not.toBeNull();
    const labelled = await bare.post(`/conversations/${id}/labels`, { add: ['Billing'] });
    expect(labelled.status).toBe(200);
    expect(labelled.body.data.conversation.labels).toEqual(['billing']);
    const closed = await bare.post(`/conversations/${id}/close`);
    expect(closed.status).toBe(200);
    expect(closed.body.data.conversation.stateChanges.at(-1)).toMatchObject({ type: 'closed', actor });
    const reopened = await bare.post(`/conversations/${id}/reopen`);
    expect(reopened.status).toBe(200);
    expect(reopened.body.data.conversation.status).toBe('open');

    // Naming the other channel, the conversation is not found; so is one of a channel outside the credential.
    const other = restClient(app, w.host, token, { 'X-Channel-Uuid': w.channel.id });
    expect((await other.get(`/conversations/${id}`)).status).toBe(404);
    expect((await other.post(`/conversations/${id}/close`)).status).toBe(404);
    expect((await other.get(`/messages?conversation_id=${id}`)).body.data).toEqual([]);
    const outside = w.outside.conversationId;
    expect((await bare.get(`/conversations/${outside}`)).status).toBe(404);
    expect((await bare.post(`/conversations/${outside}/assign`, { user: w.user.id })).status).toBe(404);
    expect((await bare.get(`/messages?conversation_id=${outside}`)).body.data).toEqual([]);
    expect(await app.db.prisma.conversation.findUniqueOrThrow({ where: { id: outside } })).toMatchObject({ assigneeId: null });

    // Starting something on a channel without naming one still needs the header.
    const send = await bare.post('/messages', { to: w.onSecond.contactId, message: 'which channel?' });
    expect(send.status).toBe(400);
    expect(send.body.message).toContain('X-Channel-Uuid');
  }

  it('a connection token over two channels: no X-Channel-Uuid needed for one conversation; the actor is its channel', async () => {
    const w = await twoChannels();
    await takesTheChannelFromTheConversation(w.token, w, { type: 'channel', id: w.second.id, name: 'Second channel' });
  });

  it('a session over two channels: the same, as its user', async () => {
    const w = await twoChannels();
    const { mintSession } = await import('../../helpers/sessions.js');
    const session = await mintSession(restClient(app, w.host, w.token), { user: w.user.email, channels: [w.channel.id, w.second.id] });
    await takesTheChannelFromTheConversation(session.token, w, { type: 'user', id: w.user.id, name: 'Agent Smith' });
  });
});

describe('GET /users', () => {
  it("lists the workspace's users, paged", async () => {
    const s = await setup();
    await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: 'Second Agent', email: 'second@example.com' });
    const first = await s.api.get('/users?limit=1');
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([{ id: expect.any(String), name: 'Second Agent', email: 'second@example.com' }]);
    expect(first.body.meta.has_more).toBe(true);
    const rest = await s.api.get(`/users?limit=1&cursor=${first.body.meta.next_cursor}`);
    expect(rest.body.data).toEqual([{ id: s.user.id, name: 'Agent Smith', email: 'Agent@Example.com' }]);
    expect((await s.api.get('/users?limit=0')).status).toBe(422);
  });
});

describe('the demo workspace', () => {
  it('has conversations with unread replies, one assigned and labelled', async () => {
    const { freshDatabase } = await import('../../helpers/fresh-database.js');
    const { migrate } = await import('../../../src/db/migrate.js');
    const { seedDemo } = await import('../../../src/modules/demo/demo.seed.js');
    const fresh = await freshDatabase();
    await fresh.db.withSession((session) => migrate(session));
    const local = await createTestApp({}, fresh.db);
    try {
      const demo = await seedDemo(local.db.prisma);
      const api = restClient(local, 'localhost', demo!.apiKey);
      const unread = await api.get('/conversations?unread=true&sort=last_message');
      expect(unread.status).toBe(200);
      expect(unread.body.data.map((c: { unreadCount: number }) => c.unreadCount)).toEqual([1, 1, 2]);
      const assigned = await api.get('/conversations?assignee=agent@demo.localhost');
      expect(assigned.body.data).toHaveLength(1);
      expect(assigned.body.data[0]).toMatchObject({ labels: ['orders'], lastMessage: { body: 'It was order 1042.' } });
    } finally {
      await local.close();
      await fresh.drop();
    }
  });
});

describe('sessions', () => {
  it("act as their user: an assignment's actor is the session's user; without the conversations scope every change is 403", async () => {
    const { sessionSetup } = await import('../../helpers/sessions.js');
    const s = await sessionSetup(app, { scopes: ['read', 'send', 'contacts', 'conversations'] });
    const contact = await s.contact({ phone: phone() });
    const { conversationId } = (await s.send({ to: contact.id, message: 'hello' })).body.data.message;
    const assigned = await s.browser.post(`/conversations/${conversationId}/assign`, { user: s.user.email });
    expect(assigned.status).toBe(200);
    expect(assigned.body.data.conversation.stateChanges.at(-1)).toMatchObject({ type: 'assigned', actor: { type: 'user', id: s.user.id, name: 'Agent Smith' } });

    const reader = await sessionSetup(app, { scopes: ['read'] });
    const other = await reader.contact({ phone: phone() });
    const otherId = (await reader.send({ to: other.id, message: 'hello' })).body.data.message.conversationId;
    for (const [path, body] of [['assign', { user: null }], ['read', {}], ['labels', { add: ['x'] }]] as const) {
      const refused = await reader.browser.post(`/conversations/${otherId}/${path}`, body);
      expect(refused.status, path).toBe(403);
    }
    expect((await reader.api.get(`/conversations/${otherId}`)).body.data.conversation).toMatchObject({ assignee: null, labels: [], lastReadAt: null });
    expect((await reader.browser.get('/users')).status).toBe(200);
  });
});
