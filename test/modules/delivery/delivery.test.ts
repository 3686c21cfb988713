import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.js';
import type { DeliveryWorkerOptions } from '../../../src/modules/delivery/delivery.worker.js';
import { createChannel } from '../../../src/modules/channels/channels.service.js';
import { Webhook } from 'standardwebhooks';
import { onPostgres } from '../../helpers/app.js';
import { uniqueHost } from '../../helpers/factories.js';
import { restClient } from '../../helpers/rest.js';
import { startReceiver } from '../../helpers/receiver.js';
import { createWorkspace } from '../../../src/modules/workspaces/workspaces.service.js';
import { appPerFile } from '../../helpers/fresh-database.js';
import { testWorker } from '../../helpers/worker.js';
import { testSealer } from '../../helpers/secrets.js';

// A database of its own: workers claim every due delivery, so on the shared run
// database they would deliver other test files' messages under their feet.
const perFile = appPerFile();
const { cleanups } = perFile;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function worker(overrides: Partial<DeliveryWorkerOptions> = {}) {
  const w = testWorker(perFile.app.db, overrides);
  cleanups.push(() => w.stop());
  return w;
}

/** A channel (optionally with a webhook URL) and a REST client acting as it. */
async function channel(webhookUrl?: string) {
  const workspace = await createWorkspace(perFile.app.db.prisma, { hostname: uniqueHost(), name: 'Delivery' });
  const { channel, apiKey } = await createChannel(perFile.app.db.prisma, { workspaceId: workspace.id, name: 'Hooked', type: 'whatsapp', webhookUrl }, testSealer);
  const api = restClient(perFile.app, workspace.hostname, apiKey);
  const send = async (body: Record<string, unknown> = {}) => {
    const result = await api.post('/messages', { to: { phone: '+31612345678' }, message: 'Hello', ...body });
    expect(result.status).toBe(202);
    return result.body.data.message.id as string;
  };
  return { channel, api, send };
}

const message = (id: string) => perFile.app.db.prisma.message.findUniqueOrThrow({ where: { id } });
const delivery = (messageId: string) => perFile.app.db.prisma.delivery.findFirstOrThrow({ where: { messageId } });

/** Runs `w` until `done` holds (or fails after `ms`). */
async function until(done: () => Promise<boolean>, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

describe('delivery worker', () => {
  it('marks a message of a channel without upstream as sent', async () => {
    const { send } = await channel();
    const id = await send();
    expect((await message(id)).status).toBe('queued');
    expect(await worker().runOnce()).toBe(1);
    expect(await message(id)).toMatchObject({ status: 'sent', deliveryAttempts: 1, sentAt: expect.any(Date) });
    expect((await delivery(id)).status).toBe('succeeded');
  });

  it('POSTs to the channel webhook with a Standard Webhooks signature and the stable delivery id', async () => {
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const { send, channel: ch } = await channel(receiver.url);
    const ciphertext = 'c2VhbGVkIGJveA==';
    const id = await send({ message: ciphertext, is_encrypted: true, media_urls: ['https://cdn.example.com/x.png'] });
    const w = worker();
    w.start();
    await until(async () => (await message(id)).status === 'sent');

    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    const deliveryId = (await delivery(id)).id;
    expect(request!.headers['webhook-id']).toBe(deliveryId);
    expect(request!.headers['content-type']).toBe('application/json');
    const timestamp = Number(request!.headers['webhook-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(30);
    const headers = request!.headers as Record<string, string>;
    // Stored sealed; the receiver verifies with the secret as it was shown.
    const secret = testSealer.open(ch.webhookSecret!);
    expect(() => new Webhook(secret).verify(request!.body, headers)).not.toThrow();
    expect(() => new Webhook(secret).verify(`${request!.body} `, headers)).toThrow(/signature/i);
    const payload = JSON.parse(request!.body);
    expect(payload).toMatchObject({
      type: 'message.outbound',
      deliveryId,
      attempt: 1,
      message: { id, body: ciphertext, isEncrypted: true, mediaUrls: ['https://cdn.example.com/x.png'] },
      contact: { phoneNumber: '+31612345678' },
    });
  });

  it('retries failed attempts with growing delays, then succeeds', async () => {
    const receiver = await startReceiver((n) => ({ status: n <= 2 ? 503 : 200 }));
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const id = await send();
    const w = worker({ backoffMs: 100 });
    w.start();
    await until(async () => (await message(id)).status === 'sent');
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([(await delivery(id)).id]));
    expect(receiver.received.map((r) => JSON.parse(r.body).attempt)).toEqual([1, 2, 3]);
    const gaps = [receiver.received[1]!.at - receiver.received[0]!.at, receiver.received[2]!.at - receiver.received[1]!.at];
    // 100 ms then 200 ms, each with jitter down to half.
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
    expect(await message(id)).toMatchObject({ status: 'sent', deliveryAttempts: 3, lastError: null });
  });

  it('marks the message failed after the last attempt, with the reason', async () => {
    const receiver = await startReceiver(() => ({ status: 500 }));
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const id = await send();
    await perFile.app.db.prisma.delivery.updateMany({ where: { messageId: id }, data: { maxAttempts: 3 } });
    worker().start();
    await until(async () => (await message(id)).status === 'failed');
    expect(receiver.received).toHaveLength(3);
    expect(await message(id)).toMatchObject({ status: 'failed', deliveryAttempts: 3, lastError: 'webhook answered HTTP 500', failedAt: expect.any(Date) });
    expect(await delivery(id)).toMatchObject({ status: 'failed', attempts: 3, lockedBy: null });
    await sleep(150);
    expect(receiver.received).toHaveLength(3);
  });

  it('treats an unreachable receiver as a failed attempt', async () => {
    const receiver = await startReceiver();
    await receiver.close();
    const { send } = await channel(receiver.url);
    const id = await send();
    await perFile.app.db.prisma.delivery.updateMany({ where: { messageId: id }, data: { maxAttempts: 1 } });
    worker().start();
    await until(async () => (await message(id)).status === 'failed');
    expect((await message(id)).lastError).toMatch(/^webhook unreachable: /);
  });

  it('delivers work claimed by a worker that crashed, once its lease expires', async () => {
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const id = await send();
    const deliveryId = (await delivery(id)).id;

    // The first worker claims the delivery, then dies without an outcome.
    const crashed = worker({ leaseMs: 300, id: 'crashed-worker' });
    await until(async () => (await crashed.claim(50)).some((row) => row.id === deliveryId) || (await delivery(id)).lockedBy === 'crashed-worker');
    expect(await delivery(id)).toMatchObject({ lockedBy: 'crashed-worker', status: 'pending' });

    const rescuer = worker({ id: 'rescuer' });
    await rescuer.runOnce();
    expect(receiver.received).toHaveLength(0);
    expect((await message(id)).status).toBe('queued');

    rescuer.start();
    await until(async () => (await message(id)).status === 'sent');
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([deliveryId]);
    expect(await delivery(id)).toMatchObject({ status: 'succeeded', attempts: 2, lockedBy: null });
  });

  it('keeps a worker whose lease was taken over from overwriting the outcome; both attempts carry one delivery id', async () => {
    // The first request hangs past the lease; the second is answered at once.
    const receiver = await startReceiver((n) => ({ status: n === 1 ? 500 : 200, delayMs: n === 1 ? 700 : 0 }));
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const id = await send();
    const slow = worker({ leaseMs: 250, id: 'slow-worker', pollMs: 10_000 });
    const slowRun = (async () => {
      while (!receiver.received.length) await slow.runOnce();
    })();
    await until(async () => receiver.received.length === 1);
    const fast = worker({ id: 'fast-worker' });
    fast.start();
    await until(async () => (await message(id)).status === 'sent');
    await slowRun;
    await until(async () => (await delivery(id)).lockedBy === null);
    await sleep(800);
    expect(receiver.received).toHaveLength(2);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // The slow worker's late HTTP 500 did not turn the delivered message into a retry or a failure.
    expect(await message(id)).toMatchObject({ status: 'sent' });
    expect(await delivery(id)).toMatchObject({ status: 'succeeded' });
  });

  it('never claims a delivery it is still attempting, even once the lease has run out', async () => {
    // The receiver answers after the lease has run out: the worker records that answer
    // rather than sending the message again beside it.
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 600 }));
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const id = await send();
    worker({ leaseMs: 150 }).start();
    await until(async () => (await message(id)).status === 'sent');
    await sleep(300);
    expect(receiver.received).toHaveLength(1);
    expect(await delivery(id)).toMatchObject({ status: 'succeeded', attempts: 1, lockedBy: null });
  });

  it.runIf(onPostgres)('lets several workers share one database: each message is delivered exactly once', async () => {
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 5 }));
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await send({ message: `bulk ${i}` }));
    const workers = [worker({ batchSize: 3 }), worker({ batchSize: 3 }), worker({ batchSize: 3 })];
    for (const w of workers) w.start();
    await until(async () => (await perFile.app.db.prisma.message.count({ where: { id: { in: ids }, status: 'sent' } })) === ids.length, 15_000);
    const perDelivery = new Map<string, number>();
    for (const r of receiver.received) perDelivery.set(String(r.headers['webhook-id']), (perDelivery.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    expect(perDelivery.size).toBe(30);
    expect([...perDelivery.values()].every((n) => n === 1)).toBe(true);
  });

  it('never writes message bodies to the logs', async () => {
    const receiver = await startReceiver((n) => ({ status: n === 1 ? 500 : 200 }));
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    const id = await send({ message: 'TOPSECRET-cipher', is_encrypted: true });
    worker({ logger }).start();
    await until(async () => (await message(id)).status === 'sent');
    expect(lines.join('')).toContain('message delivered');
    expect(lines.join('')).not.toContain('TOPSECRET');
  });

  it('delivers locally on a channel without an upstream, and logs it as provider "local"', async () => {
    const { send } = await channel();
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const id = await send();
    worker({ logger }).start();
    await until(async () => (await message(id)).status === 'sent');
    const delivered = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'message delivered');
    expect(delivered).toEqual([expect.objectContaining({ provider: 'local', recorded: true })]);
  });
});

describe('transactional outbox', () => {
  it('gives every stored message exactly one delivery and a rejected send neither', async () => {
    const { send, api, channel: ch } = await channel();
    const ids = [await send(), await send({ message: 'second' })];
    const rejected = await api.post('/messages', { to: { phone: '+31612345678' }, type: 'template', template: { name: 'missing', parameters: [] } });
    expect(rejected.status).toBe(422);
    const messages = await perFile.app.db.prisma.message.findMany({ where: { channelId: ch.id }, include: { deliveries: true } });
    expect(messages.map((m) => m.id).sort()).toEqual(ids.sort());
    expect(messages.map((m) => m.deliveries.length)).toEqual([1, 1]);
  });
});

describe('a worker whose database pool is short', () => {
  // Only on PostgreSQL: the embedded database's one connection is never waited for.
  it.skipIf(!onPostgres)('records a sent message once a connection frees, within its lease, and never sends it again', async () => {
    // The worker's pool has one connection; the receiver holds it from the moment the message
    // arrives, for longer than the pool's wait (1.5 s) and shorter than the lease.
    const [{ name }] = (await perFile.app.db.prisma.$queryRaw<{ name: string }[]>`SELECT current_database() AS name`) as [{ name: string }];
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const short = await openDatabase({ databaseUrl: url.toString(), poolSize: 1 });
    cleanups.push(() => short.close());
    let held: Promise<unknown> | undefined;
    const receiver = await startReceiver(() => {
      held ??= short.withSession((session) => session.query('SELECT pg_sleep(2.5)'));
      return { status: 200, delayMs: 100 };
    });
    cleanups.push(receiver.close);
    const { send } = await channel(receiver.url);
    const id = await send();
    const w = testWorker(short, { leaseMs: 5000, logger: perFile.app.logger });
    cleanups.push(() => w.stop());
    w.start();
    await until(async () => (await message(id)).status === 'sent', 10_000);
    await held;
    expect(await delivery(id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    // Past the lease, nothing took the delivery again.
    await sleep(6000);
    expect(receiver.received).toHaveLength(1);
    expect(perFile.app.logs.some((line) => line.includes('delivery attempt failed'))).toBe(false);
  }, 30_000);
});
