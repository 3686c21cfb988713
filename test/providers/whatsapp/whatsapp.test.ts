import { createHash } from 'node:crypto';
import http from 'node:http';
import { parse } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../../src/modules/delivery/delivery.worker.js';
import { createChannel } from '../../../src/modules/channels/channels.service.js';
import { createWebhook } from '../../../src/modules/webhooks/webhooks.service.js';
import { bearer } from '../../helpers/factories.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { restClient } from '../../helpers/rest.js';
import { serveOnPort } from '../../helpers/real-port.js';
import { testSealer } from '../../helpers/secrets.js';
import { subscribeSse } from '../../helpers/sse.js';
import { startReceiver } from '../../helpers/receiver.js';
import {
  WHATSAPP_SETTINGS,
  signedHeaders,
  startWhatsAppFake,
  statusUpdate,
  textMessage,
  webhookBody,
  whatsappWorkspace,
  type WhatsAppFake,
} from '../../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../../helpers/worker.js';
import { sleep, until } from '../../helpers/until.js';
import { expectCopiesStoredOnce } from '../inbound-scenarios.js';

/** docs/channels.md for WhatsApp Cloud API channels, against a local fake of the Graph API. */

let fake: WhatsAppFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;

beforeAll(async () => {
  fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  // A database of its own: the worker claims every due delivery and inbound event.
  app = await appOnOwnDatabase({ providers: testProviders({ settings: { WHATSAPP_API_URL: fake.url } }) });
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


function startWorker(): DeliveryWorker {
  const w = appWorker(app);
  cleanups.push(() => w.stop());
  w.start();
  return w;
}

async function setup() {
  const ws = await whatsappWorkspace(app.db.prisma);
  const api = restClient(app, ws.host, ws.apiKey);
  /** Posts a webhook body to the channel, signed with `secret` (the channel's app secret unless given). */
  const post = (body: string, options: { secret?: string; headers?: Record<string, string>; channelId?: string } = {}) =>
    app.fetch(ws.host, `/webhooks/whatsapp/${options.channelId ?? ws.channel.id}`, {
      method: 'POST',
      headers: { ...signedHeaders(body, options.secret ?? ws.settings.appSecret), ...options.headers },
      body,
    });
  /** A text from `phone` to the channel, as Meta posts it. */
  const inbound = (phone: string, text: string, options: { id?: string; at?: Date; name?: string } = {}) =>
    post(
      webhookBody([
        {
          phoneNumberId: ws.settings.phoneNumberId,
          contacts: [{ waId: phone.replace('+', ''), name: options.name ?? 'Ann Example' }],
          messages: [textMessage(phone, text, options)],
        },
      ]),
    );
  const messages = () => app.db.prisma.message.findMany({ where: { channelId: ws.channel.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const stored = () => app.db.prisma.inboundEvent.count({ where: { channelId: ws.channel.id } });
  return { ...ws, api, post, inbound, messages, stored };
}


describe('outbound', () => {
  it('a text inside the 24-hour window: exactly the Graph API request, its wamid stored, status sent', async () => {
    const s = await setup();
    startWorker();
    expect((await s.inbound('+31612345678', 'Hi there')).status).toBe(200);
    await until(async () => (await s.messages()).length === 1, 'the inbound message');
    const contactId = (await s.messages())[0]!.contactId;
    const before = fake.sent.length;
    const sent = await s.api.post('/messages', { to: contactId, message: 'Hello Ann' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const id = sent.body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status === 'sent', 'sent');
    const request = fake.sent.slice(before);
    expect(request).toEqual([
      {
        at: expect.any(Number),
        version: 'v21.0',
        phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId,
        authorization: `Bearer ${WHATSAPP_SETTINGS.accessToken}`,
        body: { messaging_product: 'whatsapp', recipient_type: 'individual', to: '31612345678', type: 'text', text: { body: 'Hello Ann', preview_url: false } },
      },
    ]);
    const ids = await app.db.prisma.providerMessageId.findMany({ where: { messageId: id } });
    expect(ids.map((row) => row.providerId)).toEqual([expect.stringMatching(/^wamid\./)]);
  });

  it('media links go as one more message each, after the text, typed by extension', async () => {
    const s = await setup();
    startWorker();
    await s.inbound('+31612345679', 'Send me the files');
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    const before = fake.sent.length;
    const urls = ['https://cdn.example.com/a.JPG', 'https://cdn.example.com/clip.mp4', 'https://cdn.example.com/voice.ogg', 'https://cdn.example.com/invoice.pdf?v=2'];
    const sent = await s.api.post('/messages', { to: contactId, message: 'Here', media_urls: urls });
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.data.message.id } })).status === 'sent');
    const bodies = fake.sent.slice(before).map((send) => send.body);
    expect(bodies.map((body) => body.type)).toEqual(['text', 'image', 'video', 'audio', 'document']);
    expect(bodies[1]).toEqual({ messaging_product: 'whatsapp', recipient_type: 'individual', to: '31612345679', type: 'image', image: { link: urls[0] } });
    expect(bodies[4].document).toEqual({ link: urls[3] });
    expect(await app.db.prisma.providerMessageId.count({ where: { messageId: sent.body.data.message.id } })).toBe(5);
  });

  it('a template goes outside the window, with its body parameters; a text there is a 422 on type', async () => {
    const s = await setup();
    await app.db.prisma.channelTemplate.create({
      data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'order_ready', language: 'en_US', body: 'Hi {{1}}, order {{2}} is ready.', parameterCount: 2 },
    });
    await app.db.prisma.channelTemplate.create({
      data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'hello_world', language: 'en_US', body: 'Hello world', parameterCount: 0 },
    });
    const before = await app.db.prisma.message.count({ where: { channelId: s.channel.id } });
    const refused = await s.api.post('/messages', { to: { phone: '+31612345680' }, message: 'Hello' });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      message: "Outside WhatsApp's 24-hour window only template messages can be sent.",
      errors: { type: ["Outside WhatsApp's 24-hour window only template messages can be sent."] },
    });
    // Nothing stored: not even the contact the details named.
    expect(await app.db.prisma.message.count({ where: { channelId: s.channel.id } })).toBe(before);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(0);

    startWorker();
    const start = fake.sent.length;
    const templated = await s.api.post('/messages', { to: { phone: '+31612345680' }, type: 'template', template: { name: 'order_ready', parameters: ['Ann', '42'] } });
    expect(templated.status).toBe(202);
    const bare = await s.api.post('/messages', { to: { phone: '+31612345680' }, type: 'template', template: { name: 'hello_world', parameters: [] } });
    expect(bare.status).toBe(202);
    await until(() => fake.sent.length === start + 2);
    // Two deliveries, sent side by side: in either order.
    const templates = fake.sent.slice(start).map((send) => send.body);
    templates.sort((a, b) => a.template.name.localeCompare(b.template.name));
    expect(templates).toEqual([
      { messaging_product: 'whatsapp', recipient_type: 'individual', to: '31612345680', type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } },
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '31612345680',
        type: 'template',
        template: { name: 'order_ready', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: '42' }] }] },
      },
    ]);
  });

  it('a recipient WhatsApp cannot reach is a 422 on the recipient field, and nothing is stored', async () => {
    const s = await setup();
    const emailOnly = await s.api.post('/contacts', { name: 'Mail Only', email: 'mail@example.com' });
    const group = await app.db.prisma.contact.create({ data: { workspaceId: s.workspace.id, name: 'A group', phone: '+31612345681', isGroup: true } });
    const before = await s.messages();
    const cases = [
      [{ to: emailOnly.body.data.contact.id, type: 'template', template: { name: 'x', parameters: [] } }, 'to', 'This channel sends through WhatsApp: the recipient needs a phone number.'],
      [{ contact: { email: 'new@example.com' }, message: 'hi' }, 'contact', 'This channel sends through WhatsApp: the recipient needs a phone number.'],
      [{ to: group.id, message: 'hi' }, 'to', 'This channel sends through WhatsApp, which cannot message a group contact.'],
    ] as const;
    await app.db.prisma.channelTemplate.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'x', language: 'en', body: 'x', parameterCount: 0 } });
    for (const [body, field, message] of cases) {
      const result = await s.api.post('/messages', body);
      expect(result.status, JSON.stringify(result.body)).toBe(422);
      expect(result.body.errors).toEqual({ [field]: [message] });
    }
    expect(await s.messages()).toEqual(before);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id, email: 'new@example.com' } })).toBe(0);
  });

  it('a contact whose phone is cleared after the 202 fails the message without a request to WhatsApp', async () => {
    const s = await setup();
    await s.inbound('+31612345684', 'hello');
    const first = startWorker();
    await until(async () => (await s.messages()).length === 1);
    await first.stop();
    const contactId = (await s.messages())[0]!.contactId;
    const accepted = await s.api.post('/messages', { to: contactId, message: 'nowhere to go' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const id = accepted.body.data.message.id as string;
    expect((await s.api.patch(`/contacts/${contactId}`, { email: 'phoneless@example.com', phone: null })).status).toBe(200);
    const before = fake.sent.length;
    startWorker();
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status === 'failed', 'failed');
    expect(fake.sent.length).toBe(before);
    const shown = (await s.api.get('/messages?limit=10')).body.data.find((m: { id: string }) => m.id === id);
    expect(shown).toMatchObject({ status: 'failed', failureReason: 'no_phone: The contact has no phone number to send the WhatsApp message to.' });
    expect(await app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } })).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('a stored phone goes in its E.164 form; one with no E.164 form is a 422 on the recipient', async () => {
    const s = await setup();
    await app.db.prisma.channelTemplate.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'ping', language: 'en', body: 'Ping', parameterCount: 0 } });
    // Rows as an older version or an import may have left them: written directly, phones not in E.164.
    const spaced = await app.db.prisma.contact.create({ data: { workspaceId: s.workspace.id, name: 'Spaced Phone', phone: '0031 6 1234 5720' } });
    const national = await app.db.prisma.contact.create({ data: { workspaceId: s.workspace.id, name: 'National Phone', phone: '06-12345721' } });
    const template = { type: 'template', template: { name: 'ping', parameters: [] } };
    const before = await s.messages();
    const refused = await s.api.post('/messages', { to: national.id, ...template });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    const message = 'This channel sends through WhatsApp: the recipient needs a phone number in international form (E.164).';
    expect(refused.body).toEqual({ message, errors: { to: [message] } });
    expect(await s.messages()).toEqual(before);

    startWorker();
    const start = fake.sent.length;
    const sent = await s.api.post('/messages', { to: spaced.id, ...template });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.data.message.id } })).status === 'sent', 'sent');
    expect(fake.sent.slice(start).map((send) => send.body.to)).toEqual(['31612345720']);
  });

  it('a 4xx fails the message at once with the provider’s error as failureReason; 429, 5xx and a dropped connection are retried', async () => {
    const s = await setup();
    await s.inbound('+31612345682', 'hello');
    const w = startWorker();
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;

    fake.failNext({ status: 400, body: { error: { message: '(#131026) Message Undeliverable.', type: 'OAuthException', code: 131026, error_data: { details: 'Receiver is incapable of receiving this message' } } } });
    const failed = await s.api.post('/messages', { to: contactId, message: 'will fail' });
    const failedId = failed.body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: failedId } })).status === 'failed', 'failed');
    const view = await s.api.get(`/messages?limit=10`);
    const shown = view.body.data.find((m: { id: string }) => m.id === failedId);
    expect(shown).toMatchObject({ status: 'failed', failureReason: '131026: (#131026) Message Undeliverable.: Receiver is incapable of receiving this message' });
    expect(await app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: failedId } })).toMatchObject({ status: 'failed', attempts: 1 });

    fake.failNext({ status: 429, body: { error: { message: 'Too many', code: 130429 } } }, { status: 503, body: {} }, 'drop');
    const before = fake.sent.length;
    const retried = await s.api.post('/messages', { to: contactId, message: 'eventually' });
    const retriedId = retried.body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: retriedId } })).status === 'sent', 'sent after retries');
    expect(fake.sent.length - before).toBe(4);
    // The 429 is a rate-limit answer: retried without counting an attempt (docs/broadcasts.md#rate-limit-answers).
    expect(await app.db.prisma.message.findUniqueOrThrow({ where: { id: retriedId } })).toMatchObject({ deliveryAttempts: 3, failureReason: null, lastError: null });
    await w.stop();
  });

  it('never sends a part twice: an attempt that failed after the text sends only the media left', async () => {
    const s = await setup();
    await s.inbound('+31612345683', 'hello');
    startWorker();
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    const before = fake.sent.length;
    // The text is taken, the first media part fails once: the retry sends the media, not the text.
    fake.failNext('take', { status: 500, body: {} });
    const sent = await s.api.post('/messages', { to: contactId, message: 'text first', media_urls: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.pdf'] });
    const id = sent.body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status === 'sent', 'sent');
    // text, image (500), then the retry: image, document. The text went once.
    expect(fake.sent.slice(before).map((send) => send.body.type)).toEqual(['text', 'image', 'image', 'document']);
    expect(await app.db.prisma.providerMessageId.count({ where: { messageId: id } })).toBe(3);
  });

  it('a 2xx whose body is cut off, not JSON or without an id is sent: never retried, no provider id, logged (docs/operating-safely.md, Staying up)', async () => {
    const s = await setup();
    await s.inbound('+31612345699', 'hello');
    startWorker();
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    const cases = [
      { answer: { status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.cut' }] }, cutAfter: 12 }, why: 'a cut-off answer' },
      { answer: { status: 200, body: '<html>OK</html>', raw: true }, why: 'an answer that is not JSON' },
      { answer: { status: 201, body: { messaging_product: 'whatsapp' } }, why: 'no message id' },
    ];
    for (const { answer, why } of cases) {
      const before = fake.sent.length;
      fake.failNext(answer);
      const sent = await s.api.post('/messages', { to: contactId, message: `answered with ${why}`, media_urls: ['https://cdn.example.com/a.png'] });
      const id = sent.body.data.message.id as string;
      await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status === 'sent', why);
      await sleep(200);
      // The text once (its answer unreadable), then the image: nothing sent again.
      expect(fake.sent.slice(before).map((send) => send.body.type), why).toEqual(['text', 'image']);
      expect(await app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } }), why).toMatchObject({ status: 'succeeded', attempts: 1 });
      const parts = await app.db.prisma.providerMessageId.findMany({ where: { messageId: id }, orderBy: { part: 'asc' } });
      expect(parts.map((part) => part.providerId), why).toEqual([`unidentified:${id}:0`, expect.stringMatching(/^wamid\./)]);
      const warned = app.logs.map((line) => JSON.parse(line)).find((line) => line.msg === 'delivered with a warning' && line.messageId === id);
      expect(warned?.warning, why).toBe(`part 0: WhatsApp answered HTTP ${answer.status} with ${why}: sent, but its statuses cannot be matched`);
    }
  });

  it('a provider error that echoes the access token is stored, shown, emitted and logged without it (docs/operating-safely.md, Staying up)', async () => {
    const s = await setup();
    await s.inbound('+31612345698', 'hello');
    startWorker();
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    // The receiver is never reached (port 9): only the stored event rows are looked at.
    await createWebhook(app.db.prisma, { workspaceId: s.workspace.id, url: 'http://127.0.0.1:9/hook', events: ['message.status_changed'] }, testSealer);
    const token = WHATSAPP_SETTINGS.accessToken;
    const echo = `Invalid parameter: Bearer ${token} (token ${encodeURIComponent(token)})`;
    fake.failNext({ status: 503, body: { error: { message: `retry later, ${token}`, code: 2 } } }, { status: 400, body: { error: { message: echo, code: 100, error_data: { details: `got ${token}` } } } });
    const sent = await s.api.post('/messages', { to: contactId, message: 'echoed' });
    const id = sent.body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status === 'failed', 'failed');
    const view = (await s.api.get('/messages?limit=20')).body.data.find((m: { id: string }) => m.id === id);
    expect(view.failureReason).toBe('100: Invalid parameter: Bearer *** (token ***): got ***');
    const stored = await app.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(stored.failureReason).toBe(view.failureReason);
    const events = await app.db.prisma.delivery.findMany({ where: { workspaceId: s.workspace.id, eventType: 'message.status_changed' } });
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events.map((event) => event.payload))).toContain('Bearer ***');
    // Retried first: the retry's reason was kept and logged without it too.
    const lines = app.logs.filter((line) => line.includes(id));
    expect(lines.some((line) => line.includes('retry later, ***'))).toBe(true);
    expect(JSON.stringify({ events, lines, stored })).not.toContain(token);

    // A failed status whose text echoes the token: stored without it.
    const ok = await s.api.post('/messages', { to: contactId, message: 'then a status' });
    const okId = ok.body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: okId } })).status === 'sent', 'sent');
    const { providerId: wamid } = await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: okId } });
    const failed = statusUpdate(wamid, 'failed', { error: { code: 131000, title: `Something went wrong with ${token}` } });
    expect((await s.post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, statuses: [failed] }]))).status).toBe(200);
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: okId } })).status === 'failed', 'the failed status');
    expect((await app.db.prisma.message.findUniqueOrThrow({ where: { id: okId } })).failureReason).toBe('131000: Something went wrong with ***');
  });
});

describe('a message sent in parts', () => {
  it('keeps its remaining parts when a provider status lands between attempts: the retry sends them exactly once', async () => {
    const s = await setup();
    await s.inbound('+31612345684', 'hello');
    // Backoff long enough that the retry waits for the status below; it is then made due by hand.
    const w = appWorker(app, { backoffMs: 60_000 });
    cleanups.push(() => w.stop());
    w.start();
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    const before = fake.sent.length;
    fake.failNext('take', { status: 500, body: {} });
    const sent = await s.api.post('/messages', { to: contactId, message: 'text first', media_urls: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.pdf'] });
    const id = sent.body.data.message.id as string;
    const delivery = async () => app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } });
    await until(async () => (await delivery()).lastError !== null, 'the failed second part');
    expect((await delivery()).status).toBe('pending');
    const [first] = await app.db.prisma.providerMessageId.findMany({ where: { messageId: id } });
    // WhatsApp reports the text delivered before the retry.
    expect((await s.post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, statuses: [statusUpdate(first!.providerId, 'delivered')] }]))).status).toBe(200);
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status === 'delivered', 'delivered');
    await app.db.prisma.delivery.update({ where: { id: (await delivery()).id }, data: { runAt: new Date() } });
    w.nudge();
    await until(async () => (await delivery()).status === 'succeeded', 'the retry');
    expect(fake.sent.slice(before).map((send) => send.body.type)).toEqual(['text', 'image', 'image', 'document']);
    expect(await app.db.prisma.providerMessageId.count({ where: { messageId: id } })).toBe(3);
    // The provider's status stands: the retry's outcome does not move it back.
    expect((await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status).toBe('delivered');
  });
});

describe('a message in parts across workers', () => {
  const partsOf = (before: number) => fake.sent.slice(before).map((send) => send.body.type as string);

  it('each recorded part renews the lease: parts that together outlast one lease are sent once, by one worker', async () => {
    const s = await setup();
    await s.inbound('+31612345685', 'hello');
    const first = appWorker(app, { leaseMs: 1500, id: 'renewing-worker' });
    const second = appWorker(app, { leaseMs: 1500, id: 'waiting-worker' });
    cleanups.push(() => first.stop(), () => second.stop());
    first.start();
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    second.start();
    const before = fake.sent.length;
    // Each part takes 900 ms: 2.7 s in all, well past one lease of 1.5 s.
    let n = 0;
    const slow = (): { status: number; body: unknown; delayMs: number } => ({ status: 200, body: { messages: [{ id: `wamid.renew.${n++}` }] }, delayMs: 900 });
    fake.failNext(slow(), slow(), slow());
    const sent = await s.api.post('/messages', { to: contactId, message: 'slow parts', media_urls: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.pdf'] });
    const id = sent.body.data.message.id as string;
    await until(async () => (await app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } })).status === 'succeeded', 'sent', 15_000);
    expect(partsOf(before)).toEqual(['text', 'image', 'document']);
    expect((await app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } })).attempts).toBe(1);
    expect(await app.db.prisma.providerMessageId.count({ where: { messageId: id } })).toBe(3);
  });

  it('a worker whose lease was taken over stops sending parts: the new owner sends the rest, each once', async () => {
    const s = await setup();
    await s.inbound('+31612345686', 'hello');
    const slow = appWorker(app, { leaseMs: 300, id: 'lease-losing-worker' });
    cleanups.push(() => slow.stop());
    slow.start();
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    const before = fake.sent.length;
    // The text is taken at once; the image is answered long after the lease of 300 ms ran out.
    fake.failNext('take', { status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.late-image' }] }, delayMs: 1500 });
    const sent = await s.api.post('/messages', { to: contactId, message: 'text first', media_urls: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.pdf'] });
    const id = sent.body.data.message.id as string;
    await until(() => partsOf(before).length === 2, 'the slow image');
    const other = appWorker(app, { leaseMs: 5000, id: 'lease-taking-worker' });
    cleanups.push(() => other.stop());
    other.start();
    await until(async () => (await app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } })).status === 'succeeded', 'taken over and sent');
    // The first worker's late answer comes in, finds its lease gone, and stops there.
    await slow.stop();
    await sleep(200);
    // The image went twice (the first answer came too late to be known); the text and the document once.
    expect(partsOf(before)).toEqual(['text', 'image', 'image', 'document']);
    const parts = await app.db.prisma.providerMessageId.findMany({ where: { messageId: id }, orderBy: { part: 'asc' } });
    expect(parts.map((part) => part.part)).toEqual([0, 1, 2]);
    expect(parts.map((part) => part.providerId)).not.toContain('wamid.late-image');
  });
});

describe('the verify handshake', () => {
  it('answers the challenge for the channel’s verify token, 403 otherwise, 404 for no such channel', async () => {
    const s = await setup();
    const verify = (query: string, channelId = s.channel.id) => app.fetch(s.host, `/webhooks/whatsapp/${channelId}?${query}`);
    const ok = await verify(`hub.mode=subscribe&hub.verify_token=${WHATSAPP_SETTINGS.verifyToken}&hub.challenge=1158201444`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await ok.text()).toBe('1158201444');
    expect((await verify('hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1')).status).toBe(403);
    // Compared whole, whatever the length: a prefix, a longer token, one of the same length.
    const token = WHATSAPP_SETTINGS.verifyToken;
    for (const near of [token.slice(0, -1), `${token}x`, `${token.slice(0, -1)}X`, encodeURIComponent(`${token}é`)]) {
      expect((await verify(`hub.mode=subscribe&hub.verify_token=${near}&hub.challenge=1`)).status, near).toBe(403);
    }
    expect((await verify(`hub.mode=unsubscribe&hub.verify_token=${WHATSAPP_SETTINGS.verifyToken}&hub.challenge=1`)).status).toBe(403);
    expect((await verify('hub.challenge=1')).status).toBe(403);
    expect((await verify(`hub.mode=subscribe&hub.verify_token=${WHATSAPP_SETTINGS.verifyToken}&hub.challenge=1`, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await verify('hub.mode=subscribe', 'not-a-uuid')).status).toBe(404);
  });
});

describe('inbound webhooks refused', () => {
  it('each with its status, storing nothing and logging nothing of the body', async () => {
    const s = await setup();
    const marker = `SECRET-BODY-${Date.now()}`;
    const body = webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, messages: [textMessage('+31612345690', marker)] }]);
    const other = await app.db.prisma.channel.create({ data: { workspaceId: s.workspace.id, name: 'Plain', type: 'whatsapp' } });
    const inactive = await whatsappWorkspace(app.db.prisma);
    await app.db.prisma.channel.update({ where: { id: inactive.channel.id }, data: { status: 'inactive' } });
    const cases: [string, Promise<Response>, number][] = [
      ['no signature', s.post(body, { headers: { 'x-hub-signature-256': '' } }), 401],
      ['a malformed signature', s.post(body, { headers: { 'x-hub-signature-256': 'sha1=abc' } }), 401],
      ['a forged signature', s.post(body, { secret: 'not-the-app-secret' }), 401],
      ['a signature of other bytes', s.post(`${body} `, { headers: { 'x-hub-signature-256': signedHeaders(body, WHATSAPP_SETTINGS.appSecret)['x-hub-signature-256']! } }), 401],
      ['an unknown channel', s.post(body, { channelId: '00000000-0000-4000-8000-000000000000' }), 404],
      ['a channel of another provider', s.post(body, { channelId: other.id }), 404],
      ['an inactive channel', s.post(body, { channelId: inactive.channel.id, secret: inactive.settings.appSecret }), 404],
      ['a body over 1 MiB', s.post(JSON.stringify({ entry: [], pad: 'x'.repeat(1024 * 1024) })), 413],
      // Refused for its size before its signature is checked: a forged body over the limit sees 413 too.
      ['a forged body over 1 MiB', s.post(JSON.stringify({ entry: [], pad: 'x'.repeat(1024 * 1024) }), { secret: 'not-the-app-secret' }), 413],
      ['a signed body that is not JSON', s.post(`{${marker}`), 400],
      ['a signed body that is a JSON array', s.post('[]'), 400],
    ];
    for (const [what, response, status] of cases) {
      const answer = await response;
      expect(answer.status, what).toBe(status);
      await answer.body?.cancel();
    }
    expect(await s.stored()).toBe(0);
    expect(await app.db.prisma.inboundEvent.count({ where: { channelId: { in: [other.id, inactive.channel.id] } } })).toBe(0);
    expect(app.logs.join('\n')).not.toContain(marker);
    expect(app.logs.filter((line) => line.includes('inbound webhook refused')).length).toBeGreaterThanOrEqual(cases.length);
  });
});

describe('inbound messages', () => {
  it('store the event before 200, then a received message from a new contact on a new conversation, heard by messageAdded', async () => {
    const s = await setup();
    const r = await startReceiver();
    cleanups.push(r.close);
    await createWebhook(app.db.prisma, { workspaceId: s.workspace.id, url: r.url, events: ['message.created', 'contact.created'] }, testSealer);
    const stream = await subscribeSse((path, init) => app.fetch(s.host, path, init), bearer(s.apiKey), parse('subscription { messageAdded { id direction status body sender { type id name } } }') as never);
    cleanups.push(() => stream.close());

    const at = new Date(Date.now() - 60_000);
    at.setMilliseconds(0);
    const answer = await s.inbound('+31612345691', 'Hello from WhatsApp', { at, name: 'Ann Example', id: 'wamid.inbound-1' });
    expect(answer.status).toBe(200);
    // Stored before the answer, with the delivery that processes it: nothing runs yet.
    expect(await s.stored()).toBe(1);
    expect(await s.messages()).toEqual([]);

    startWorker();
    await until(async () => (await s.messages()).length === 1, 'processed');
    const [message] = await s.messages();
    const contact = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: message!.contactId }, include: { channels: true } });
    expect(contact).toMatchObject({ name: 'Ann Example', phone: '+31612345691' });
    expect(contact.channels.map((link) => link.channelId)).toEqual([s.channel.id]);
    const view = (await s.api.get(`/messages?conversation_id=${message!.conversationId}`)).body.data[0];
    expect(view).toEqual({
      id: message!.id,
      conversationId: message!.conversationId,
      contactId: contact.id,
      channelId: s.channel.id,
      direction: 'inbound',
      type: 'text',
      body: 'Hello from WhatsApp',
      isEncrypted: false,
      status: 'received',
      failureReason: null,
      sender: { type: 'contact', id: contact.id, name: 'Ann Example' },
      silent: false,
      mediaUrls: [],
      media: [],
      broadcastId: null,
      // WhatsApp's second, at its last millisecond: the webhook came a minute later.
      createdAt: new Date(at.getTime() + 999).toISOString(),
    });
    expect((await s.api.get('/messages?search=whatsapp')).body.data.map((m: { id: string }) => m.id)).toEqual([message!.id]);
    const conversation = (await s.api.get(`/conversations/${message!.conversationId}`)).body.data.conversation;
    expect(conversation).toMatchObject({ status: 'open', lastMessageAt: new Date(at.getTime() + 999).toISOString(), stateChanges: [{ type: 'opened', actor: { type: 'contact', id: contact.id, name: 'Ann Example' } }] });

    await stream.waitFor(1);
    expect(stream.received[0]!.data).toEqual({ messageAdded: { id: message!.id, direction: 'inbound', status: 'received', body: 'Hello from WhatsApp', sender: { type: 'contact', id: contact.id, name: 'Ann Example' } } });
    await until(() => r.received.length >= 2, 'events');
    expect(r.received.map((request) => JSON.parse(request.body).type).sort()).toEqual(['contact.created', 'message.created']);
    expect(app.logs.join('\n')).not.toContain('Hello from WhatsApp');
  });

  it('a reply stamped with the second of the gateway’s own message comes after it: the provider’s second, to the millisecond by its receipt', async () => {
    const s = await setup();
    startWorker();
    await s.inbound('+31612345693', 'Is my order on its way?');
    await until(async () => (await s.messages()).length === 1, 'the first message');
    const [first] = await s.messages();
    // Early in a second, so that the agent's message and the reply share it.
    while (new Date().getMilliseconds() > 600) await sleep(20);
    const sent = await s.api.post('/messages', { to: first!.contactId, message: 'It is: tomorrow morning' });
    expect(sent.status).toBe(202);
    const outbound = sent.body.data.message as { id: string; createdAt: string };
    const at = new Date(outbound.createdAt);
    expect((await s.inbound('+31612345693', 'Thank you!', { at, id: 'wamid.same-second' })).status).toBe(200);
    await until(async () => (await s.messages()).length === 3, 'the reply');

    const reply = (await s.messages()).find((message) => message.body === 'Thank you!')!;
    // WhatsApp's whole second, made precise by when the webhook arrived: after the agent's message.
    expect(reply.createdAt.toISOString().slice(0, 19)).toBe(outbound.createdAt.slice(0, 19));
    expect(reply.createdAt.getTime()).toBeGreaterThan(at.getTime());
    const conversation = (await s.api.get(`/conversations/${first!.conversationId}`)).body.data.conversation;
    expect(conversation.lastMessage).toMatchObject({ id: reply.id, body: 'Thank you!' });
    expect(conversation.lastMessageAt).toBe(reply.createdAt.toISOString());
    const thread = (await s.api.get(`/messages?conversation_id=${first!.conversationId}`)).body.data as { body: string }[];
    expect(thread.map((message) => message.body)).toEqual(expect.arrayContaining(['It is: tomorrow morning', 'Thank you!']));

    // Read through the agent's message: the reply stays unread.
    const read = await s.api.post(`/conversations/${first!.conversationId}/read`, { through: outbound.id });
    expect(read.status).toBe(200);
    expect(read.body.data.conversation.unreadCount).toBe(1);
  });

  it('process every entry, change, message and status of one webhook', async () => {
    const s = await setup();
    startWorker();
    await s.inbound('+31612345692', 'first');
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    const sent = await s.api.post('/messages', { to: contactId, message: 'out' });
    const outId = sent.body.data.message.id as string;
    await until(async () => (await app.db.prisma.providerMessageId.count({ where: { messageId: outId } })) === 1);
    const wamid = (await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: outId } })).providerId;
    const number = WHATSAPP_SETTINGS.phoneNumberId;
    const body = webhookBody(
      [
        { phoneNumberId: number, messages: [textMessage('+31612345692', 'second'), textMessage('+31612345693', 'from Bo')], contacts: [{ waId: '31612345693', name: 'Bo' }] },
        { phoneNumberId: number, statuses: [statusUpdate(wamid, 'delivered')] },
      ],
      [{ phoneNumberId: number, messages: [textMessage('+31612345692', 'third')], statuses: [statusUpdate(wamid, 'read')] }],
    );
    expect((await s.post(body)).status).toBe(200);
    await until(async () => (await s.messages()).filter((m) => m.direction === 'inbound').length === 4, 'all four inbound');
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: outId } })).status === 'read', 'read');
    const inbound = (await s.messages()).filter((m) => m.direction === 'inbound').map((m) => m.body).sort();
    expect(inbound).toEqual(['first', 'from Bo', 'second', 'third']);
  });

  it('are stored once however many copies arrive, one after another or at once', async () => {
    const s = await setup();
    const body = webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, contacts: [{ waId: '31612345694', name: 'Dup' }], messages: [textMessage('+31612345694', 'only once', { id: 'wamid.dup' })] }]);
    await expectCopiesStoredOnce(app, {
      workspaceId: s.workspace.id,
      channelId: s.channel.id,
      postCopy: () => s.post(body),
      stored: s.stored,
      pendingInbound: () => app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: 'pending' } }),
      messages: s.messages,
      startWorker,
    }, 'only once');
  });

  it('reopen the contact’s closed conversation, the contact as actor, with conversation.reopened', async () => {
    const s = await setup();
    startWorker();
    await s.inbound('+31612345695', 'one');
    await until(async () => (await s.messages()).length === 1);
    const conversationId = (await s.messages())[0]!.conversationId;
    expect((await s.api.post(`/conversations/${conversationId}/close`)).status).toBe(200);
    await s.inbound('+31612345695', 'two', { name: 'Ann Again' });
    await until(async () => (await s.messages()).length === 2);
    const conversation = (await s.api.get(`/conversations/${conversationId}`)).body.data.conversation;
    expect(conversation.status).toBe('open');
    expect(conversation.stateChanges.map((change: { type: string; actor: { type: string } }) => [change.type, change.actor.type])).toEqual([
      ['opened', 'contact'],
      ['closed', 'channel'],
      ['reopened', 'contact'],
    ]);
    expect((await s.messages()).map((m) => m.conversationId)).toEqual([conversationId, conversationId]);
  });

  it('whatever text they carry are stored, never a failed event: NUL and lone surrogates as U+FFFD, long bodies, ids and names cut', async () => {
    const s = await setup();
    startWorker();
    const at = String(Math.floor(Date.now() / 1000));
    const image = (id: string, extra: Record<string, unknown>) => ({ from: '31612345730', id, timestamp: at, type: 'image', image: { id: 'media-x', mime_type: 'image/png', ...extra } });
    // 65 535 letters then an emoji (two UTF-16 units) across the 65 536th character, then more.
    const long = `${'a'.repeat(65_535)}😀${'b'.repeat(5000)}`;
    const longId = `wamid.${'x'.repeat(400)}`;
    const body = webhookBody([
      {
        phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId,
        contacts: [{ waId: '31612345730', name: 'Nul\u0000Name \ud800' }, { waId: '31612345731', name: 'N'.repeat(300) }],
        messages: [
          textMessage('+31612345730', 'nul \u0000 here, lone \ud800 and \udc00 there, a pair 😀 kept', { id: 'wamid.text-nul' }),
          textMessage('+31612345731', long, { id: longId }),
          image('wamid.caption', { caption: 'cap\u0000tion', filename: 'f\u0000\udbff.png' }),
        ],
      },
    ]);
    expect((await s.post(body)).status).toBe(200);
    await until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: { not: 'succeeded' } } })) === 0, 'processed');
    const events = await app.db.prisma.delivery.findMany({ where: { inboundEvent: { channelId: s.channel.id } } });
    expect(events.map((d) => [d.status, d.attempts, d.lastError])).toEqual([['succeeded', 1, null]]);
    const stored = await app.db.prisma.message.findMany({ where: { channelId: s.channel.id }, include: { contact: true }, orderBy: { createdAt: 'asc' } });
    const byBody = (start: string) => stored.find((m) => m.body.startsWith(start))!;
    expect(byBody('nul').body).toBe('nul \ufffd here, lone \ufffd and \ufffd there, a pair 😀 kept');
    expect(byBody('nul').contact.name).toBe('Nul\ufffdName \ufffd');
    const cut = byBody('aaa');
    expect(Array.from(cut.body)).toHaveLength(65_536);
    expect(cut.body.endsWith('a😀')).toBe(true);
    expect(cut.contact.name).toBe('N'.repeat(255));
    expect(byBody('cap').body).toBe('cap\ufffdtion');
    expect(byBody('cap').media).toEqual([{ index: 0, contentType: 'image/png', filename: 'f\ufffd\ufffd.png', ref: 'media-x' }]);
    // A provider id longer than its column is kept as its SHA-256: a repeat of it is still a duplicate.
    const hashed = createHash('sha256').update(longId).digest('hex');
    expect((await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: cut.id } })).providerId).toBe(hashed);
    expect((await s.post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, messages: [textMessage('+31612345731', 'again', { id: longId })] }]))).status).toBe(200);
    await until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: { not: 'succeeded' } } })) === 0, 'repeat processed');
    expect(await app.db.prisma.message.count({ where: { channelId: s.channel.id } })).toBe(3);
  });

  it('a message type the gateway does not know is kept with a placeholder, never dropped', async () => {
    const s = await setup();
    startWorker();
    const message = { from: '31612345696', id: 'wamid.odd', timestamp: String(Math.floor(Date.now() / 1000)), type: 'ephemeral_order', ephemeral_order: { anything: true } };
    expect((await s.post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, messages: [message] }]))).status).toBe(200);
    await until(async () => (await s.messages()).length === 1);
    expect((await s.messages())[0]!.body).toBe('[Unsupported WhatsApp message type: ephemeral_order]');
  });
});

describe('one app, several numbers', () => {
  it('events for another number go to the workspace’s channel of that number only when it has the same app secret', async () => {
    const s = await setup();
    const sibling = (name: string, phoneNumberId: string, appSecret: string) =>
      createChannel(
        app.db.prisma,
        {
          workspaceId: s.workspace.id,
          name,
          type: 'whatsapp',
          provider: { provider: 'whatsapp_cloud', settings: { phoneNumberId }, secrets: { accessToken: WHATSAPP_SETTINGS.accessToken, appSecret, verifyToken: 'v' } },
        },
        testSealer,
      );
    const sameApp = (await sibling('Second number', '109876543211', WHATSAPP_SETTINGS.appSecret)).channel;
    const otherApp = (await sibling('Other app', '109876543212', 'another-app-secret-0123456789')).channel;
    startWorker();
    // One webhook signed with the receiving channel's app secret, carrying events for three other numbers.
    const body = webhookBody([
      { phoneNumberId: '109876543211', messages: [textMessage('+31612345710', 'for the second number')] },
      { phoneNumberId: '109876543212', messages: [textMessage('+31612345711', 'claims to be for the other app')] },
      { phoneNumberId: '109876543219', messages: [textMessage('+31612345712', 'for no number here')] },
      { phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, messages: [textMessage('+31612345713', 'for the receiving number')] },
    ]);
    expect((await s.post(body)).status).toBe(200);
    await until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: { not: 'succeeded' } } })) === 0, 'processed');
    const bodiesOf = async (channelId: string) => (await app.db.prisma.message.findMany({ where: { channelId } })).map((m) => m.body);
    expect(await bodiesOf(s.channel.id)).toEqual(['for the receiving number']);
    expect(await bodiesOf(sameApp.id)).toEqual(['for the second number']);
    expect(await bodiesOf(otherApp.id)).toEqual([]);
    expect(await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } })).toBe(2);
  });
});

describe('statuses', () => {
  async function sentMessage(s: Awaited<ReturnType<typeof setup>>, phone: string) {
    await s.inbound(phone, 'hi');
    await until(async () => (await s.messages()).some((m) => m.direction === 'inbound'));
    const contactId = (await s.messages()).find((m) => m.direction === 'inbound')!.contactId;
    const id = (await s.api.post('/messages', { to: contactId, message: 'out' })).body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status === 'sent');
    const wamid = (await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: id } })).providerId;
    return { id, wamid };
  }
  const statusOf = async (id: string) => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status;
  const send = (s: Awaited<ReturnType<typeof setup>>, ...statuses: ReturnType<typeof statusUpdate>[]) =>
    s.post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, statuses }]));

  it('move forward only, each change an event; failed applies before delivery only', async () => {
    const s = await setup();
    startWorker();
    const r = await startReceiver();
    cleanups.push(r.close);
    await createWebhook(app.db.prisma, { workspaceId: s.workspace.id, url: r.url, events: ['message.status_changed'] }, testSealer);
    const { id, wamid } = await sentMessage(s, '+31612345697');
    await send(s, statusUpdate(wamid, 'read'));
    await until(async () => (await statusOf(id)) === 'read');
    // Older than what the message has: nothing changes.
    await send(s, statusUpdate(wamid, 'delivered'), statusUpdate(wamid, 'sent'), statusUpdate(wamid, 'failed', { error: { code: 131047, title: 'Re-engagement message' } }));
    await until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: 'pending' } })) === 0);
    expect(await statusOf(id)).toBe('read');
    await until(() => r.received.length >= 2);
    await sleep(100);
    const changes = r.received.map((request) => JSON.parse(request.body)).filter((event) => event.data.id === id);
    // The worker's own sent, then read; none for the stale ones.
    expect(changes.map((event) => event.data.status)).toEqual(['sent', 'read']);

    const second = await sentMessage(s, '+31612345697');
    await send(s, statusUpdate(second.wamid, 'failed', { error: { code: 131047, title: 'Re-engagement message', details: 'More than 24 hours have passed' } }));
    await until(async () => (await statusOf(second.id)) === 'failed');
    const failed = await app.db.prisma.message.findUniqueOrThrow({ where: { id: second.id } });
    expect(failed.failureReason).toBe('131047: Re-engagement message: More than 24 hours have passed');
    await send(s, statusUpdate(second.wamid, 'delivered'));
    await sleep(300);
    expect(await statusOf(second.id)).toBe('failed');
  });

  it('a status ahead of its send is retried until the id is stored; after 10 minutes it is dropped', async () => {
    const s = await setup();
    startWorker();
    await s.inbound('+31612345698', 'hi');
    await until(async () => (await s.messages()).length === 1);
    const contactId = (await s.messages())[0]!.contactId;
    const id = (await s.api.post('/messages', { to: contactId, message: 'out' })).body.data.message.id as string;
    await until(async () => (await statusOf(id)) === 'sent');
    // A status for an id nobody stored yet: retried, not dropped.
    await send(s, statusUpdate('wamid.later', 'delivered'));
    await until(async () => (await app.db.prisma.delivery.findFirst({ where: { inboundEvent: { channelId: s.channel.id, body: { not: undefined } }, attempts: { gte: 2 } } })) !== null, 'retried');
    await app.db.prisma.providerMessageId.create({ data: { channelId: s.channel.id, providerId: 'wamid.later', messageId: id, part: 1 } });
    await until(async () => (await statusOf(id)) === 'delivered', 'applied once stored');

    await send(s, statusUpdate('wamid.never', 'read'));
    const event = await app.db.prisma.inboundEvent.findFirstOrThrow({ where: { channelId: s.channel.id }, orderBy: { receivedAt: 'desc' } });
    await app.db.prisma.inboundEvent.update({ where: { id: event.id }, data: { receivedAt: new Date(Date.now() - 11 * 60_000) } });
    await until(async () => (await app.db.prisma.delivery.findFirstOrThrow({ where: { inboundEventId: event.id } })).status === 'succeeded', 'dropped after 10 minutes');
  });

  it('a status for another channel’s message is ignored', async () => {
    const s = await setup();
    const other = await setup();
    startWorker();
    const { id, wamid } = await sentMessage(other, '+31612345699');
    await send(s, statusUpdate(wamid, 'read'));
    await until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: 'pending' } })) === 0);
    expect(await statusOf(id)).toBe('sent');
  });
});

describe('inbound media', () => {
  it('is listed in the view and streamed from WhatsApp with the channel’s token; a provider error is 502', async () => {
    const s = await setup();
    startWorker();
    const bytes = Buffer.from('\x89PNG fake image bytes');
    fake.addMedia('media-1', bytes, 'image/png');
    const image = { from: '31612345700', id: 'wamid.img', timestamp: String(Math.floor(Date.now() / 1000)), type: 'image', image: { id: 'media-1', mime_type: 'image/png', caption: 'Look' } };
    const doc = { from: '31612345700', id: 'wamid.doc', timestamp: String(Math.floor(Date.now() / 1000)), type: 'document', document: { id: 'media-missing', mime_type: 'application/pdf', filename: 'quote.pdf' } };
    await s.post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, messages: [image, doc] }]));
    await until(async () => (await s.messages()).length === 2);
    const [first, second] = await s.messages();
    const view = (await s.api.get(`/messages?conversation_id=${first!.conversationId}`)).body.data.find((m: { id: string }) => m.id === first!.id);
    expect(view).toMatchObject({ body: 'Look', media: [{ index: 0, contentType: 'image/png', filename: null }] });
    expect(JSON.stringify(view)).not.toContain('media-1');

    const file = await app.fetch(s.host, `/api/connect/messages/${first!.id}/media/0`, { headers: bearer(s.apiKey) });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(bytes);

    const missing = await app.fetch(s.host, `/api/connect/messages/${second!.id}/media/0`, { headers: bearer(s.apiKey) });
    expect(missing.status).toBe(502);
    expect(await missing.json()).toEqual({ status: 'error', message: "The channel's provider could not hand the file over: the provider answered HTTP 400." });
    expect((await app.fetch(s.host, `/api/connect/messages/${first!.id}/media/1`, { headers: bearer(s.apiKey) })).status).toBe(404);
    expect((await app.fetch(s.host, `/api/connect/messages/${first!.id}/media/x`, { headers: bearer(s.apiKey) })).status).toBe(404);
    const other = await setup();
    expect((await app.fetch(other.host, `/api/connect/messages/${first!.id}/media/0`, { headers: bearer(other.apiKey) })).status).toBe(404);
  });
});

describe('inbound media over 16 MiB', () => {
  const MIB = 1024 * 1024;
  async function mediaMessage(s: Awaited<ReturnType<typeof setup>>, mediaId: string) {
    const image = { from: '31612345740', id: `wamid.${mediaId}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'document', document: { id: mediaId, mime_type: 'application/pdf' } };
    await s.post(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, messages: [image] }]));
    await until(async () => (await s.messages()).some((m) => m.body === '' && (m.media as { ref: string }[])[0]?.ref === mediaId));
    return (await s.messages()).find((m) => (m.media as { ref: string }[])[0]?.ref === mediaId)!.id;
  }
  /** GET over a real connection: the status, the Content-Length, the bytes that came, and whether the answer ended whole. */
  function download(port: number, host: string, path: string, apiKey: string) {
    return new Promise<{ status: number; length: string | undefined; bytes: number; whole: boolean }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path, headers: { host, authorization: `Bearer ${apiKey}` } }, (res) => {
        let bytes = 0;
        let whole = false;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => (whole = res.complete));
        res.on('error', () => {});
        res.on('close', () => resolve({ status: res.statusCode!, length: res.headers['content-length'], bytes, whole }));
      });
      req.on('error', reject);
    });
  }

  it('declared larger (file_size or Content-Length): 502 before any byte; undeclared: cut off at 16 MiB, the answer ended unfinished', async () => {
    const s = await setup();
    startWorker();
    fake.addMedia('big-declared', Buffer.alloc(16 * MIB + 1, 1), 'application/pdf');
    fake.addMedia('big-undeclared', Buffer.alloc(17 * MIB, 2), 'application/pdf', { undeclared: true });
    fake.addMedia('fits-undeclared', Buffer.alloc(16 * MIB, 3), 'application/pdf', { undeclared: true });
    const served = await serveOnPort(app.db, app.env, { providers: app.providers });
    cleanups.push(() => served.close());
    const get = async (mediaId: string) => download(served.port, s.host, `/api/connect/messages/${await mediaMessage(s, mediaId)}/media/0`, s.apiKey);

    const declared = await app.fetch(s.host, `/api/connect/messages/${await mediaMessage(s, 'big-declared')}/media/0`, { headers: bearer(s.apiKey) });
    expect(declared.status).toBe(502);
    expect(await declared.json()).toEqual({ status: 'error', message: `The channel's provider could not hand the file over: the media is larger than ${16 * MIB} bytes.` });

    // No size given: the answer starts (200, no Content-Length) and is cut off at 16 MiB, the connection ended unfinished.
    const undeclared = await get('big-undeclared');
    expect(undeclared).toMatchObject({ status: 200, length: undefined, whole: false });
    expect(undeclared.bytes).toBeLessThanOrEqual(16 * MIB);
    expect(undeclared.bytes).toBeGreaterThan(15 * MIB);

    expect(await get('fits-undeclared')).toEqual({ status: 200, length: undefined, bytes: 16 * MIB, whole: true });
  }, 30_000);
});

describe('secrets at rest', () => {
  it('the channel’s credentials are stored sealed, never in clear', async () => {
    const s = await setup();
    const [row] = await app.db.prisma.$queryRaw<{ row: string }[]>`SELECT row_to_json(c)::text AS row FROM channels c WHERE id = ${s.channel.id}::uuid`;
    for (const secret of [WHATSAPP_SETTINGS.accessToken, WHATSAPP_SETTINGS.appSecret, WHATSAPP_SETTINGS.verifyToken]) expect(row!.row).not.toContain(secret);
    expect(row!.row).toContain('sealed:v1:');
    expect(row!.row).toContain(WHATSAPP_SETTINGS.phoneNumberId);
  });
});

describe('metrics', () => {
  it('count webhooks by provider and outcome, and processed items', async () => {
    const s = await setup();
    startWorker();
    await s.inbound('+31612345701', 'counted');
    await s.post(webhookBody([]), { secret: 'forged' });
    await until(async () => (await s.messages()).length === 1);
    const text = await (await app.fetch(s.host, '/metrics')).text();
    const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect(value('connect_inbound_events_total{provider="whatsapp_cloud",outcome="accepted"}')).toBeGreaterThanOrEqual(1);
    expect(value('connect_inbound_events_total{provider="whatsapp_cloud",outcome="bad_signature"}')).toBeGreaterThanOrEqual(1);
    expect(value('connect_inbound_items_total{provider="whatsapp_cloud",outcome="message"}')).toBeGreaterThanOrEqual(1);
    expect(value('connect_delivery_attempts_total{kind="inbound",outcome="delivered"}')).toBeGreaterThanOrEqual(1);
  });
});
