import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../../src/modules/delivery/delivery.worker.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { restClient } from '../../helpers/rest.js';
import { WHATSAPP_SETTINGS, signedHeaders, startWhatsAppFake, statusUpdate, textMessage, webhookBody, whatsappWorkspace, type WhatsAppFake } from '../../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../../helpers/worker.js';
import { until } from '../../helpers/until.js';

/** WhatsApp's opt-out refusal, 131050 (docs/contacts.md): on send and in a failed status. */

let fake: WhatsAppFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;

beforeAll(async () => {
  fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  app = await appOnOwnDatabase({ providers: testProviders({ settings: { WHATSAPP_API_URL: fake.url } }) });
});
afterAll(async () => {
  await app.drop();
  await fake.close();
});

let worker: DeliveryWorker | undefined;
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  fake.answerAll(null);
});

async function setup() {
  const ws = await whatsappWorkspace(app.db.prisma);
  const api = restClient(app, ws.host, ws.apiKey);
  const post = (body: string) =>
    app.fetch(ws.host, `/webhooks/whatsapp/${ws.channel.id}`, { method: 'POST', headers: signedHeaders(body, ws.settings.appSecret), body });
  /** A contact who wrote to the channel (so that a text may be sent to it), by its id. */
  const contactWhoWrote = async (phone: string) => {
    const body = webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, contacts: [{ waId: phone.slice(1), name: 'Ann Example' }], messages: [textMessage(phone, 'Hi')] }]);
    expect((await post(body)).status).toBe(200);
    let contactId: string | undefined;
    await until(async () => {
      contactId = (await app.db.prisma.message.findFirst({ where: { channelId: ws.channel.id, contact: { phone } } }))?.contactId;
      return !!contactId;
    }, 'the inbound message stored');
    return contactId!;
  };
  const statusOf = async (id: string) => (await app.db.prisma.message.findUniqueOrThrow({ where: { id } })).status;
  const optOuts = async (contactId: string) => (await api.get(`/contacts/${contactId}`)).body.data.contact.optOuts;
  return { ...ws, api, post, contactWhoWrote, statusOf, optOuts };
}

describe("WhatsApp's opt-out refusal", () => {
  it('131050 on send fails the message and opts the contact out of the channel (source provider)', async () => {
    const s = await setup();
    worker = appWorker(app);
    worker.start();
    const contactId = await s.contactWhoWrote('+31612350001');
    fake.failNext({ status: 400, body: { error: { message: 'Unable to deliver message', code: 131050, type: 'OAuthException' } } });
    const message = (await s.api.post('/messages', { to: contactId, message: 'Our spring offers' })).body.data.message;
    await until(async () => (await s.statusOf(message.id)) === 'failed', 'failed');
    expect(await s.optOuts(contactId)).toEqual([{ channelId: s.channel.id, at: expect.any(String), source: 'provider' }]);
  });

  it('131050 in a failed status opts the contact out; another failure code does not', async () => {
    const s = await setup();
    worker = appWorker(app);
    worker.start();
    const optedOut = await s.contactWhoWrote('+31612350002');
    const other = await s.contactWhoWrote('+31612350003');
    const send = async (contactId: string) => {
      const message = (await s.api.post('/messages', { to: contactId, message: 'Hello' })).body.data.message;
      await until(async () => (await s.statusOf(message.id)) === 'sent', 'sent');
      return (await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: message.id } })).providerId;
    };
    const [first, second] = [await send(optedOut), await send(other)];
    const body = webhookBody([
      {
        phoneNumberId: s.settings.phoneNumberId,
        statuses: [
          statusUpdate(first, 'failed', { recipient: '+31612350002', error: { code: 131050, title: 'Unable to deliver the message' } }),
          statusUpdate(second, 'failed', { recipient: '+31612350003', error: { code: 131026, title: 'Message undeliverable' } }),
        ],
      },
    ]);
    expect((await s.post(body)).status).toBe(200);
    await until(async () => (await app.db.prisma.message.count({ where: { channelId: s.channel.id, status: 'failed' } })) === 2, 'both failed');
    expect(await s.optOuts(optedOut)).toEqual([{ channelId: s.channel.id, at: expect.any(String), source: 'provider' }]);
    expect(await s.optOuts(other)).toEqual([]);
  });
});
