import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../../src/generated/prisma/client.js';
import { BroadcastRunner } from '../../../src/modules/broadcasts/broadcasts.runner.js';
import { createChannel } from '../../../src/modules/channels/channels.service.js';
import { createWorkspace } from '../../../src/modules/workspaces/workspaces.service.js';
import { uuid7 } from '../../../src/lib/uuid.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { uniqueHost } from '../../helpers/factories.js';
import { startReceiver } from '../../helpers/receiver.js';
import { restClient } from '../../helpers/rest.js';
import { testSealer } from '../../helpers/secrets.js';
import { TWILIO_SETTINGS, startTwilioFake, twilioRateLimitAnswer, twilioWorkspace, type TwilioFake } from '../../helpers/twilio-fake.js';
import { WHATSAPP_SETTINGS, rateLimitAnswer, startWhatsAppFake, whatsappWorkspace, type WhatsAppFake } from '../../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../../helpers/worker.js';

/**
 * A provider's rate-limit answer (docs/broadcasts.md#rate-limit-answers): the channel's rate is
 * halved and its Retry-After honoured before anything more goes out on it, in the channel's
 * `channel_pacing` row that every process reads; the message is retried, not failed, and the rate
 * climbs back by itself.
 */

let wa: WhatsAppFake;
let tw: TwilioFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;

beforeAll(async () => {
  wa = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  tw = await startTwilioFake({ accountSid: TWILIO_SETTINGS.accountSid, authToken: TWILIO_SETTINGS.authToken });
  // A database of its own: the runners and workers take every due broadcast and delivery.
  app = await appOnOwnDatabase({ providers: testProviders({ settings: { WHATSAPP_API_URL: wa.url, TWILIO_API_URL: tw.url } }) });
}, 120_000);
afterAll(async () => {
  await app.drop();
  await wa.close();
  await tw.close();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached in time: ${JSON.stringify(value)}`);
    await sleep(25);
  }
}

/**
 * A process's delivery worker and broadcast runner (as a server process runs them), started; `stop`
 * ends both. One delivery in flight at a time, so that every send after a rate-limit answer was
 * started after it was heard; a lease and a grace long enough that no send is repeated under load
 * (the lease case of docs/delivery.md#workers is not what is tested here).
 */
function startProcess(id: string) {
  const worker = appWorker(app, { id: `worker-${id}`, batchSize: 1, leaseMs: 30_000, stopGraceMs: 30_000 });
  const runner = new BroadcastRunner({ prisma: app.db.prisma, sql: app.db.query, logger: app.logger, events: app.events, providers: app.providers.list, onMessagesMade: () => worker.nudge(), idleMs: 50, id: `runner-${id}` });
  worker.start();
  runner.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await runner.stop();
    await worker.stop();
  };
  cleanups.push(stop);
  return { stop };
}

interface PaceRow {
  limited_rate: number | null;
  limited_at: Date | null;
  blocked_until: Date | null;
}
const paceOf = async (channelId: string) =>
  (await app.db.query<PaceRow>(Prisma.sql`SELECT limited_rate, limited_at, blocked_until FROM channel_pacing WHERE channel_id = ${channelId}::uuid`))[0];

/** How many of `times` fall in [from, to). */
const within = (times: number[], from: number, to: number) => times.filter((at) => at >= from && at < to).length;

describe('a rate-limit answer during a broadcast', () => {
  it('halves the channel, waits out Retry-After in every process, retries the message and climbs back', async () => {
    const s = await whatsappWorkspace(app.db.prisma);
    await app.db.prisma.channel.update({ where: { id: s.channel.id }, data: { maxRatePerSecond: 10 } });
    await app.db.prisma.channelTemplate.create({
      data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'sale', language: 'en', category: 'marketing', status: 'approved', body: 'Sale for {{1}}', parameterCount: 1 },
    });
    const n = 70;
    const contacts = Array.from({ length: n }, (_, i) => ({ id: uuid7(), workspaceId: s.workspace.id, name: `Buyer ${i}`, phone: `+3161${String(2000000 + i).padStart(7, '0')}` }));
    await app.db.prisma.contact.createMany({ data: contacts });
    const api = restClient(app, s.host, s.apiKey);
    const start = wa.sent.length;
    // The eleventh send is refused: Meta's throughput error, wait two seconds.
    wa.failNext(...Array.from({ length: 10 }, () => 'take' as const), rateLimitAnswer(130429, '2'));

    const first = startProcess('a');
    const created = await api.post('/broadcasts', {
      name: 'Throttled',
      audience: { contacts: contacts.map((c) => c.id) },
      message: { type: 'template', template: { name: 'sale', language: 'en', parameters: ['{{contact.name}}'] } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const id = created.body.data.broadcast.id as string;
    expect(created.body.data.broadcast.ratePerSecond).toBe(10);

    // The first process hears the answer and records it in the channel's row; then it stops, and
    // another process carries on from the row alone.
    const pace = await until(() => paceOf(s.channel.id), (row) => row?.limited_rate != null, 'the rate-limit answer recorded');
    expect(pace!.limited_rate).toBe(5);
    await first.stop();
    startProcess('b');

    const done = await until(async () => (await api.get(`/broadcasts/${id}`)).body.data.broadcast, (view) => view.status === 'finished', 'finished', 60_000);
    // The refused message was retried, not failed: every recipient got exactly one message.
    expect(done.counts).toEqual({ total: n, pending: 0, sent: n, delivered: 0, read: 0, failed: 0, skipped: 0 });
    const sends = wa.sent.slice(start);
    expect(sends).toHaveLength(n + 1);
    const refused = sends[10]!;
    expect(sends.filter((send) => send.body.to === refused.body.to)).toHaveLength(2);
    const delivery = await app.db.query<{ attempts: number; last_error: string | null }>(Prisma.sql`
      SELECT d.attempts, m.last_error FROM deliveries d JOIN messages m ON m.id = d.message_id
       WHERE m.broadcast_id = ${id}::uuid AND m.contact_id = (SELECT id FROM contacts WHERE phone = ${`+${refused.body.to}`} AND workspace_id = ${s.workspace.id}::uuid)`);
    // The rate-limited attempt is not counted.
    expect(delivery).toEqual([{ attempts: 1, last_error: null }]);

    // Retry-After honoured: nothing went out on the channel until the two seconds had passed, in
    // the process that heard the answer or the one that carried on.
    const after = sends.slice(11).map((send) => send.at);
    const blockedUntil = new Date((await paceOf(s.channel.id))!.blocked_until!).getTime();
    expect(blockedUntil - refused.at).toBeGreaterThanOrEqual(1950);
    const resumed = Math.min(...after);
    expect(resumed).toBeGreaterThanOrEqual(blockedUntil);
    // Halved when sending resumed (5 a second), then climbing back by itself to the channel's 10.
    expect(within(after, resumed, resumed + 1000)).toBeLessThanOrEqual(6);
    const turns = (
      await app.db.query<{ run_at: Date }>(Prisma.sql`
        SELECT d.run_at FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.broadcast_id = ${id}::uuid ORDER BY d.run_at`)
    ).map((r) => new Date(r.run_at).getTime());
    const last = turns[turns.length - 1]!;
    expect(within(turns, last - 1000, last + 1)).toBeGreaterThanOrEqual(8);
  }, 90_000);
});

describe('rate-limit answers of one-to-one messages', () => {
  it('Twilio 20429 with an HTTP-date Retry-After: retried uncounted after the date; a message sent meanwhile waits for it too', async () => {
    const s = await twilioWorkspace(app.db.prisma);
    const api = restClient(app, s.host, s.apiKey);
    const start = tw.sent.length;
    const resumeAt = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    tw.failNext(twilioRateLimitAnswer(new Date(resumeAt).toUTCString()));
    startProcess('t');
    const first = await api.post('/messages', { to: { phone: '+31612340101' }, message: 'first' });
    expect(first.status).toBe(202);
    await until(() => paceOf(s.channel.id), (row) => row?.blocked_until != null, 'the block recorded');
    const second = await api.post('/messages', { to: { phone: '+31612340102' }, message: 'second' });
    expect(second.status).toBe(202);
    const status = async (messageId: string) => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: messageId } })).status;
    await until(async () => [await status(first.body.data.message.id), await status(second.body.data.message.id)], (all) => all.every((v) => v === 'sent'), 'both sent');
    const sends = tw.sent.slice(start);
    expect(sends).toHaveLength(3);
    // Nothing went out on the channel before the date Twilio gave, the held message included.
    for (const send of sends.slice(1)) expect(send.at).toBeGreaterThanOrEqual(resumeAt - 50);
    const row = await paceOf(s.channel.id);
    expect(row).toMatchObject({ limited_rate: 0.5 });
    expect(new Date(row!.blocked_until!).getTime()).toBe(resumeAt);
    const attempts = await app.db.prisma.delivery.findMany({ where: { messageId: { in: [first.body.data.message.id, second.body.data.message.id] } }, select: { attempts: true } });
    expect(attempts.map((d) => d.attempts)).toEqual([1, 1]);
    expect(app.logs.some((line) => line.includes('rate limited by the provider') && line.includes('20429'))).toBe(true);
  }, 60_000);

  it("WhatsApp's 131056 and 80007 (its descriptor's codes) and a webhook receiver's 429 are retried, not failed, and halve the channel", async () => {
    startProcess('o');
    for (const code of [131056, 80007] as const) {
      const s = await whatsappWorkspace(app.db.prisma);
      await app.db.prisma.channelTemplate.create({
        data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'hello', language: 'en', category: 'utility', status: 'approved', body: 'Hello', parameterCount: 0 },
      });
      const api = restClient(app, s.host, s.apiKey);
      wa.failNext(rateLimitAnswer(code));
      const sent = await api.post('/messages', { to: { phone: '+31612340201' }, type: 'template', template: { name: 'hello', language: 'en', parameters: [] } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      const message = await until(
        () => app.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.data.message.id } }),
        (m) => m.status !== 'queued',
        `the message after ${code}`,
      );
      expect(message).toMatchObject({ status: 'sent', failureReason: null });
      // WhatsApp's 80 a second, halved; no Retry-After: no block.
      expect(await paceOf(s.channel.id)).toMatchObject({ limited_rate: 40, blocked_until: null });
    }

    const receiver = await startReceiver((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    cleanups.push(receiver.close);
    const workspace = await createWorkspace(app.db.prisma, { hostname: uniqueHost('rl'), name: 'Hooked' });
    const { channel, apiKey } = await createChannel(app.db.prisma, { workspaceId: workspace.id, name: 'Hook', type: 'whatsapp', webhookUrl: receiver.url }, testSealer);
    const contact = await app.db.prisma.contact.create({ data: { workspaceId: workspace.id, name: 'Hooked', email: 'hooked@example.com' } });
    const sent = await restClient(app, workspace.hostname, apiKey).post('/messages', { to: contact.id, message: 'hi' });
    expect(sent.status).toBe(202);
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.data.message.id } })).status, (v) => v === 'sent', 'the webhook message sent');
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.at - receiver.received[0]!.at).toBeGreaterThanOrEqual(950);
    expect(await paceOf(channel.id)).toMatchObject({ limited_rate: 50 });
  }, 60_000);
});
