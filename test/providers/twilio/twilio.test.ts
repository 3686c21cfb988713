import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'graphql';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from '../../../src/env.js';
import { openDatabase } from '../../../src/db/database.js';
import { migrate } from '../../../src/db/migrate.js';
import type { DeliveryWorker } from '../../../src/modules/delivery/delivery.worker.js';
import { createWebhook } from '../../../src/modules/webhooks/webhooks.service.js';
import { twilioSignature, verifyTwilioSignature } from '../../../src/providers/twilio/signature.js';
import { onPostgres } from '../../helpers/app.js';
import { bearer } from '../../helpers/factories.js';
import { startReceiver } from '../../helpers/receiver.js';
import { startServer, type ServerProcess } from '../../helpers/server-process.js';
import { restClient } from '../../helpers/rest.js';
import { testSealer } from '../../helpers/secrets.js';
import { runAdminOn } from '../../helpers/admin.js';
import { subscribeSse } from '../../helpers/sse.js';
import {
  TWILIO_SETTINGS,
  inboundMessageForm,
  signedTwilioRequest,
  statusForm,
  twilioLibraryAccepts,
  twilioLibrarySignature,
  twilioWorkspace,
} from '../../helpers/twilio-fake.js';
import { appWorker, testProviders } from '../../helpers/worker.js';
import { sleep, until } from '../../helpers/until.js';
import { expectCopiesStoredOnce } from '../inbound-scenarios.js';
import { TWILIO_PUBLIC_URL, twilioApp } from '../../helpers/twilio-app.js';

/** docs/channels.md for Twilio Programmable Messaging channels, against a local fake of Twilio's REST API. */

const PUBLIC_URL = TWILIO_PUBLIC_URL;
const { accountSid, authToken } = TWILIO_SETTINGS;

const twilio = twilioApp();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});


function startWorker(): DeliveryWorker {
  const w = appWorker(twilio.app);
  cleanups.push(() => w.stop());
  w.start();
  return w;
}

type Form = [string, string][];

async function setup(settings: Partial<typeof TWILIO_SETTINGS> = {}) {
  const ws = await twilioWorkspace(twilio.app.db.prisma, settings);
  const api = restClient(twilio.app, ws.host, ws.apiKey);
  const path = `/webhooks/twilio/${ws.channel.id}`;
  /** Posts a form to `to` (a path), signed as Twilio signs it: for the URL under PUBLIC_URL, with the channel's auth token, unless told otherwise. */
  const post = (to: string, form: Form, options: { token?: string; signedUrl?: string; headers?: Record<string, string>; body?: string } = {}) => {
    const signed = signedTwilioRequest(options.signedUrl ?? `${PUBLIC_URL}${to}`, form, options.token ?? authToken);
    return twilio.app.fetch(ws.host, to, { method: 'POST', headers: { ...signed.headers, ...options.headers }, body: options.body ?? signed.body });
  };
  /** A text from `phone` to the channel's number, as Twilio posts it. */
  const inbound = (phone: string, text: string, options: { sid?: string; media?: { url: string; contentType: string }[]; extra?: Form } = {}) =>
    post(path, inboundMessageForm(accountSid, { from: phone, to: ws.settings.from, body: text, ...options }));
  /** A status callback for `sid`, as Twilio posts it to the message's StatusCallback. */
  const status = (sid: string, state: string, options: { errorCode?: string; errorMessage?: string } = {}) => post(`${path}/status`, statusForm(accountSid, sid, state, options));
  const messages = () => twilio.app.db.prisma.message.findMany({ where: { channelId: ws.channel.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const stored = () => twilio.app.db.prisma.inboundEvent.count({ where: { channelId: ws.channel.id } });
  const pendingInbound = () => twilio.app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: ws.channel.id }, status: 'pending' } });
  return { ...ws, api, path, post, inbound, status, messages, stored, pendingInbound };
}
type Setup = Awaited<ReturnType<typeof setup>>;

const basic = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
const statusOf = async (id: string) => (await twilio.app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status;

/** Sends a message through the API and waits until Twilio took it: its id, and the sid Twilio gave it. */
async function sentMessage(s: Setup, body: Record<string, unknown>) {
  const before = twilio.fake.sent.length;
  const answer = await s.api.post('/messages', body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  const id = answer.body.data.message.id as string;
  await until(async () => (await statusOf(id)) !== 'queued', 'taken by Twilio');
  const sid = (await twilio.app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: id } })).providerId;
  return { id, sid, requests: twilio.fake.sent.slice(before) };
}

describe('the signature', () => {
  const cases: { url: string; form: Form }[] = [
    { url: `${PUBLIC_URL}/webhooks/twilio/0192f0c4-0000-7000-8000-000000000001`, form: inboundMessageForm(accountSid, { from: '+31612345678', to: '+14155550100', body: 'Hello there' }) },
    { url: 'https://example.com/hook?b=2&a=1&empty=', form: [['Body', 'with a query string'], ['From', '+31612345678']] },
    { url: 'https://example.com:8443/hook', form: [['Body', 'a port'], ['MessageSid', 'SM1']] },
    { url: 'http://localhost:4000/webhooks/twilio/x/status', form: [['MessageStatus', 'delivered'], ['MessageSid', 'SM2']] },
    { url: 'https://[2001:db8::1]:8443/hook', form: [['Body', 'an IPv6 host'], ['MessageSid', 'SM3']] },
    { url: 'https://example.com/hook', form: [['MediaUrl', 'https://b.example/2'], ['MediaUrl', 'https://a.example/1'], ['MediaUrl', 'https://b.example/2'], ['Body', '']] },
    { url: 'https://example.com/hook', form: [['Body', 'Héllo 👋 世界 — “quotes” & = + %'], ['Ключ', 'значение'], ['Zeta', ''], ['alpha', 'lower case after upper']] },
    { url: 'https://example.com/hook', form: [] },
  ];

  it('is the one Twilio’s own library computes, for every URL and form', () => {
    for (const { url, form } of cases) {
      const expected = twilioLibrarySignature(authToken, url, form);
      expect(twilioSignature(authToken, url, form), url).toBe(expected);
      expect(verifyTwilioSignature(expected, authToken, url, form), url).toBe(true);
    }
  });

  it('matches Twilio’s published example', () => {
    const form: Form = [['CallSid', 'CA1234567890ABCDE'], ['Caller', '+12349013030'], ['Digits', '1234'], ['From', '+12349013030'], ['To', '+18005551212']];
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    expect(twilioSignature('12345', url, form)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
    expect(twilioLibrarySignature('12345', url, form)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  it('accepts and refuses exactly what Twilio’s library does: ports, tampering, another token', () => {
    const form: Form = [['Body', 'x'], ['MessageSid', 'SM1']];
    const pairs: [signedFor: string, checkedAt: string, Form?, string?][] = [
      ['https://example.com/hook', 'https://example.com/hook'],
      ['https://example.com:443/hook', 'https://example.com/hook'],
      ['https://example.com/hook', 'https://example.com:443/hook'],
      ['http://example.com:80/hook', 'http://example.com/hook'],
      // A port other than the default: the URL without it is one Twilio may have signed, not the other way round.
      ['https://example.com:8443/hook', 'https://example.com/hook'],
      ['https://example.com/hook', 'https://example.com:8443/hook'],
      ['https://example.com:8443/hook', 'https://example.com:8443/hook'],
      ['https://example.com/hook?a=1', 'https://example.com/hook'],
      ['https://example.com/hook', 'https://example.com/other'],
      ['https://example.com/hook', 'https://example.com/hook', [['Body', 'y'], ['MessageSid', 'SM1']]],
      ['https://example.com/hook', 'https://example.com/hook', [...form, ['Extra', '1']]],
      ['https://example.com/hook', 'https://example.com/hook', form, 'another-token'],
    ];
    const verdicts = pairs.map(([signedFor, checkedAt, checkedForm = form, token = authToken]) => {
      const signature = twilioLibrarySignature(authToken, signedFor, form);
      const ours = verifyTwilioSignature(signature, token, checkedAt, checkedForm);
      expect(ours, `${signedFor} checked at ${checkedAt}`).toBe(twilioLibraryAccepts(token, signature, checkedAt, checkedForm));
      return ours;
    });
    // Both verdicts occur: the comparison above is not of two functions that always agree on one answer.
    expect(verdicts).toEqual([true, true, true, true, false, true, true, false, false, false, false, false]);
    expect(verifyTwilioSignature('not base64 of twenty bytes', authToken, 'https://example.com/hook', form)).toBe(false);
    expect(verifyTwilioSignature(twilioLibrarySignature(authToken, 'https://example.com/hook', form), '', 'https://example.com/hook', form)).toBe(false);
  });
});

describe('outbound', () => {
  it('a text: exactly the Messages request, Basic auth, its sid stored, status sent', async () => {
    const s = await setup();
    startWorker();
    const { id, sid, requests } = await sentMessage(s, { to: { phone: '+31612345678' }, message: 'Hello Ann & co = 100%' });
    expect(requests).toEqual([
      {
        at: expect.any(Number),
        accountSid,
        authorization: basic,
        contentType: 'application/x-www-form-urlencoded',
        form: [
          ['To', '+31612345678'],
          ['From', TWILIO_SETTINGS.from],
          ['Body', 'Hello Ann & co = 100%'],
          ['StatusCallback', `${PUBLIC_URL}/webhooks/twilio/${s.channel.id}/status`],
        ],
      },
    ]);
    expect(sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(await statusOf(id)).toBe('sent');
  });

  it('a template goes as its rendered text; media as MediaUrl, repeated in order', async () => {
    const s = await setup();
    startWorker();
    await twilio.app.db.prisma.channelTemplate.create({
      data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'order_ready', language: 'en', body: 'Hi {{1}}, order {{2}} is ready.', parameterCount: 2 },
    });
    const templated = await sentMessage(s, { to: { phone: '+31612345679' }, type: 'template', template: { name: 'order_ready', parameters: ['Ann', '42'] } });
    expect(templated.requests.map((r) => r.form)).toEqual([
      [
        ['To', '+31612345679'],
        ['From', TWILIO_SETTINGS.from],
        ['Body', 'Hi Ann, order 42 is ready.'],
        ['StatusCallback', `${PUBLIC_URL}/webhooks/twilio/${s.channel.id}/status`],
      ],
    ]);
    const urls = ['https://cdn.example.com/a.jpg', 'https://cdn.example.com/b.pdf?v=2&x=y'];
    const media = await sentMessage(s, { to: { phone: '+31612345679' }, message: 'Two files', media_urls: urls });
    expect(media.requests.map((r) => r.form)).toEqual([
      [
        ['To', '+31612345679'],
        ['From', TWILIO_SETTINGS.from],
        ['Body', 'Two files'],
        ['MediaUrl', urls[0]],
        ['MediaUrl', urls[1]],
        ['StatusCallback', `${PUBLIC_URL}/webhooks/twilio/${s.channel.id}/status`],
      ],
    ]);
    // One message, one sid: the media went with the text.
    expect(await twilio.app.db.prisma.providerMessageId.count({ where: { messageId: media.id } })).toBe(1);
  });

  it('a recipient without a phone, or a group, is a 422 on the recipient field, and nothing is stored', async () => {
    const s = await setup();
    const emailOnly = await s.api.post('/contacts', { name: 'Mail Only', email: 'mail@example.com' });
    const group = await twilio.app.db.prisma.contact.create({ data: { workspaceId: s.workspace.id, name: 'A group', phone: '+31612345681', isGroup: true } });
    const cases = [
      [{ to: emailOnly.body.data.contact.id, message: 'hi' }, 'to', 'This channel sends through SMS: the recipient needs a phone number.'],
      [{ contact: { email: 'new@example.com' }, message: 'hi' }, 'contact', 'This channel sends through SMS: the recipient needs a phone number.'],
      [{ to: group.id, message: 'hi' }, 'to', 'This channel sends through SMS, which cannot message a group contact.'],
    ] as const;
    for (const [body, field, message] of cases) {
      const result = await s.api.post('/messages', body);
      expect(result.status, JSON.stringify(result.body)).toBe(422);
      expect(result.body.errors).toEqual({ [field]: [message] });
    }
    expect(await s.messages()).toEqual([]);
    expect(await twilio.app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id, email: 'new@example.com' } })).toBe(0);
  });

  it('a 2xx without a sid is sent, once, without a provider id, and logged as a warning without the credentials', async () => {
    const s = await setup();
    twilio.fake.failNext({ status: 201, json: {} });
    const before = twilio.fake.sent.length;
    const accepted = await s.api.post('/messages', { to: { phone: '+31612345684' }, message: 'taken without a sid' });
    const id = accepted.body.data.message.id as string;
    const w = startWorker();
    await until(async () => (await statusOf(id)) !== 'queued', 'taken');
    await sleep(200);
    await w.stop();
    expect(await statusOf(id)).toBe('sent');
    expect(twilio.fake.sent.length - before).toBe(1);
    expect(await twilio.app.db.prisma.providerMessageId.count({ where: { messageId: id } })).toBe(0);
    expect(await twilio.app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } })).toMatchObject({ status: 'succeeded', attempts: 1 });
    const warned = twilio.app.logs.filter((line) => line.includes('delivered with a warning') && line.includes(id));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('Twilio answered HTTP 201 without a message sid');
    expect(warned[0]).not.toContain(authToken);
    expect(warned[0]).not.toContain(basic.slice('Basic '.length));
    expect(warned[0]).not.toContain('taken without a sid');
  });

  it('a contact whose phone is cleared after the 202 fails the message without a request to Twilio', async () => {
    const s = await setup();
    const contact = (await s.api.post('/contacts', { name: 'Soon Phoneless', phone: '+31612345683', email: 'phoneless@example.com' })).body.data.contact;
    const accepted = await s.api.post('/messages', { to: contact.id, message: 'nowhere to go' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const id = accepted.body.data.message.id as string;
    expect((await s.api.patch(`/contacts/${contact.id}`, { phone: null })).status).toBe(200);
    const before = twilio.fake.sent.length;
    startWorker();
    await until(async () => (await statusOf(id)) === 'failed', 'failed');
    expect(twilio.fake.sent.length).toBe(before);
    const view = (await s.api.get('/messages?limit=10')).body.data.find((m: { id: string }) => m.id === id);
    expect(view).toMatchObject({ status: 'failed', failureReason: 'no_phone: The contact has no phone number to send the SMS to.' });
    expect(await twilio.app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } })).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('a 4xx fails the message at once with Twilio’s code and message; 429, 5xx and a dropped connection are retried', async () => {
    const s = await setup();
    const w = startWorker();
    twilio.fake.failNext({ status: 400, code: 21211, message: "The 'To' number +31612345682 is not a valid phone number." });
    const failed = await s.api.post('/messages', { to: { phone: '+31612345682' }, message: 'will fail' });
    const failedId = failed.body.data.message.id as string;
    await until(async () => (await statusOf(failedId)) === 'failed', 'failed');
    const view = (await s.api.get('/messages?limit=10')).body.data.find((m: { id: string }) => m.id === failedId);
    expect(view).toMatchObject({ status: 'failed', failureReason: "21211: The 'To' number +31612345682 is not a valid phone number." });
    expect(await twilio.app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: failedId } })).toMatchObject({ status: 'failed', attempts: 1 });

    twilio.fake.failNext({ status: 429, code: 20429, message: 'Too Many Requests' }, { status: 500, code: 20500, message: 'Internal Server Error' }, { status: 503, code: 20503, message: 'Service unavailable' }, 'drop');
    const before = twilio.fake.sent.length;
    const retried = await s.api.post('/messages', { to: { phone: '+31612345682' }, message: 'eventually' });
    const retriedId = retried.body.data.message.id as string;
    await until(async () => (await statusOf(retriedId)) === 'sent', 'sent after retries');
    expect(twilio.fake.sent.length - before).toBe(5);
    // The 429 is a rate-limit answer: retried without counting an attempt (docs/broadcasts.md#rate-limit-answers).
    expect(await twilio.app.db.prisma.message.findUniqueOrThrow({ where: { id: retriedId } })).toMatchObject({ deliveryAttempts: 4, failureReason: null, lastError: null });
    await w.stop();
    // Sent is sent: nothing more goes to Twilio for either message.
    expect(twilio.fake.sent.length - before).toBe(5);
    // The worker logs each retry, with Twilio's answer and never the credentials it sent.
    const retries = twilio.app.logs.filter((line) => (line.includes('delivery failed, will retry') || line.includes('rate limited by the provider')) && line.includes(retriedId));
    expect(retries).toHaveLength(4);
    expect(retries.join('\n')).toContain('20429: Twilio answered HTTP 429');
    for (const line of retries) {
      expect(line).not.toContain(authToken);
      expect(line).not.toContain(basic.slice('Basic '.length));
    }
  });
});

describe('statuses', () => {
  it('move forward only, out of order or repeated; queued, accepted and sending change nothing; each change an event', async () => {
    const s = await setup();
    startWorker();
    const r = await startReceiver();
    cleanups.push(r.close);
    await createWebhook(twilio.app.db.prisma, { workspaceId: s.workspace.id, url: r.url, events: ['message.status_changed'] }, testSealer);
    const { id, sid } = await sentMessage(s, { to: { phone: '+31612345683' }, message: 'out' });
    for (const state of ['queued', 'accepted', 'sending']) expect((await s.status(sid, state)).status).toBe(200);
    // Delivered overtakes sent: the later sent changes nothing.
    const delivered = await s.status(sid, 'delivered');
    expect(delivered.status).toBe(200);
    await until(async () => (await statusOf(id)) === 'delivered', 'delivered');
    await s.status(sid, 'sent');
    await s.status(sid, 'undelivered', { errorCode: '30003' });
    await until(async () => (await s.pendingInbound()) === 0, 'processed');
    expect(await statusOf(id)).toBe('delivered');
    await s.status(sid, 'read');
    await until(async () => (await statusOf(id)) === 'read', 'read');
    await s.status(sid, 'delivered');
    await until(async () => (await s.pendingInbound()) === 0, 'processed');
    expect(await statusOf(id)).toBe('read');
    await until(() => r.received.length >= 3, 'events');
    await sleep(100);
    const changes = r.received.map((request) => JSON.parse(request.body)).filter((event) => event.data.id === id);
    // The worker's own sent, then delivered and read; none for the stale or uninformative ones.
    expect(changes.map((event) => event.data.status)).toEqual(['sent', 'delivered', 'read']);
  });

  it('undelivered and failed fail the message with Twilio’s ErrorCode and ErrorMessage; nothing comes after failed', async () => {
    const s = await setup();
    startWorker();
    const first = await sentMessage(s, { to: { phone: '+31612345684' }, message: 'one' });
    await s.status(first.sid, 'undelivered', { errorCode: '30003', errorMessage: 'Unreachable destination handset' });
    await until(async () => (await statusOf(first.id)) === 'failed', 'failed');
    expect(await twilio.app.db.prisma.message.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({ failureReason: '30003: Unreachable destination handset' });
    const view = (await s.api.get('/messages?limit=10')).body.data.find((m: { id: string }) => m.id === first.id);
    expect(view).toMatchObject({ status: 'failed', failureReason: '30003: Unreachable destination handset' });
    await s.status(first.sid, 'delivered');
    await until(async () => (await s.pendingInbound()) === 0, 'processed');
    expect(await statusOf(first.id)).toBe('failed');

    const second = await sentMessage(s, { to: { phone: '+31612345684' }, message: 'two' });
    await s.status(second.sid, 'failed', { errorCode: '30007' });
    await until(async () => (await statusOf(second.id)) === 'failed', 'failed');
    expect((await twilio.app.db.prisma.message.findUniqueOrThrow({ where: { id: second.id } })).failureReason).toBe('30007: Twilio reported the message failed');
  });

  it('a status that overtakes the stored sid is retried until the sid is stored', async () => {
    const s = await setup();
    startWorker();
    const { id } = await sentMessage(s, { to: { phone: '+31612345685' }, message: 'out' });
    const early = `SM${'e'.repeat(32)}`;
    await s.status(early, 'delivered');
    await until(async () => (await twilio.app.db.prisma.delivery.findFirst({ where: { inboundEvent: { channelId: s.channel.id }, attempts: { gte: 2 } } })) !== null, 'retried');
    expect(await statusOf(id)).toBe('sent');
    await twilio.app.db.prisma.providerMessageId.create({ data: { channelId: s.channel.id, providerId: early, messageId: id, part: 1 } });
    await until(async () => (await statusOf(id)) === 'delivered', 'applied once stored');
  });

  it('a status callback is answered 200 once stored, before it is processed', async () => {
    const s = await setup();
    const answer = await s.status(`SM${'0'.repeat(32)}`, 'delivered');
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('');
    expect(await s.stored()).toBe(1);
    const [event] = await twilio.app.db.prisma.inboundEvent.findMany({ where: { channelId: s.channel.id } });
    expect(event!.provider).toBe('twilio');
  });
});

describe('inbound messages', () => {
  it('are stored before the TwiML answer, then a received message from a new contact on a new conversation, with its events', async () => {
    const s = await setup();
    const r = await startReceiver();
    cleanups.push(r.close);
    await createWebhook(twilio.app.db.prisma, { workspaceId: s.workspace.id, url: r.url, events: ['message.created', 'contact.created'] }, testSealer);
    const stream = await subscribeSse((path, init) => twilio.app.fetch(s.host, path, init), bearer(s.apiKey), parse('subscription { messageAdded { id direction status body sender { type id name } } }') as never);
    cleanups.push(() => stream.close());

    const before = new Date();
    const answer = await s.inbound('+31612345691', 'Hello from SMS', { sid: 'SMinbound00000000000000000000001' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(await answer.text()).toBe('<Response></Response>');
    // Stored before the answer, with the delivery that processes it: nothing runs yet.
    expect(await s.stored()).toBe(1);
    expect(await s.messages()).toEqual([]);

    startWorker();
    await until(async () => (await s.messages()).length === 1, 'processed');
    const [message] = await s.messages();
    const contact = await twilio.app.db.prisma.contact.findUniqueOrThrow({ where: { id: message!.contactId }, include: { channels: true } });
    expect(contact).toMatchObject({ name: '+31612345691', phone: '+31612345691' });
    expect(contact.channels.map((link) => link.channelId)).toEqual([s.channel.id]);
    const view = (await s.api.get(`/messages?conversation_id=${message!.conversationId}`)).body.data[0];
    expect(view).toEqual({
      id: message!.id,
      conversationId: message!.conversationId,
      contactId: contact.id,
      channelId: s.channel.id,
      direction: 'inbound',
      type: 'text',
      body: 'Hello from SMS',
      isEncrypted: false,
      status: 'received',
      failureReason: null,
      sender: { type: 'contact', id: contact.id, name: '+31612345691' },
      silent: false,
      mediaUrls: [],
      media: [],
      broadcastId: null,
      createdAt: expect.any(String),
    });
    // Twilio sends no time: the message is dated when the gateway received it.
    expect(new Date(view.createdAt).getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(await twilio.app.db.prisma.providerMessageId.findFirst({ where: { channelId: s.channel.id, providerId: 'SMinbound00000000000000000000001' } })).toMatchObject({ messageId: message!.id });
    const conversation = (await s.api.get(`/conversations/${message!.conversationId}`)).body.data.conversation;
    expect(conversation).toMatchObject({ status: 'open', lastMessageAt: view.createdAt, stateChanges: [{ type: 'opened', actor: { type: 'contact', id: contact.id } }] });

    await stream.waitFor(1);
    expect(stream.received[0]!.data).toEqual({ messageAdded: { id: message!.id, direction: 'inbound', status: 'received', body: 'Hello from SMS', sender: { type: 'contact', id: contact.id, name: '+31612345691' } } });
    await until(() => r.received.length >= 2, 'events');
    expect(r.received.map((request) => JSON.parse(request.body).type).sort()).toEqual(['contact.created', 'message.created']);
    expect(twilio.app.logs.join('\n')).not.toContain('Hello from SMS');
  });

  it('from a sender that is not a phone number are answered, stored, and skipped once by processing, logged without the body', async () => {
    const s = await setup();
    const marker = `NOT-A-PHONE-${Date.now()}`;
    // A short code, an alphanumeric sender, a WhatsApp sender: signed, readable forms, not phone numbers.
    for (const from of ['12345', 'ACME', 'whatsapp:+31612345699']) {
      const answer = await s.inbound(from, marker);
      expect(answer.status, from).toBe(200);
      expect(await answer.text()).toBe('<Response></Response>');
    }
    expect(await s.stored()).toBe(3);

    startWorker();
    await until(async () => (await s.pendingInbound()) === 0, 'processed');
    const deliveries = await twilio.app.db.prisma.delivery.findMany({ where: { inboundEvent: { channelId: s.channel.id } } });
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
    expect(await s.messages()).toEqual([]);
    expect(await twilio.app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(0);
    const skipped = twilio.app.logs.filter((line) => line.includes('inbound item not supported: ignored') && line.includes(s.channel.id));
    expect(skipped).toHaveLength(3);
    expect(twilio.app.logs.join('\n')).not.toContain(marker);
    const metrics = await (await twilio.app.fetch(s.host, '/metrics')).text();
    expect(Number(/^connect_inbound_items_total\{provider="twilio",outcome="unsupported"\} (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThanOrEqual(3);
  });

  it('match an existing contact by phone', async () => {
    const s = await setup();
    const known = await s.api.post('/contacts', { name: 'Known Person', phone: '+31612345692' });
    expect(known.status).toBe(201);
    startWorker();
    await s.inbound('+31612345692', 'it is me');
    await until(async () => (await s.messages()).length === 1, 'processed');
    expect((await s.messages())[0]!.contactId).toBe(known.body.data.contact.id);
    expect(await twilio.app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(1);
  });

  it('parameters Twilio adds later are accepted, and signed like the rest', async () => {
    const s = await setup();
    startWorker();
    const extra: Form = [['AddOns', '{"status":"successful","results":{}}'], ['ChannelMetadata2031', 'ünïcode ✓'], ['Aardvark', '']];
    expect((await s.inbound('+31612345693', 'with more', { extra })).status).toBe(200);
    await until(async () => (await s.messages()).length === 1, 'processed');
    expect((await s.messages())[0]!.body).toBe('with more');
    // The same form with one of those parameters changed after signing is not Twilio's.
    const form = inboundMessageForm(accountSid, { from: '+31612345693', to: s.settings.from, body: 'tampered', extra });
    const signed = signedTwilioRequest(`${PUBLIC_URL}${s.path}`, form, authToken);
    const tampered = await twilio.app.fetch(s.host, s.path, { method: 'POST', headers: signed.headers, body: signed.body.replace('ChannelMetadata2031=', 'ChannelMetadata2031=x') });
    expect(tampered.status).toBe(403);
    expect(await s.stored()).toBe(1);
  });

  it('are stored once however many copies of a MessageSid arrive, one after another or at once', async () => {
    const s = await setup();
    const form = inboundMessageForm(accountSid, { from: '+31612345694', to: s.settings.from, body: 'only once', sid: 'SMdup0000000000000000000000000001' });
    await expectCopiesStoredOnce(twilio.app, {
      workspaceId: s.workspace.id,
      channelId: s.channel.id,
      postCopy: () => s.post(s.path, form),
      stored: s.stored,
      pendingInbound: s.pendingInbound,
      messages: s.messages,
      startWorker,
    }, 'only once');
  });
});

describe('inbound webhooks refused', () => {
  it('each with its status, in the contract’s order, storing nothing and logging nothing of the body', async () => {
    const s = await setup();
    const marker = `SECRET-BODY-${Date.now()}`;
    const form = inboundMessageForm(accountSid, { from: '+31612345695', to: s.settings.from, body: marker });
    const other = await twilio.app.db.prisma.channel.create({ data: { workspaceId: s.workspace.id, name: 'Plain', type: 'sms' } });
    const inactive = await setup();
    await twilio.app.db.prisma.channel.update({ where: { id: inactive.channel.id }, data: { status: 'inactive' } });
    const signedFor = (url: string, f: Form = form) => signedTwilioRequest(url, f, authToken);
    const json = signedFor(`${PUBLIC_URL}${s.path}`, []);
    const cases: [string, Promise<Response>, number][] = [
      ['no signature', s.post(s.path, form, { headers: { 'x-twilio-signature': '' } }), 403],
      ['a malformed signature', s.post(s.path, form, { headers: { 'x-twilio-signature': 'abc' } }), 403],
      ['a forged signature', s.post(s.path, form, { token: 'not-the-auth-token-0000000000000' }), 403],
      // The proxy pitfall: the gateway's own address is not the URL Twilio signed.
      ['a signature of the address the gateway was reached at', s.post(s.path, form, { signedUrl: `http://${s.host}${s.path}` }), 403],
      ['a signature of the other URL of the channel', s.post(`${s.path}/status`, form, { signedUrl: `${PUBLIC_URL}${s.path}` }), 403],
      ['an unknown channel', s.post('/webhooks/twilio/00000000-0000-4000-8000-000000000000', form), 404],
      ['not a channel id', s.post('/webhooks/twilio/not-a-uuid', form), 404],
      ['a channel of another provider', s.post(`/webhooks/twilio/${other.id}`, form), 404],
      ['an inactive channel', s.post(inactive.path, form), 404],
      ['an unknown channel, unsigned', s.post('/webhooks/twilio/00000000-0000-4000-8000-000000000000', form, { headers: { 'x-twilio-signature': '' } }), 404],
      ['a body over 1 MiB', s.post(s.path, [...form, ['Pad', 'x'.repeat(1024 * 1024)]]), 413],
      // Combined faults: the first check in the contract's order decides.
      ['an unknown channel, with a body over 1 MiB', s.post('/webhooks/twilio/00000000-0000-4000-8000-000000000000', [...form, ['Pad', 'x'.repeat(1024 * 1024)]]), 404],
      [
        'a forged signature on a body that is not a form',
        s.post(s.path, [], { token: 'not-the-auth-token-0000000000000', headers: { 'content-type': 'application/json' }, body: `{"Body":"${marker}"}` }),
        403,
      ],
      ['a signed body that is not a form', s.post(s.path, [], { headers: { ...json.headers, 'content-type': 'application/json' }, body: `{"Body":"${marker}"}` }), 400],
      ['a signed form without MessageSid', s.post(s.path, form.filter(([name]) => !/Sid$/.test(name) || name === 'AccountSid' || name === 'MessagingServiceSid')), 400],
      ['a signed status without MessageStatus', s.post(`${s.path}/status`, statusForm(accountSid, 'SM1', 'delivered').filter(([name]) => !name.endsWith('Status'))), 400],
      ['a GET', twilio.app.fetch(s.host, s.path), 405],
      ['another path', twilio.app.fetch(s.host, `${s.path}/other`, { method: 'POST' }), 404],
    ];
    for (const [what, response, status] of cases) {
      const answer = await response;
      expect(answer.status, what).toBe(status);
      await answer.body?.cancel();
    }
    expect(await s.stored()).toBe(0);
    expect(await twilio.app.db.prisma.inboundEvent.count({ where: { channelId: { in: [other.id, inactive.channel.id] } } })).toBe(0);
    expect(twilio.app.logs.join('\n')).not.toContain(marker);
    expect(twilio.app.logs.filter((line) => line.includes('inbound webhook refused') && line.includes('"provider":"twilio"')).length).toBeGreaterThanOrEqual(cases.length - 2);
  });
});

describe('inbound media', () => {
  it('is listed in the view and streamed through the media endpoint: redirects followed, the credentials never sent to another origin', async () => {
    const s = await setup();
    startWorker();
    const image = Buffer.from('\xff\xd8\xff fake jpeg bytes', 'latin1');
    const clip = Buffer.alloc(64 * 1024, 7);
    const imageUrl = twilio.fake.addMedia(image, 'image/jpeg');
    // Two redirects on the API's own origin, then the CDN: three hops, within the limit.
    const clipUrl = twilio.fake.addMedia(clip, 'video/mp4', { redirects: 3 });
    const loopUrl = twilio.fake.addMedia(image, 'image/png', { redirects: 4 });
    const goneUrl = `${twilio.fake.url}/2010-04-01/Accounts/${accountSid}/Messages/MM1/Media/MEgone`;
    await s.inbound('+31612345696', 'Look', {
      media: [
        { url: imageUrl, contentType: 'image/jpeg' },
        { url: clipUrl, contentType: 'video/mp4' },
        { url: loopUrl, contentType: 'image/png' },
        { url: goneUrl, contentType: 'image/gif' },
      ],
    });
    await until(async () => (await s.messages()).length === 1, 'processed');
    const [message] = await s.messages();
    const view = (await s.api.get(`/messages?conversation_id=${message!.conversationId}`)).body.data[0];
    expect(view).toMatchObject({
      body: 'Look',
      media: [
        { index: 0, contentType: 'image/jpeg', filename: null },
        { index: 1, contentType: 'video/mp4', filename: null },
        { index: 2, contentType: 'image/png', filename: null },
        { index: 3, contentType: 'image/gif', filename: null },
      ],
    });
    expect(JSON.stringify(view)).not.toContain(twilio.fake.url);

    const get = (index: number) => twilio.app.fetch(s.host, `/api/connect/messages/${message!.id}/media/${index}`, { headers: bearer(s.apiKey) });
    const first = await get(0);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await first.arrayBuffer())).toEqual(image);
    const second = await get(1);
    expect(second.status).toBe(200);
    expect(Buffer.from(await second.arrayBuffer())).toEqual(clip);

    // The API's origin got the channel's credentials on every hop; the CDN (another origin) never did.
    expect(twilio.fake.mediaRequests.length).toBeGreaterThanOrEqual(4);
    expect(twilio.fake.mediaRequests.every((request) => request.authorization === basic)).toBe(true);
    expect(twilio.fake.cdnRequests.length).toBe(2);
    expect(twilio.fake.cdnRequests.map((request) => request.authorization)).toEqual([undefined, undefined]);

    const looping = await get(2);
    expect(looping.status).toBe(502);
    expect(await looping.json()).toEqual({ status: 'error', message: "The channel's provider could not hand the file over: the provider redirected more than 3 times." });
    expect(twilio.fake.cdnRequests.length).toBe(2);
    const gone = await get(3);
    expect(gone.status).toBe(502);
    expect(await gone.json()).toEqual({ status: 'error', message: "The channel's provider could not hand the file over: the provider answered HTTP 404." });
    expect((await get(4)).status).toBe(404);
  });

  it('a media URL at a private address is refused when WEBHOOK_PRIVATE_TARGETS is deny (502), and nothing is fetched', async () => {
    const guarded = testProviders({ targets: 'deny', settings: { TWILIO_API_URL: twilio.fake.url }, publicUrl: PUBLIC_URL });
    cleanups.push(() => guarded.close());
    const url = twilio.fake.addMedia(Buffer.from('x'), 'image/png');
    const before = twilio.fake.mediaRequests.length;
    const fetcher = guarded.media('twilio')!;
    await expect(fetcher.open({ id: 'c', name: 'c', webhookUrl: null, webhookSecret: null, settings: { accountSid }, secrets: { authToken } }, url, 1024)).rejects.toThrow(
      /the media's address was refused \(127\.0\.0\.1 is a loopback address/,
    );
    expect(twilio.fake.mediaRequests.length).toBe(before);
  });
});

describe('admin commands', () => {
  const admin = (...argv: string[]) => runAdminOn(twilio.app.db, argv, { PUBLIC_URL });
  const twilioFlags = ['--account-sid', accountSid, '--auth-token', authToken, '--from', '+14155550100'];

  it('channel:create, list and configure a twilio channel: the token sealed and never shown, the inbound URL printed', async () => {
    const hostname = `tw-admin-${Date.now()}.example.test`;
    expect((await admin('workspace:create', '--hostname', hostname, '--name', 'Acme')).code).toBe(0);
    const created = await admin('channel:create', '--hostname', hostname, '--name', 'SMS', '--type', 'sms', '--provider', 'twilio', ...twilioFlags);
    expect(created.stderr).toBe('');
    expect(created.json).toEqual({
      id: expect.any(String),
      name: 'SMS',
      type: 'sms',
      apiKey: expect.any(String),
      provider: 'twilio',
      inboundUrl: `${PUBLIC_URL}/webhooks/twilio/${created.json.id}`,
    });
    const stored = await twilio.app.db.prisma.channel.findUniqueOrThrow({ where: { id: created.json.id } });
    expect(stored.providerSettings).toEqual({ accountSid, from: '+14155550100' });
    expect(JSON.parse(testSealer.open(stored.providerSecrets!))).toEqual({ authToken });
    const [row] = await twilio.app.db.prisma.$queryRaw<{ row: string }[]>`SELECT row_to_json(c)::text AS row FROM channels c WHERE id = ${stored.id}::uuid`;
    expect(row!.row).not.toContain(authToken);

    const listed = await admin('channel:list', '--hostname', hostname);
    expect(listed.json.channels).toEqual([
      { id: stored.id, name: 'SMS', type: 'sms', status: 'active', webhookUrl: null, provider: 'twilio', settings: { accountSid, from: '+14155550100' }, inboundUrl: `${PUBLIC_URL}/webhooks/twilio/${stored.id}` },
    ]);
    expect(JSON.stringify(listed.json)).not.toContain(authToken);

    expect((await admin('channel:configure', '--channel', stored.id, '--from', '+14155550199', '--auth-token', 'rotated-token-0123456789abcdef01')).json).toEqual({ id: stored.id, provider: 'twilio' });
    const changed = await twilio.app.db.prisma.channel.findUniqueOrThrow({ where: { id: stored.id } });
    expect(changed.providerSettings).toEqual({ accountSid, from: '+14155550199' });

    // A Messaging Service is not a sender (docs/channels.md: --from +E164): refused in one line, nothing changed.
    const service = await admin('channel:configure', '--channel', stored.id, '--from', `MG${'cd'.repeat(16)}`);
    expect(service.code).toBe(1);
    expect(service.stderr).toMatch(/^error: --from must be the sending number in E\.164 form \(\+14155550100\)$/);
    expect((await twilio.app.db.prisma.channel.findUniqueOrThrow({ where: { id: stored.id } })).providerSettings).toEqual({ accountSid, from: '+14155550199' });
    expect(JSON.parse(testSealer.open(changed.providerSecrets!))).toEqual({ authToken: 'rotated-token-0123456789abcdef01' });
  });

  it('a missing flag, a --from that is not E.164, a bad account SID or another channel type is one line, and creates nothing', async () => {
    const hostname = `tw-admin-bad-${Date.now()}.example.test`;
    await admin('workspace:create', '--hostname', hostname, '--name', 'Acme');
    const without = (flag: string) => {
      const i = twilioFlags.indexOf(flag);
      return [...twilioFlags.slice(0, i), ...twilioFlags.slice(i + 2)];
    };
    const cases: [string[], RegExp][] = [
      [without('--auth-token'), /^error: --auth-token is required for provider twilio$/],
      [without('--from'), /^error: --from is required for provider twilio$/],
      [[...without('--from'), '--from', '0612345678'], /^error: --from must be the sending number in E\.164 form/],
      [[...without('--from'), '--from', '+1 415 555 0100'], /^error: --from must be the sending number in E\.164 form/],
      [[...without('--from'), '--from', `MG${'ab'.repeat(16)}`], /^error: --from must be the sending number in E\.164 form \(\+14155550100\)$/],
      [[...without('--account-sid'), '--account-sid', 'SK0123'], /^error: --account-sid must be the Account SID/],
      [[...twilioFlags, '--access-token', 'x'], /^error: --access-token is not a setting of provider twilio$/],
    ];
    for (const [flags, message] of cases) {
      const result = await admin('channel:create', '--hostname', hostname, '--name', 'X', '--type', 'sms', '--provider', 'twilio', ...flags);
      expect(result.code).toBe(1);
      expect(result.stderr.split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
    const wrongType = await admin('channel:create', '--hostname', hostname, '--name', 'X', '--type', 'whatsapp', '--provider', 'twilio', ...twilioFlags);
    expect(wrongType.stderr).toMatch(/^error: --provider twilio carries sms channels, not whatsapp ones \(use --type sms\)$/);
    const workspace = await twilio.app.db.prisma.workspace.findFirstOrThrow({ where: { hostname } });
    expect(await twilio.app.db.prisma.channel.count({ where: { workspaceId: workspace.id } })).toBe(0);
  });
});

describe('metrics', () => {
  it('count Twilio webhooks by outcome, and processed items, labelled twilio', async () => {
    const s = await setup();
    startWorker();
    await s.inbound('+31612345697', 'counted');
    await s.post(s.path, inboundMessageForm(accountSid, { from: '+31612345697', to: s.settings.from, body: 'forged' }), { token: 'forged-token-00000000000000000000' });
    await until(async () => (await s.messages()).length === 1);
    const text = await (await twilio.app.fetch(s.host, '/metrics')).text();
    const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect(value('connect_inbound_events_total{provider="twilio",outcome="accepted"}')).toBeGreaterThanOrEqual(1);
    expect(value('connect_inbound_events_total{provider="twilio",outcome="bad_signature"}')).toBeGreaterThanOrEqual(1);
    expect(value('connect_inbound_items_total{provider="twilio",outcome="message"}')).toBeGreaterThanOrEqual(1);
  });
});

describe('logs', () => {
  it('never carry the auth token or the Basic credentials, after every send, refusal and download above', () => {
    const logs = twilio.app.logs.join('\n');
    expect(logs).toContain('inbound webhook refused');
    expect(logs).not.toContain(authToken);
    expect(logs).not.toContain(basic.slice('Basic '.length));
  });
});

describe('settings', () => {
  it('TWILIO_API_URL defaults to Twilio’s API; anything but an http(s) URL is refused', () => {
    expect(loadEnv({}).TWILIO_API_URL).toBe('https://api.twilio.com');
    expect(loadEnv({ TWILIO_API_URL: 'http://127.0.0.1:9999/' }).TWILIO_API_URL).toBe('http://127.0.0.1:9999');
    expect(() => loadEnv({ TWILIO_API_URL: 'ftp://api.twilio.com' })).toThrow(ConfigError);
  });
});

/** One request to the real server; fetch cannot set Host, which names the workspace. */
function call(base: string, host: string, to: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; type: string | undefined; text: string }>((resolve, reject) => {
    const req = http.request(`${base}${to}`, { method: 'POST', headers: { host, ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// The server as `npm start` runs it, on an embedded database of its own: once, not per database kind.
describe.skipIf(onPostgres)('a server process', () => {
  let server: ServerProcess | undefined;
  let dir: string;
  afterAll(() => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sends through TWILIO_API_URL with its status callback under PUBLIC_URL, and takes webhooks signed for PUBLIC_URL', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'twilio-'));
    const pgliteDir = path.join(dir, 'pglite');
    const db = await openDatabase({ pgliteDir });
    await db.withSession((session) => migrate(session));
    const ws = await twilioWorkspace(db.prisma);
    await db.close();

    const publicUrl = 'https://sms.example.test/gateway';
    server = startServer({ PGLITE_DIR: pgliteDir, SEED_DEMO: '0', DELIVERY_WORKER: '1', DELIVERY_POLL_MS: '50', TWILIO_API_URL: twilio.fake.url, PUBLIC_URL: publicUrl });
    const base = await server.listening;
    const before = twilio.fake.sent.length;
    const sent = await call(base, ws.host, '/api/connect/messages', { authorization: `Bearer ${ws.apiKey}`, 'content-type': 'application/json' }, JSON.stringify({ to: { phone: '+31612345698' }, message: 'From a process' }));
    expect(sent.status, sent.text).toBe(202);
    await until(() => twilio.fake.sent.length > before, 'sent to the fake', 15_000);
    expect(twilio.fake.sent[before]!.form).toEqual([
      ['To', '+31612345698'],
      ['From', TWILIO_SETTINGS.from],
      ['Body', 'From a process'],
      ['StatusCallback', `${publicUrl}/webhooks/twilio/${ws.channel.id}/status`],
    ]);

    // A proxy serves the gateway under /gateway: Twilio signed the public URL, the gateway sees /webhooks/….
    const to = `/webhooks/twilio/${ws.channel.id}`;
    const form = inboundMessageForm(accountSid, { from: '+31612345698', to: TWILIO_SETTINGS.from, body: 'Back from a phone' });
    const good = signedTwilioRequest(`${publicUrl}${to}`, form, authToken);
    const answer = await call(base, ws.host, to, good.headers, good.body);
    expect([answer.status, answer.type, answer.text]).toEqual([200, 'text/xml; charset=utf-8', '<Response></Response>']);
    const direct = signedTwilioRequest(`${base}${to}`, form, authToken);
    expect((await call(base, ws.host, to, direct.headers, direct.body)).status).toBe(403);
  }, 60_000);
});
