import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../../src/modules/delivery/delivery.worker.js';
import { restClient } from '../../helpers/rest.js';
import { TWILIO_SETTINGS, inboundMessageForm, signedTwilioRequest, statusForm, twilioWorkspace } from '../../helpers/twilio-fake.js';
import { appWorker } from '../../helpers/worker.js';
import { until } from '../../helpers/until.js';
import { TWILIO_PUBLIC_URL, twilioApp } from '../../helpers/twilio-app.js';

/** Opt-outs on a Twilio channel (docs/contacts.md): keywords in inbound SMS, and Twilio's 21610 refusal. */

const PUBLIC_URL = TWILIO_PUBLIC_URL;
const { accountSid, authToken } = TWILIO_SETTINGS;

const twilio = twilioApp();

let worker: DeliveryWorker | undefined;
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});

async function setup() {
  const ws = await twilioWorkspace(twilio.app.db.prisma);
  const api = restClient(twilio.app, ws.host, ws.apiKey);
  const path = `/webhooks/twilio/${ws.channel.id}`;
  const post = (to: string, form: [string, string][]) => {
    const signed = signedTwilioRequest(`${PUBLIC_URL}${to}`, form, authToken);
    return twilio.app.fetch(ws.host, to, { method: 'POST', headers: signed.headers, body: signed.body });
  };
  const inbound = (phone: string, text: string) => post(path, inboundMessageForm(accountSid, { from: phone, to: ws.settings.from, body: text }));
  const messages = () => twilio.app.db.prisma.message.findMany({ where: { channelId: ws.channel.id, direction: 'inbound' } });
  /** Sends `text` from `phone` and waits until the worker stored it. */
  const received = async (phone: string, text: string) => {
    const before = (await messages()).length;
    expect((await inbound(phone, text)).status).toBe(200);
    await until(async () => (await messages()).length > before, 'the inbound message stored');
    return (await messages()).find((m) => m.body === text)!.contactId;
  };
  const optOuts = async (contactId: string) => (await api.get(`/contacts/${contactId}`)).body.data.contact.optOuts;
  return { ...ws, api, post, path, received, optOuts };
}

describe('opt-out keywords in inbound SMS', () => {
  it('STOP (any case, whitespace around it) opts the contact out of the channel, START back in; other texts change nothing', async () => {
    const s = await setup();
    worker = appWorker(twilio.app);
    worker.start();
    const contactId = await s.received('+31612340001', 'Hello, is this the shop?');
    expect(await s.optOuts(contactId)).toEqual([]);

    await s.received('+31612340001', '  stop \n');
    const [out] = await s.optOuts(contactId);
    expect(out).toEqual({ channelId: s.channel.id, at: expect.any(String), source: 'keyword' });
    // A keyword inside a longer text is just text; another opt-out keyword keeps the first opt-out.
    await s.received('+31612340001', 'please stop sending me this');
    await s.received('+31612340001', 'Unsubscribe');
    expect(await s.optOuts(contactId)).toEqual([out]);

    await s.received('+31612340001', 'Start');
    expect(await s.optOuts(contactId)).toEqual([]);
    for (const word of ['STOPALL', 'cancel', 'End', 'QUIT']) {
      await s.received('+31612340001', word);
      expect((await s.optOuts(contactId)).map((o: { source: string }) => o.source), word).toEqual(['keyword']);
      await s.received('+31612340001', word === 'QUIT' ? 'yes' : 'UNSTOP');
      expect(await s.optOuts(contactId), word).toEqual([]);
    }
    // Every keyword is stored as the message it is.
    const bodies = (await twilio.app.db.prisma.message.findMany({ where: { contactId, direction: 'inbound' }, orderBy: { createdAt: 'asc' } })).map((m) => m.body);
    expect(bodies).toContain('  stop \n');
  });

  it('a one-to-one send to an opted-out contact still goes', async () => {
    const s = await setup();
    worker = appWorker(twilio.app);
    worker.start();
    const contactId = await s.received('+31612340002', 'STOP');
    expect(await s.optOuts(contactId)).toHaveLength(1);
    const before = twilio.fake.sent.length;
    const sent = await s.api.post('/messages', { to: contactId, message: 'Your order shipped.' });
    expect(sent.status).toBe(202);
    await until(() => twilio.fake.sent.length > before, 'sent to Twilio');
    expect(Object.fromEntries(twilio.fake.sent.at(-1)!.form)).toMatchObject({ To: '+31612340002', Body: 'Your order shipped.' });
  });
});

describe("Twilio's opt-out refusal", () => {
  it('21610 on send fails the message and opts the contact out (source provider); another refusal code does not', async () => {
    const s = await setup();
    worker = appWorker(twilio.app);
    worker.start();
    const contact = (await s.api.post('/contacts', { name: 'Bo', phone: '+31612340003' })).body.data.contact;
    const other = (await s.api.post('/contacts', { name: 'Cy', phone: '+31612340004' })).body.data.contact;

    twilio.fake.failNext({ status: 400, code: 21211, message: "The 'To' number is not a valid phone number." });
    const refused = (await s.api.post('/messages', { to: other.id, message: 'Hi' })).body.data.message;
    await until(async () => (await twilio.app.db.prisma.message.findUniqueOrThrow({ where: { id: refused.id } })).status === 'failed', 'failed');
    expect(await s.optOuts(other.id)).toEqual([]);

    twilio.fake.failNext({ status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' });
    const message = (await s.api.post('/messages', { to: contact.id, message: 'Hi' })).body.data.message;
    await until(async () => (await twilio.app.db.prisma.message.findUniqueOrThrow({ where: { id: message.id } })).status === 'failed', 'failed');
    expect((await s.api.get(`/messages?contact_id=${contact.id}`)).body.data[0].failureReason).toMatch(/^21610: /);
    expect(await s.optOuts(contact.id)).toEqual([{ channelId: s.channel.id, at: expect.any(String), source: 'provider' }]);
  });

  it('21610 in a failed status callback opts the contact out too', async () => {
    const s = await setup();
    worker = appWorker(twilio.app);
    worker.start();
    const contact = (await s.api.post('/contacts', { name: 'Di', phone: '+31612340005' })).body.data.contact;
    const message = (await s.api.post('/messages', { to: contact.id, message: 'Hi' })).body.data.message;
    await until(async () => (await twilio.app.db.prisma.message.findUniqueOrThrow({ where: { id: message.id } })).status === 'sent', 'sent');
    const sid = (await twilio.app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: message.id } })).providerId;
    const status = await s.post(`${s.path}/status`, statusForm(accountSid, sid, 'undelivered', { errorCode: '21610', errorMessage: 'Unsubscribed recipient' }));
    expect(status.status).toBe(200);
    await until(async () => (await s.optOuts(contact.id)).length === 1, 'opted out');
    expect(await s.optOuts(contact.id)).toEqual([{ channelId: s.channel.id, at: expect.any(String), source: 'provider' }]);
  });
});
