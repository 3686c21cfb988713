import { parse, type DocumentNode } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/factories.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { fetchAs, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { restClient } from '../helpers/rest.js';
import { subscribeSse } from '../helpers/sse.js';
import { socketClient, type SocketClient } from '../helpers/websocket.js';
import { TWILIO_SETTINGS, signedTwilioRequest, startTwilioFake, statusForm, twilioWorkspace, type TwilioFake } from '../helpers/twilio-fake.js';
import {
  WHATSAPP_SETTINGS,
  signedHeaders,
  startWhatsAppFake,
  statusUpdate,
  textMessage,
  webhookBody,
  whatsappWorkspace,
  type WhatsAppFake,
} from '../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../helpers/worker.js';

/**
 * Live statuses (docs/graphql.md): `messageUpdated` streams each status change a delivery or a
 * provider's status webhook makes, over SSE and over WebSocket on a real port, and
 * `conversationUpdated(id)` only the conversation it names.
 */

const PUBLIC_URL = 'https://connect.example.test';

let wa: WhatsAppFake;
let tw: TwilioFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let served: ServedApp;

beforeAll(async () => {
  wa = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  tw = await startTwilioFake({ accountSid: TWILIO_SETTINGS.accountSid, authToken: TWILIO_SETTINGS.authToken });
  // A database of its own: the worker claims every due delivery and inbound event.
  app = await appOnOwnDatabase({
    env: { PUBLIC_URL },
    providers: testProviders({ settings: { WHATSAPP_API_URL: wa.url, TWILIO_API_URL: tw.url }, publicUrl: PUBLIC_URL }),
  });
  served = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
  const worker = appWorker(app);
  worker.start();
  cleanupsAll.push(() => worker.stop());
});
const cleanupsAll: (() => Promise<void>)[] = [];
afterAll(async () => {
  while (cleanupsAll.length) await cleanupsAll.pop()!();
  await served.close();
  await app.drop();
  await wa.close();
  await tw.close();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(done: () => boolean | Promise<boolean>, what = 'condition', ms = 8000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await sleep(20);
  }
}

const statusOf = async (id: string) => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status;

const UPDATED = parse('subscription LiveUpdated($conversationId: ID) { messageUpdated(conversationId: $conversationId) { id status failureReason body } }');
const CONVERSATION = parse('subscription LiveConversation($id: ID) { conversationUpdated(id: $id) { id status } }');

type Received = { data?: unknown; errors?: unknown[] };

/** One subscription over SSE and one over a WebSocket, on the served port, with `apiKey` on `host`. */
async function both(host: string, apiKey: string, document: DocumentNode, variables: Record<string, unknown>) {
  const fetchHere = fetchAs(host);
  const sse = await subscribeSse((path, init) => fetchHere(`http://127.0.0.1:${served.port}${path}`, init), bearer(apiKey), document as never, variables as never);
  const socket: SocketClient = socketClient(served.port, host, bearer(apiKey));
  const ws = socket.subscribe(document as never, variables as never);
  cleanups.push(async () => {
    ws.stop();
    await socket.dispose();
    await sse.close();
  });
  // Both subscribed before anything is published.
  await sleep(200);
  return {
    sse: sse.received as Received[],
    ws: ws.received as Received[],
    async waitFor(count: number) {
      await sse.waitFor(count, 8000);
      await ws.waitFor(count, 8000);
    },
  };
}

const updates = (received: Received[]) => received.map((result) => (result.data as { messageUpdated: unknown }).messageUpdated);

describe('messageUpdated', () => {
  it('streams sent, delivered, read and failed (with its reason) from WhatsApp, over SSE and WebSocket', async () => {
    const ws = await whatsappWorkspace(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    const post = (body: string) => app.fetch(ws.host, `/webhooks/whatsapp/${ws.channel.id}`, { method: 'POST', headers: signedHeaders(body, ws.settings.appSecret), body });
    const statuses = (...list: ReturnType<typeof statusUpdate>[]) => post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, statuses: list }]));
    // A reply opens the 24-hour window.
    expect((await post(webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, contacts: [{ waId: '31612340001', name: 'Ann' }], messages: [textMessage('+31612340001', 'hi')] }]))).status).toBe(200);
    await until(async () => (await app.db.prisma.message.count({ where: { channelId: ws.channel.id } })) === 1, 'the reply');
    const reply = await app.db.prisma.message.findFirstOrThrow({ where: { channelId: ws.channel.id } });

    const streams = await both(ws.host, ws.apiKey, UPDATED, { conversationId: reply.conversationId });
    const sent = await api.post('/messages', { to: reply.contactId, message: 'your order' });
    expect(sent.status).toBe(202);
    const id = sent.body.data.message.id as string;
    await streams.waitFor(1);
    const wamid = (await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: id } })).providerId;
    expect((await statuses(statusUpdate(wamid, 'delivered'))).status).toBe(200);
    await streams.waitFor(2);
    expect((await statuses(statusUpdate(wamid, 'read'))).status).toBe(200);
    await streams.waitFor(3);
    // Older than what the message has: nothing is streamed.
    expect((await statuses(statusUpdate(wamid, 'delivered'))).status).toBe(200);

    const other = await api.post('/messages', { to: reply.contactId, message: 'another' });
    const otherId = other.body.data.message.id as string;
    await streams.waitFor(4);
    const otherWamid = (await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: otherId } })).providerId;
    await statuses(statusUpdate(otherWamid, 'failed', { error: { code: 131026, title: 'Message Undeliverable.' } }));
    await streams.waitFor(5);
    await until(async () => (await statusOf(otherId)) === 'failed', 'failed');
    await sleep(200);

    const expected = [
      { id, status: 'sent', failureReason: null, body: 'your order' },
      { id, status: 'delivered', failureReason: null, body: 'your order' },
      { id, status: 'read', failureReason: null, body: 'your order' },
      { id: otherId, status: 'sent', failureReason: null, body: 'another' },
      { id: otherId, status: 'failed', failureReason: '131026: Message Undeliverable.', body: 'another' },
    ];
    expect(updates(streams.sse)).toEqual(expected);
    expect(updates(streams.ws)).toEqual(expected);
  });

  it('streams Twilio status callbacks, hides an encrypted body, and nothing of another channel', async () => {
    const ws = await twilioWorkspace(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    const path = `/webhooks/twilio/${ws.channel.id}/status`;
    const status = (sid: string, state: string, options: { errorCode?: string; errorMessage?: string } = {}) => {
      const signed = signedTwilioRequest(`${PUBLIC_URL}${path}`, statusForm(ws.settings.accountSid, sid, state, options), ws.settings.authToken);
      return app.fetch(ws.host, path, { method: 'POST', headers: signed.headers, body: signed.body });
    };
    // Another workspace's channel on the same provider: its statuses never reach this stream.
    const elsewhere = await twilioWorkspace(app.db.prisma);
    const elsewhereApi = restClient(app, elsewhere.host, elsewhere.apiKey);

    const streams = await both(ws.host, ws.apiKey, UPDATED, {});
    const sent = await api.post('/messages', { to: { phone: '+14155550111' }, message: 'c2VjcmV0', is_encrypted: true });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const id = sent.body.data.message.id as string;
    expect((await elsewhereApi.post('/messages', { to: { phone: '+14155550112' }, message: 'not yours' })).status).toBe(202);
    await streams.waitFor(1);
    const sid = (await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: id } })).providerId;
    expect((await status(sid, 'delivered')).status).toBeLessThan(300);
    await streams.waitFor(2);
    expect((await status(sid, 'read')).status).toBeLessThan(300);
    await streams.waitFor(3);

    const failing = await api.post('/messages', { to: { phone: '+14155550113' }, message: 'will fail' });
    const failingId = failing.body.data.message.id as string;
    await streams.waitFor(4);
    const failingSid = (await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: failingId } })).providerId;
    expect((await status(failingSid, 'undelivered', { errorCode: '30003', errorMessage: 'Unreachable destination handset' })).status).toBeLessThan(300);
    await streams.waitFor(5);
    await sleep(300);

    for (const received of [streams.sse, streams.ws]) {
      const shown = updates(received) as { id: string; status: string; failureReason: string | null; body: string | null }[];
      expect(shown.map((m) => [m.id, m.status])).toEqual([
        [id, 'sent'],
        [id, 'delivered'],
        [id, 'read'],
        [failingId, 'sent'],
        [failingId, 'failed'],
      ]);
      // The encrypted message's content is never shown.
      expect(shown.slice(0, 3).every((m) => m.body === null)).toBe(true);
      expect(shown[4]!.failureReason).toMatch(/^30003/);
    }
  });
});

describe('conversationUpdated(id)', () => {
  it('streams only the conversation it names; without id, every conversation of the channel', async () => {
    const ws = await twilioWorkspace(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    const first = await api.post('/messages', { to: { phone: '+14155550121' }, message: 'one' });
    const second = await api.post('/messages', { to: { phone: '+14155550122' }, message: 'two' });
    const a = first.body.data.message.conversationId as string;
    const b = second.body.data.message.conversationId as string;
    expect(a).not.toBe(b);

    const onlyA = await both(ws.host, ws.apiKey, CONVERSATION, { id: a.toUpperCase() });
    const all = await both(ws.host, ws.apiKey, CONVERSATION, {});
    // Each change is read before the next: an event shows its object as it stands when delivered.
    expect((await api.post('/messages', { to: { phone: '+14155550122' }, message: 'to b' })).status).toBe(202);
    await all.waitFor(1);
    expect((await api.post('/messages', { to: { phone: '+14155550121' }, message: 'to a' })).status).toBe(202);
    await all.waitFor(2);
    await onlyA.waitFor(1);
    expect((await api.post(`/conversations/${b}/close`, {})).status).toBeLessThan(300);
    await all.waitFor(3);
    expect((await api.post(`/conversations/${a}/close`, {})).status).toBeLessThan(300);
    await all.waitFor(4);
    await onlyA.waitFor(2);
    await sleep(300);
    const shown = (received: Received[]) => received.map((result) => (result.data as { conversationUpdated: { id: string; status: string } }).conversationUpdated);
    for (const received of [onlyA.sse, onlyA.ws]) expect(shown(received)).toEqual([{ id: a, status: 'open' }, { id: a, status: 'closed' }]);
    for (const received of [all.sse, all.ws]) expect(shown(received).map((c) => c.id)).toEqual([b, a, b, a]);
  });
});
