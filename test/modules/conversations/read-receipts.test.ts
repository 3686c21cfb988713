import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { receiveMessage } from '../../../src/modules/inbound/inbound.service.js';
import { bearer, workspaceWithChannel } from '../../helpers/factories.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { postOperation } from '../../helpers/graphql.js';
import { restClient } from '../../helpers/rest.js';
import { sleep, until } from '../../helpers/until.js';
import { WHATSAPP_SETTINGS, startWhatsAppFake, whatsappWorkspace, type WhatsAppFake } from '../../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../../helpers/worker.js';
import { runAdminOn } from '../../helpers/admin.js';
import { createUser } from '../../../src/modules/users/users.service.js';
import { mintSession } from '../../helpers/sessions.js';

/* docs/inbox.md: marking a WhatsApp conversation read reports the latest inbound message read, through the outbox. */

let fake: WhatsAppFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
/** Every statement the app's database ran since the test last emptied it. */
let statements: string[] = [];

beforeAll(async () => {
  fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  // A database of its own: the worker claims every due delivery.
  app = await appOnOwnDatabase({ providers: testProviders({ settings: { WHATSAPP_API_URL: fake.url } }), onQuery: (sql) => statements.push(sql) });
});
afterAll(async () => {
  await app.drop();
  await fake.close();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
  fake.answerAll(null);
});

function startWorker() {
  const worker = appWorker(app);
  cleanups.push(() => worker.stop());
  worker.start();
  return worker;
}

let seq = 0;
const phone = () => `+3161234${String(1000 + (++seq % 9000)).padStart(4, '0')}`;

/** A channel of `ws` receiving a text from `from` under a fresh wamid: the message's id and wamid. */
async function inbound(ws: { workspace: { id: string }; channel: { id: string; name: string } }, from: string, body: string, at = new Date()) {
  const wamid = `wamid.HBgL${++seq}${Date.now()}`;
  const channel = { id: ws.channel.id, workspaceId: ws.workspace.id, name: ws.channel.name };
  await receiveMessage({ prisma: app.db.prisma, logger: pino({ level: 'silent' }) }, channel, { kind: 'message', providerId: wamid, from: { phone: from }, at, body, media: [] });
  const stored = await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { channelId: ws.channel.id, providerId: wamid } });
  const message = await app.db.prisma.message.findUniqueOrThrow({ where: { id: stored.messageId } });
  return { wamid, messageId: message.id, conversationId: message.conversationId };
}

async function whatsapp() {
  const ws = await whatsappWorkspace(app.db.prisma);
  return { ...ws, api: restClient(app, ws.host, ws.apiKey) };
}

/** The read receipts the fake received (bodies with `status: read`), with their credentials. */
const receipts = () => fake.sent.filter((send) => send.body?.status === 'read');
const receiptRows = (conversationId: string) => app.db.prisma.delivery.findMany({ where: { conversationId }, orderBy: { createdAt: 'asc' } });

describe('POST /conversations/{id}/read on a whatsapp_cloud channel', () => {
  it("reports the latest inbound message read: exactly the read body with its wamid, to the channel's /messages with its token", async () => {
    const s = await whatsapp();
    startWorker();
    const p = phone();
    await inbound(s, p, 'first');
    const latest = await inbound(s, p, 'second');
    const before = receipts().length;
    const read = await s.api.post(`/conversations/${latest.conversationId}/read`, {});
    expect(read.status).toBe(200);
    expect(read.body.data.conversation.unreadCount).toBe(0);
    await until(() => receipts().length > before, 'the read receipt');
    expect(receipts().slice(before)).toEqual([
      {
        version: 'v21.0',
        phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId,
        authorization: `Bearer ${WHATSAPP_SETTINGS.accessToken}`,
        body: { messaging_product: 'whatsapp', status: 'read', message_id: latest.wamid },
        at: expect.any(Number),
      },
    ]);
    await until(async () => (await receiptRows(latest.conversationId))[0]?.status === 'succeeded', 'the receipt recorded');

    // Marking read again with nothing new sends nothing new.
    expect((await s.api.post(`/conversations/${latest.conversationId}/read`, {})).status).toBe(200);
    await sleep(200);
    expect(receipts().length).toBe(before + 1);
    expect(await receiptRows(latest.conversationId)).toHaveLength(1);
  });

  it('reading through an earlier message reports that one; a later read reports the newer one, never again an older one', async () => {
    const s = await whatsapp();
    const p = phone();
    const first = await inbound(s, p, 'one', new Date(Date.now() - 2000));
    const second = await inbound(s, p, 'two');
    // Queued while no worker runs: the newer read replaces the pending receipt rather than queueing another.
    expect((await s.api.post(`/conversations/${first.conversationId}/read`, { through: first.messageId })).status).toBe(200);
    expect((await receiptRows(first.conversationId)).map((row) => row.payload)).toEqual([{ message_id: first.wamid }]);
    expect((await s.api.post(`/conversations/${first.conversationId}/read`, {})).status).toBe(200);
    expect((await receiptRows(first.conversationId)).map((row) => [row.status, row.payload])).toEqual([['pending', { message_id: second.wamid }]]);
    const before = receipts().length;
    startWorker();
    await until(async () => (await receiptRows(first.conversationId))[0]?.status === 'succeeded', 'the receipt sent');
    expect(receipts().slice(before).map((send) => send.body.message_id)).toEqual([second.wamid]);
  });

  it('the answer never waits for WhatsApp: a slow or failing Graph API neither delays nor fails the 200', async () => {
    const s = await whatsapp();
    const worker = startWorker();
    fake.answerAll({ status: 500, body: { error: { message: 'Service temporarily unavailable', code: 2 } }, delayMs: 1500 });
    const p = phone();
    const { conversationId } = await inbound(s, p, 'hello');
    const started = Date.now();
    const read = await s.api.post(`/conversations/${conversationId}/read`, {});
    expect(read.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1200);
    expect(read.body.data.conversation.lastReadAt).not.toBeNull();
    await until(async () => (await receiptRows(conversationId))[0]?.lastError != null, 'the first attempt refused');
    // The receipt left retrying is not the next test's.
    await worker.stop();
    await app.db.prisma.delivery.deleteMany({ where: { conversationId } });
  });

  it('a 500 is retried, then the receipt goes; the message it names keeps its status', async () => {
    const s = await whatsapp();
    fake.failNext({ status: 500, body: { error: { message: `token ${WHATSAPP_SETTINGS.accessToken} rejected upstream`, code: 2 } } });
    startWorker();
    const p = phone();
    const message = await inbound(s, p, 'hello');
    const before = receipts().length;
    expect((await s.api.post(`/conversations/${message.conversationId}/read`, {})).status).toBe(200);
    await until(async () => (await receiptRows(message.conversationId))[0]?.status === 'succeeded', 'the receipt sent after a retry');
    expect(receipts().slice(before).map((send) => send.body.message_id)).toEqual([message.wamid, message.wamid]);
    expect(receipts().slice(before).every((send) => send.authorization === `Bearer ${WHATSAPP_SETTINGS.accessToken}`)).toBe(true);
    const [row] = await receiptRows(message.conversationId);
    expect(row!.attempts).toBe(2);
    expect((await app.db.prisma.message.findUniqueOrThrow({ where: { id: message.messageId } })).status).toBe('received');
    // The provider's text was logged without the channel's token.
    expect(app.logs.join('')).not.toContain(WHATSAPP_SETTINGS.accessToken);
  });

  it('a refusal (4xx) fails the receipt for good and changes no message', async () => {
    const s = await whatsapp();
    fake.answerAll({ status: 400, body: { error: { message: 'Invalid parameter', code: 100 } } });
    startWorker();
    const message = await inbound(s, phone(), 'hello');
    expect((await s.api.post(`/conversations/${message.conversationId}/read`, {})).status).toBe(200);
    await until(async () => (await receiptRows(message.conversationId))[0]?.status === 'failed', 'the receipt failed');
    const [row] = await receiptRows(message.conversationId);
    expect(row!.attempts).toBe(1);
    expect(row!.lastError).toContain('100: Invalid parameter');
    expect((await app.db.prisma.message.findUniqueOrThrow({ where: { id: message.messageId } })).status).toBe('received');
  });

  it('GraphQL markConversationRead does the same', async () => {
    const s = await whatsapp();
    startWorker();
    const message = await inbound(s, phone(), 'hello from GraphQL');
    const before = receipts().length;
    const result = await postOperation(app, s.host, bearer(s.apiKey), {
      query: 'mutation ($id: ID!) { markConversationRead(id: $id) { conversation { id unreadCount } userErrors { field } } }',
      variables: { id: message.conversationId },
    });
    expect(result.errors).toBeUndefined();
    expect(result.data.markConversationRead).toEqual({ conversation: { id: message.conversationId, unreadCount: 0 }, userErrors: [] });
    await until(() => receipts().length > before, 'the read receipt');
    expect(receipts().slice(before).map((send) => send.body)).toEqual([{ messaging_product: 'whatsapp', status: 'read', message_id: message.wamid }]);
  });
});

describe('other channels', () => {
  it('queue and send no receipt', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    startWorker();
    const before = fake.sent.length;
    const message = await inbound(ws, phone(), 'hello');
    const read = await api.post(`/conversations/${message.conversationId}/read`, {});
    expect(read.status).toBe(200);
    expect(read.body.data.conversation.lastReadAt).not.toBeNull();
    await sleep(200);
    expect(await receiptRows(message.conversationId)).toEqual([]);
    expect(fake.sent.length).toBe(before);
  });
});

describe('typing on a whatsapp_cloud channel (--typing-indicators)', () => {
  it('shows the contact a typing indicator on the latest inbound message when turned on: at most once in 20 s per conversation, and never when off', async () => {
    const s = await whatsapp();
    const agent = await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: 'Typing Agent', email: `typing-${seq}-${Date.now()}@example.com` });
    startWorker();
    const p = phone();
    await inbound(s, p, 'first');
    const latest = await inbound(s, p, 'second');
    const typing = () => fake.sent.filter((send) => send.body?.typing_indicator);
    const report = async () => expect((await s.api.post(`/conversations/${latest.conversationId}/activity`, { typing: true, from: agent.email })).status).toBe(204);

    // Off, as every channel starts: typing is told to the inbox only.
    await report();
    await sleep(300);
    expect(typing()).toEqual([]);
    expect(await receiptRows(latest.conversationId)).toEqual([]);

    const configured = await runAdminOn(app.db, ['channel:configure', '--channel', s.channel.id, '--typing-indicators', 'on']);
    expect(configured.code, configured.stderr).toBe(0);
    const bad = await runAdminOn(app.db, ['channel:configure', '--channel', s.channel.id, '--typing-indicators', 'yes']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--typing-indicators must be on or off');

    await report();
    await until(() => typing().length > 0, 'the typing indicator');
    expect(typing()).toEqual([
      {
        version: 'v21.0',
        phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId,
        authorization: `Bearer ${WHATSAPP_SETTINGS.accessToken}`,
        body: { messaging_product: 'whatsapp', status: 'read', message_id: latest.wamid, typing_indicator: { type: 'text' } },
        at: expect.any(Number),
      },
    ]);
    // Renewed typing within 20 s asks for nothing more (the indicator shows for 25 s); the inbox's read state is the team's, unchanged.
    await report();
    await report();
    await sleep(500);
    expect(typing()).toHaveLength(1);
    const view = await s.api.get(`/conversations/${latest.conversationId}`);
    expect(view.body.data.conversation.unreadCount).toBe(2);
    // Typing stopped asks for nothing.
    expect((await s.api.post(`/conversations/${latest.conversationId}/activity`, { typing: false, from: agent.email })).status).toBe(204);
    // 20 s later, the next report shows it again.
    await app.db.prisma.conversation.update({ where: { id: latest.conversationId }, data: { typingIndicatedAt: new Date(Date.now() - 21_000) } });
    await report();
    await until(() => typing().length > 1, 'the second typing indicator');

    const off = await runAdminOn(app.db, ['channel:configure', '--channel', s.channel.id, '--typing-indicators', 'off']);
    expect(off.code, off.stderr).toBe(0);
    await app.db.prisma.conversation.update({ where: { id: latest.conversationId }, data: { typingIndicatedAt: null } });
    await report();
    await sleep(500);
    expect(typing()).toHaveLength(2);
  });
});

describe('a typing report’s statements', () => {
  it('on a channel whose typing indicators are off: one statement, the conversation read, and no delivery; turned on, the indicator’s one more', async () => {
    const s = await whatsapp();
    const agent = await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: 'Quiet Agent', email: `quiet-${seq}-${Date.now()}@example.com` });
    const browser = restClient(app, s.host, (await mintSession(s.api, { user: agent.email })).token);
    const latest = await inbound(s, phone(), 'hello');
    const report = async () => expect((await browser.post(`/conversations/${latest.conversationId}/activity`, { typing: true })).status).toBe(204);
    /** What one report runs, authentication aside (the session's, cached or not). */
    const reportStatements = async () => {
      statements = [];
      await report();
      return statements.filter((sql) => !/\baccess_tokens\b/.test(sql));
    };

    // Off, as every channel starts: the read of the conversation and its channel's setting, nothing written.
    await report();
    const off = await reportStatements();
    expect(off, off.join('\n')).toHaveLength(1);
    expect(off[0]).toMatch(/^\s*SELECT\b/);
    expect(await receiptRows(latest.conversationId)).toEqual([]);

    // On: the same read, then the indicator's UPDATE … INSERT INTO deliveries — once in 20 s.
    const configured = await runAdminOn(app.db, ['channel:configure', '--channel', s.channel.id, '--typing-indicators', 'on']);
    expect(configured.code, configured.stderr).toBe(0);
    const on = await reportStatements();
    expect(on, on.join('\n')).toHaveLength(2);
    expect(on[1]).toMatch(/INSERT INTO deliveries/);
    const rows = await receiptRows(latest.conversationId);
    expect(rows.map((row) => row.payload)).toEqual([{ message_id: latest.wamid, typing: true }]);
    expect(await reportStatements()).toHaveLength(2);
    expect(await receiptRows(latest.conversationId)).toHaveLength(1);
  });

  it('a conversation the caller cannot read is still 404, and a malformed GraphQL id NOT_FOUND', async () => {
    const s = await whatsapp();
    const other = await whatsapp();
    const agent = await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: 'Other Agent', email: `other-${seq}-${Date.now()}@example.com` });
    const theirs = await inbound(other, phone(), 'elsewhere');
    const answer = await s.api.post(`/conversations/${theirs.conversationId}/activity`, { typing: true, from: agent.email });
    expect(answer.status).toBe(404);
    for (const conversationId of ['not-a-uuid', theirs.conversationId]) {
      const gql = await postOperation(app, s.host, bearer(s.apiKey), {
        query: 'mutation($id: ID!, $from: ID) { reportActivity(conversationId: $id, typing: true, from: $from) { reported userErrors { field } } }',
        variables: { id: conversationId, from: agent.email },
      });
      expect(gql.data?.reportActivity).toEqual({ reported: false, userErrors: [{ field: ['conversationId'] }] });
    }
  });
});
