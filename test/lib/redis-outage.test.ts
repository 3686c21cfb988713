import { parse } from 'graphql';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventBus } from '../../src/realtime/bus.js';
import type { DomainEvent, EventBus } from '../../src/context/services.js';
import type { DeliveryWorker } from '../../src/modules/delivery/delivery.worker.js';
import { onPostgres } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { migratedDatabase, request, sleep } from '../helpers/load.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js';
import { restClient } from '../helpers/rest.js';
import { startServer, waitFor } from '../helpers/server-process.js';
import { subscribeSse } from '../helpers/sse.js';
import { signedHeaders, startWhatsAppFake, textMessage, webhookBody, WHATSAPP_SETTINGS, whatsappWorkspace, type WhatsAppFake } from '../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../helpers/worker.js';

/**
 * docs/operating-safely.md, Staying up: Redis is an accelerator, never a dependency. A real redis-server of the test's own
 * is stopped and started again while messages are sent, conversations closed and replies come in.
 */

let redis: OwnRedis & { close(): Promise<void> };
let fake: WhatsAppFake;

beforeAll(async () => {
  redis = await startOwnRedis();
  fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
});
afterAll(async () => {
  await fake?.close();
  await redis?.close();
});

async function until(done: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await sleep(25);
  }
}

/** How many connections listen on a pub/sub channel of the test's Redis. */
async function subscribers(channel: string): Promise<number> {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    const [, count] = (await client.pubsub('NUMSUB', channel)) as [string, number];
    return Number(count);
  } catch {
    return 0;
  } finally {
    client.disconnect();
  }
}

/** The log lines (JSON text) whose message matches. */
const linesOf = (logs: string[], pattern: RegExp) => logs.filter((line) => pattern.test(JSON.parse(line).msg ?? ''));

/** A second process's view of the bus: what it hears on Redis, and its log. */
function otherProcess(prefix: string) {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const bus = createEventBus({ redisUrl: redis.url, prefix, logger: pino({ level: 'info' }, sink) });
  const heard: DomainEvent[] = [];
  void (async () => {
    for await (const event of bus.subscribe('message.created')) heard.push(event);
  })();
  return { bus, heard, logs };
}

describe('a Redis outage in one process', () => {
  let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
  let worker: DeliveryWorker;
  let other: ReturnType<typeof otherProcess>;
  const prefix = `outage-${process.pid}-${Date.now()}:`;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onRejection);
    app = await appOnOwnDatabase({
      env: { REDIS_URL: redis.url, REDIS_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '1000' },
      providers: testProviders({ settings: { WHATSAPP_API_URL: fake.url } }),
    });
    worker = appWorker(app);
    worker.start();
    other = otherProcess(prefix);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onRejection);
    await worker?.stop();
    await other?.bus.dispose();
    await app?.drop();
  });

  it('keeps sending, closing and taking replies while Redis is down, logs the outage once each way, and shares events again once it is back', async () => {
    const ws = await whatsappWorkspace(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    const inbound = (phone: string, text: string) => {
      const body = webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, contacts: [{ waId: phone.slice(1), name: 'Ann Example' }], messages: [textMessage(phone, text)] }]);
      return app.fetch(ws.host, `/webhooks/whatsapp/${ws.channel.id}`, { method: 'POST', headers: signedHeaders(body, ws.settings.appSecret), body });
    };
    const messages = (direction: 'inbound' | 'outbound') => app.db.prisma.message.findMany({ where: { channelId: ws.channel.id, direction } });
    await until(async () => (await subscribers(`${prefix}message.created`)) === 2, 'both processes listening');

    // Redis up: a reply processed here is heard by the other process.
    expect((await inbound('+31612340001', 'before')).status).toBe(200);
    await until(async () => (await messages('inbound')).length === 1, 'the first reply');
    await until(() => other.heard.length === 1, 'the other process hearing it');

    // This process's own subscribers hear everything, whatever Redis does.
    const stream = await subscribeSse((path, init) => app.fetch(ws.host, path, init), bearer(ws.apiKey), parse('subscription { messageAdded { id body } }') as never);

    await redis.stop();
    const contactId = (await messages('inbound'))[0]!.contactId;
    const sends = [];
    for (let i = 0; i < 5; i++) sends.push(await api.post('/messages', { to: contactId, message: `during the outage ${i}` }));
    for (const sent of sends) {
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      // Rate limits count in this process meanwhile: still announced.
      expect(sent.headers.get('ratelimit-limit')).toBe('1000');
    }
    const conversationId = sends[0]!.body.data.message.conversationId as string;
    const closed = await api.post(`/conversations/${conversationId}/close`, {});
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect((await inbound('+31612340002', 'during')).status).toBe(200);
    await until(async () => (await messages('inbound')).length === 2, 'the reply during the outage');
    await until(async () => (await messages('outbound')).every((message) => message.status === 'sent'), 'the sends delivered');
    const received = await stream.waitFor(6);
    expect(received.map((event) => (event.data as { messageAdded: { body: string } }).messageAdded.body).sort()).toEqual(
      ['during', ...sends.map((_, i) => `during the outage ${i}`)].sort(),
    );
    // Long enough for any command queued while Redis was away to give up.
    await sleep(2500);
    expect(rejections).toEqual([]);
    expect(other.heard).toHaveLength(1);
    expect(linesOf(app.logs, /event bus \(Redis\) unreachable/)).toHaveLength(1);
    expect(linesOf(app.logs, /rate limit store \(Redis\) unreachable/)).toHaveLength(1);
    expect(linesOf(app.logs, /credential announcements unreachable/)).toHaveLength(1);

    await redis.start();
    await until(() => linesOf(app.logs, /event bus \(Redis\) reachable again/).length === 1, 'the event bus back');
    await until(() => linesOf(app.logs, /rate limit store \(Redis\) reachable again/).length === 1, 'the rate limit store back');
    await until(() => linesOf(other.logs, /event bus \(Redis\) reachable again/).length === 1, 'the other process back');
    await until(async () => (await subscribers(`${prefix}message.created`)) === 2, 'both processes listening again');
    // Listening resumed: a reply processed here reaches the other process again.
    expect((await inbound('+31612340003', 'after')).status).toBe(200);
    await until(() => other.heard.length === 2, 'the other process hearing the reply after the outage');
    await sleep(300);
    expect(linesOf(app.logs, /unreachable/)).toHaveLength(3);
    expect(linesOf(app.logs, /event bus \(Redis\) reachable again|rate limit store \(Redis\) reachable again/)).toHaveLength(2);
    // Connecting is announced once, at the first connection, not again after an outage.
    expect(linesOf(app.logs, /event bus \(Redis\) connected/)).toHaveLength(1);
    expect(linesOf(app.logs, /rate limit store \(Redis\) connected/)).toHaveLength(1);
    expect(rejections).toEqual([]);
    await stream.close();
  });

  it('keeps deployments that share a Redis apart: another prefix hears nothing of these events', async () => {
    const stranger = otherProcess(`${prefix}other:`);
    try {
      await until(async () => (await subscribers(`${prefix}other:message.created`)) === 1, 'the stranger listening');
      const ws = await whatsappWorkspace(app.db.prisma);
      const heardBefore = other.heard.length;
      const body = webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, contacts: [{ waId: '31612340009', name: 'Bo' }], messages: [textMessage('+31612340009', 'hello')] }]);
      expect((await app.fetch(ws.host, `/webhooks/whatsapp/${ws.channel.id}`, { method: 'POST', headers: signedHeaders(body, ws.settings.appSecret), body })).status).toBe(200);
      await until(() => other.heard.length === heardBefore + 1, 'the same deployment hearing it');
      await sleep(300);
      expect(stranger.heard).toEqual([]);
      // Keys and the other channels are under the prefix too: rate-limit counts, credential announcements.
      const counted = await app.fetch(ws.host, '/api/connect/channels', { headers: { authorization: `Bearer ${ws.apiKey}` } });
      expect(counted.headers.get('ratelimit-limit')).not.toBeNull();
      const client = new Redis(redis.url);
      try {
        expect((await client.keys('*')).every((key) => key.startsWith(prefix))).toBe(true);
        expect(await client.keys(`${prefix}rate-limit:*`)).not.toEqual([]);
        const channels = await client.pubsub('CHANNELS', '*');
        expect(channels.filter((channel) => !String(channel).startsWith(prefix))).toEqual([]);
        expect(channels).toContain(`${prefix}credential-invalidations`);
      } finally {
        client.disconnect();
      }
    } finally {
      await stranger.bus.dispose();
    }
  });
});

// A server process runs a delivery worker, so it gets a database of its own.
describe.runIf(onPostgres)('a Redis outage under a server process', () => {
  it('never takes the process down: sends, replies and deliveries go on, the outage is logged once each way', async () => {
    const database = await migratedDatabase('connect_redis_outage');
    const ws = await whatsappWorkspace(database.db.prisma);
    const server = startServer({
      DATABASE_URL: database.url,
      DELIVERY_WORKER: '1',
      DELIVERY_POLL_MS: '50',
      REDIS_URL: redis.url,
      REDIS_PREFIX: `process-${Date.now()}:`,
      WHATSAPP_API_URL: fake.url,
      RATE_LIMIT_PER_MINUTE: '1000',
    });
    try {
      const base = await server.listening;
      const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${ws.apiKey}` }) =>
        request(base, { method, path, host: ws.host, headers, body });
      const reply = async (phone: string, text: string) => {
        const body = webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, contacts: [{ waId: phone.slice(1), name: 'Ann' }], messages: [textMessage(phone, text)] }]);
        const answer = await request(base, { method: 'POST', path: `/webhooks/whatsapp/${ws.channel.id}`, host: ws.host, headers: signedHeaders(body, ws.settings.appSecret), body: JSON.parse(body) });
        expect(answer.status).toBe(200);
      };
      const messages = (direction: 'inbound' | 'outbound') => database.db.prisma.message.findMany({ where: { channelId: ws.channel.id, direction } });
      await reply('+31612340011', 'before');
      await until(async () => (await messages('inbound')).length === 1, 'the first reply');
      const contactId = (await messages('inbound'))[0]!.contactId;

      await redis.stop();
      const sent = await Promise.all(Array.from({ length: 10 }, (_, i) => call('POST', '/api/connect/messages', { to: contactId, message: `outage ${i}` })));
      expect(sent.map((outcome) => outcome.status)).toEqual(Array(10).fill(202));
      expect((await call('POST', `/api/connect/conversations/${sent[0]!.body.data.message.conversationId}/close`, {})).status).toBe(200);
      await reply('+31612340012', 'during');
      await until(async () => (await messages('outbound')).filter((message) => message.status === 'sent').length === 10, 'the sends delivered', 15_000);
      await until(async () => (await messages('inbound')).length === 2, 'the reply during the outage');
      // The crash came some seconds after the first publish: wait past that, then still serving.
      await sleep(6000);
      expect(server.child.exitCode).toBeNull();
      expect((await call('GET', '/api/connect/channels')).status).toBe(200);

      await redis.start();
      await waitFor(server, /event bus \(Redis\) reachable again/);
      await waitFor(server, /rate limit store \(Redis\) reachable again/);
      await reply('+31612340013', 'after');
      await until(async () => (await messages('inbound')).length === 3, 'the reply after the outage');
      const lines = server.output().split('\n');
      expect(lines.filter((line) => line.includes('event bus (Redis) unreachable'))).toHaveLength(1);
      expect(lines.filter((line) => line.includes('rate limit store (Redis) unreachable'))).toHaveLength(1);
      expect(lines.filter((line) => line.includes('unhandled promise rejection'))).toEqual([]);
      expect(server.child.exitCode).toBeNull();
    } finally {
      await redis.start();
      server.child.kill('SIGTERM');
      await server.exited;
      await database.drop();
    }
  }, 90_000);

  it('logs a rejection nobody handles as a defect, with its stack, and goes on serving', async () => {
    // A module loaded before the server that leaves a rejection unhandled once the server is up.
    const server = startServer({ PGLITE_DIR: 'memory://', SEED_DEMO: '0', NODE_OPTIONS: '--import ./test/helpers/unhandled-rejection.mjs' });
    try {
      const base = await server.listening;
      await waitFor(server, /unhandled promise rejection/);
      const line = server.output().split('\n').find((text) => text.includes('unhandled promise rejection'))!;
      const entry = JSON.parse(line);
      expect(entry.level).toBe(50);
      expect(entry.err.message).toBe('a rejection nobody handles');
      expect(entry.err.stack).toMatch(/unhandled-rejection\.mjs/);
      expect((await request(base, { method: 'GET', path: '/healthz', host: 'localhost' })).status).toBe(200);
      expect(server.child.exitCode).toBeNull();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
