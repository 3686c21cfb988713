import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/modules/delivery/delivery.worker.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { sleep } from '../helpers/load.js';
import { restClient } from '../helpers/rest.js';
import { startServer } from '../helpers/server-process.js';
import { emailWorkspace } from '../helpers/smtp-fake.js';
import { signedHeaders, startWhatsAppFake, textMessage, webhookBody, WHATSAPP_SETTINGS, whatsappWorkspace, type WhatsAppFake } from '../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../helpers/worker.js';

/**
 * docs/operating-safely.md, Staying up: one deadline per provider attempt, for the answer's head and body together, always
 * shorter than the lease, so that a slow provider never lets a second worker send the same message.
 */

/** The attempt's deadline (DELIVERY_TIMEOUT_MS) and the workers' lease (DELIVERY_LEASE_MS) in these tests. */
const DEADLINE_MS = 400;
const LEASE_MS = 2000;

let fake: WhatsAppFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;

beforeAll(async () => {
  fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  app = await appOnOwnDatabase({ providers: testProviders({ timeoutMs: DEADLINE_MS, settings: { WHATSAPP_API_URL: fake.url } }) });
});
afterAll(async () => {
  await app?.drop();
  await fake?.close();
});

const workers: DeliveryWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

/** Two workers sharing the database, as two processes would. */
function startWorkers() {
  for (const id of ['first-worker', 'second-worker']) {
    const worker = appWorker(app, { leaseMs: LEASE_MS, id });
    workers.push(worker);
    worker.start();
  }
}

async function until(done: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await sleep(20);
  }
}

/** A WhatsApp channel with a contact inside the 24-hour window, and a way to send to it. */
async function whatsappSetup(phone: string) {
  const ws = await whatsappWorkspace(app.db.prisma);
  const api = restClient(app, ws.host, ws.apiKey);
  const body = webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, contacts: [{ waId: phone.slice(1), name: 'Ann' }], messages: [textMessage(phone, 'hello')] }]);
  expect((await app.fetch(ws.host, `/webhooks/whatsapp/${ws.channel.id}`, { method: 'POST', headers: signedHeaders(body, ws.settings.appSecret), body })).status).toBe(200);
  await until(async () => (await app.db.prisma.message.count({ where: { channelId: ws.channel.id } })) === 1, 'the reply');
  const contactId = (await app.db.prisma.message.findFirstOrThrow({ where: { channelId: ws.channel.id } })).contactId;
  const send = async (text: string) => {
    const sent = await api.post('/messages', { to: contactId, message: text });
    expect(sent.status).toBe(202);
    return sent.body.data.message.id as string;
  };
  const sendsOf = (text: string) => fake.sent.filter((request) => request.body?.text?.body === text);
  return { ...ws, send, sendsOf };
}

const message = (id: string) => app.db.prisma.message.findUniqueOrThrow({ where: { id } });
const delivery = (id: string) => app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: id } });

describe('a provider that answers slowly', () => {
  it('trickling the body of a 200 for longer than the lease: the attempt ends at its deadline, sent once, never again', async () => {
    startWorkers();
    const s = await whatsappSetup('+31612350001');
    // About 90 bytes, one every 100 ms: some 9 s of body, four leases long.
    fake.failNext({ status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.trickled' }] }, trickleMs: 100 });
    const id = await s.send('trickled');
    await until(async () => (await message(id)).status === 'sent', 'sent');
    // Past the lease, and more: no other worker takes it up.
    await sleep(LEASE_MS * 2);
    expect(s.sendsOf('trickled')).toHaveLength(1);
    expect(await delivery(id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    // Taken without an id (its body was cut off at the deadline): recorded as such, and logged.
    const parts = await app.db.prisma.providerMessageId.findMany({ where: { messageId: id } });
    expect(parts.map((part) => part.providerId)).toEqual([`unidentified:${id}:0`]);
    const warned = app.logs.map((line) => JSON.parse(line)).find((line) => line.msg === 'delivered with a warning' && line.messageId === id);
    expect(warned?.warning).toMatch(/WhatsApp answered HTTP 200 with a cut-off answer: sent, but its statuses cannot be matched/);
  });

  it('trickling the body of a 500: the status is kept at the deadline and the message retried, by one worker at a time', async () => {
    startWorkers();
    const s = await whatsappSetup('+31612350002');
    fake.failNext({ status: 500, body: { error: { message: 'Service temporarily unavailable', code: 2 } }, trickleMs: 100 });
    const id = await s.send('slow failure');
    await until(async () => (await message(id)).status === 'sent', 'sent on the retry');
    await sleep(LEASE_MS * 2);
    expect(s.sendsOf('slow failure')).toHaveLength(2);
    expect(await delivery(id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    const retried = app.logs.map((line) => JSON.parse(line)).find((line) => line.msg === 'delivery failed, will retry' && line.messageId === id);
    expect(retried?.reason).toBe('WhatsApp answered HTTP 500: HTTP 500');
  });

  it('an SMTP relay that answers each command slowly, within every per-wait timeout: the attempt still ends at its deadline', async () => {
    const relay = await slowRelay(150);
    try {
      startWorkers();
      const ws = await emailWorkspace(app.db.prisma, { smtpUrl: `smtp://127.0.0.1:${relay.port}` });
      const api = restClient(app, ws.host, ws.apiKey);
      const contact = await api.post('/contacts', { name: 'Mia', email: 'mia@customer.example' });
      const sent = await api.post('/messages', { to: contact.body.data.contact.id, message: 'slowly' });
      expect(sent.status).toBe(202);
      const id = sent.body.data.message.id as string;
      await until(async () => (await delivery(id)).lastError !== null, 'the first attempt over');
      expect((await delivery(id)).lastError).toBe(`SMTP relay failed (ETIMEDOUT): no complete answer within ${DEADLINE_MS} ms`);
      expect((await message(id)).status).toBe('queued');
    } finally {
      await relay.close();
    }
  });
});

describe('the deadline and the lease at start', () => {
  it('a server whose DELIVERY_TIMEOUT_MS is not shorter than its DELIVERY_LEASE_MS refuses to start, with one line', async () => {
    for (const [timeout, lease] of [
      ['30000', '30000'],
      ['60000', undefined],
    ] as const) {
      const server = startServer({ PGLITE_DIR: 'memory://', DELIVERY_TIMEOUT_MS: timeout, ...(lease ? { DELIVERY_LEASE_MS: lease } : {}) });
      expect(await server.exited).toBe(1);
      expect(server.stderr().trim().split('\n')).toEqual([
        `error: invalid configuration: DELIVERY_TIMEOUT_MS (${timeout}) must be shorter than DELIVERY_LEASE_MS (${lease ?? '30000'}): an attempt still waiting for its provider when its lease ends could be sent again by another worker`,
      ]);
    }
  });
});

/** An SMTP relay that answers every command, the greeting included, after `delayMs`, and takes the mail. */
async function slowRelay(delayMs: number) {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    const later = (line: string) => setTimeout(() => socket.writable && socket.write(`${line}\r\n`), delayMs);
    later('220 slow.example ESMTP');
    let buffer = '';
    let data = false;
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        if (data) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          buffer = buffer.slice(end + 5);
          data = false;
          later('250 2.0.0 queued');
          continue;
        }
        const end = buffer.indexOf('\r\n');
        if (end === -1) return;
        const command = buffer.slice(0, end).toUpperCase();
        buffer = buffer.slice(end + 2);
        if (command.startsWith('EHLO') || command.startsWith('HELO')) later('250 slow.example');
        else if (command === 'DATA') {
          data = true;
          later('354 go ahead');
        } else if (command === 'QUIT') {
          later('221 bye');
          setTimeout(() => socket.end(), delayMs + 10);
        } else later('250 2.1.0 ok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
