import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/app.js';
import { addChannel, bearer } from '../helpers/factories.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { messagingSetup } from '../helpers/messaging.js';
import { restClient } from '../helpers/rest.js';
import { fetchAs, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { subscribeSse } from '../helpers/sse.js';
import { socketClient } from '../helpers/websocket.js';

/**
 * A crowd of subscribers on one process (sized for CI): every event reaches every subscriber, the
 * database reads each event's message once per distinct selection however many subscribers there
 * are, and REST sends made meanwhile are all accepted.
 */

const CROWD = onPostgres ? 200 : 60;
const SENDS = 5;

const BODIES = parse('subscription CrowdBodies { messageAdded { id body conversationId } }');
const STATUSES = parse('subscription CrowdStatuses { messageAdded { id status isEncrypted placeholder body } }');

let statements: string[] = [];
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let served: ServedApp;
let s: Awaited<ReturnType<typeof messagingSetup>>;

beforeAll(async () => {
  app = await appOnOwnDatabase({ onQuery: (sql) => statements.push(sql) });
  served = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
  s = await messagingSetup(app);
});
afterAll(async () => {
  await served.close();
  await app.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Statements reading the messages table through Prisma (the subscriptions' loads among them). */
const messageReadStatements = () => statements.filter((sql) => /^\s*SELECT\b/i.test(sql) && /FROM "public"\."messages"/.test(sql));
const messageReads = () => messageReadStatements().length;
/** The most values a statement binds: Prisma merges the findUnique calls of one tick into one statement binding every id asked for. */
const widest = (sqls: string[]) => Math.max(0, ...sqls.flatMap((sql) => [...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]))));

/** The subscription counters of the app on `port` (src/metrics/metrics.ts). */
async function executionCounts(port: number) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { results: count('connect_subscription_results_total'), executions: count('connect_subscription_executions_total') };
}

type Subscriber = { received: { data?: unknown; errors?: unknown[] }[]; close(): Promise<void> };

type Caller = { host: string; apiKey: string };

/** `count` subscribers of `caller` on `port`, alternating WebSocket and SSE, and the two selections. */
async function crowd(count: number, caller: Caller = s, port = served.port): Promise<Subscriber[]> {
  const fetchHere = fetchAs(caller.host);
  const subscribers: Subscriber[] = [];
  for (let index = 0; index < count; index++) {
    const document = index % 4 < 2 ? BODIES : STATUSES;
    if (index % 2 === 0) {
      const socket = socketClient(port, caller.host, bearer(caller.apiKey));
      const subscription = socket.subscribe(document as never);
      subscribers.push({
        received: subscription.received as Subscriber['received'],
        close: async () => {
          subscription.stop();
          await socket.dispose();
        },
      });
    } else {
      const stream = await subscribeSse((path, init) => fetchHere(`http://127.0.0.1:${port}${path}`, init), bearer(caller.apiKey), document as never);
      subscribers.push({ received: stream.received as Subscriber['received'], close: () => stream.close() });
    }
  }
  return subscribers;
}

async function allReceived(subscribers: Subscriber[], count: number, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (subscribers.some((subscriber) => subscriber.received.length < count)) {
    if (Date.now() > deadline) {
      const short = subscribers.filter((subscriber) => subscriber.received.length < count).length;
      throw new Error(`${short} of ${subscribers.length} subscribers have fewer than ${count} events`);
    }
    await sleep(25);
  }
}

describe('a crowd of subscribers', () => {
  it(`delivers every event to each of ${CROWD}, reading each message once per selection, while REST sends are accepted`, async () => {
    const c = await s.contact({ email: 'crowd@example.com' });
    expect((await s.send({ to: c.id, message: 'opens the conversation' })).status).toBe(202);

    // What one send costs with one subscriber of each selection.
    const few = await crowd(4);
    await sleep(300);
    statements = [];
    expect((await s.send({ to: c.id, message: 'to a few' })).status).toBe(202);
    await allReceived(few, 1);
    const perSendWithFew = messageReads();
    const widestWithFew = widest(messageReadStatements());
    expect(perSendWithFew).toBeGreaterThan(0);
    await Promise.all(few.map((subscriber) => subscriber.close()));

    const subscribers = await crowd(CROWD);
    // Every subscriber registered before anything is published.
    await sleep(onPostgres ? 1000 : 1500);
    statements = [];
    const before = await executionCounts(served.port);
    const sends = await Promise.all(
      Array.from({ length: SENDS }, (_, index) => s.send({ to: c.id, message: `to the crowd ${index}`, ...(index === 0 ? { is_encrypted: true } : {}) })),
    );
    expect(sends.map((sent) => sent.status)).toEqual(Array(SENDS).fill(202));
    await allReceived(subscribers, SENDS);
    await sleep(300);

    const ids = new Set(sends.map((sent) => sent.body.data.message.id as string));
    const encryptedId = sends[0]!.body.data.message.id as string;
    for (const subscriber of subscribers) {
      expect(subscriber.received.every((result) => !result.errors)).toBe(true);
      const messages = subscriber.received.map((result) => (result.data as { messageAdded: { id: string; body: string | null } }).messageAdded);
      expect(new Set(messages.map((message) => message.id))).toEqual(ids);
      // The encrypted message's content is shown to no one.
      expect(messages.find((message) => message.id === encryptedId)!.body).toBeNull();
      expect(messages.filter((message) => message.id !== encryptedId).every((message) => message.body?.startsWith('to the crowd'))).toBe(true);
    }
    // The reads do not grow with the subscribers: as many per send as with four of them.
    expect(messageReads()).toBeLessThanOrEqual(SENDS * perSendWithFew);
    // Each read asks for one message, not one copy per subscriber (the two selections' reads of one
    // event may be merged into one statement: Prisma batches the findUnique calls of one tick).
    expect(widest(messageReadStatements())).toBeLessThanOrEqual(2 * widestWithFew);
    // Each event was executed once per selection (one visibility class), and that result handed to every subscriber.
    const after = await executionCounts(served.port);
    expect(after.results - before.results).toBe(CROWD * SENDS);
    expect(after.executions - before.executions).toBeLessThanOrEqual(SENDS * 2);

    await Promise.all(subscribers.map((subscriber) => subscriber.close()));
  }, 120_000);

  it('executes each event once per visibility class while every subscriber sees only its own channel and workspace', async () => {
    // Three visibility classes: the first channel, a second channel of the same workspace, another workspace.
    const second = await addChannel(app.db.prisma, s.workspace.id, 'Second channel');
    const secondCaller = { host: s.host, apiKey: second.apiKey };
    const secondApi = restClient(app, s.host, second.apiKey);
    const other = await messagingSetup(app);
    const [c, cOther] = [await s.contact({ email: 'classes@example.com', phone: '+14155550123' }), await other.contact({ email: 'elsewhere@example.com' })];
    const first = await crowd(12);
    const secondCrowd = await crowd(8, secondCaller);
    const otherCrowd = await crowd(8, other);
    const off = await crowd(8);
    await sleep(onPostgres ? 800 : 1200);
    const before = await executionCounts(served.port);

    const sent = [
      await s.send({ to: c.id, message: 'first, sealed', is_encrypted: true }),
      await s.send({ to: c.id, message: 'first, plain' }),
      await secondApi.post('/messages', { to: c.id, message: 'second channel' }),
      await other.send({ to: cOther.id, message: 'other workspace' }),
    ];
    expect(sent.map((answer) => answer.status), JSON.stringify(sent.map((answer) => answer.body))).toEqual([202, 202, 202, 202]);
    const [sealed, plain, onSecond, elsewhere] = sent.map((answer) => answer.body.data.message.id as string);

    await allReceived([...first, ...off], 2);
    await allReceived([...secondCrowd, ...otherCrowd], 1);
    await sleep(300);
    const seen = (subscriber: Subscriber) => subscriber.received.map((result) => (result.data as { messageAdded: { id: string; body: string | null } }).messageAdded);
    for (const subscriber of [...first, ...off]) {
      expect(seen(subscriber).map((message) => message.id)).toEqual([sealed, plain]);
      expect(seen(subscriber).map((message) => message.body)).toEqual([null, 'first, plain']);
    }
    for (const subscriber of secondCrowd) expect(seen(subscriber).map((message) => [message.id, message.body])).toEqual([[onSecond, 'second channel']]);
    for (const subscriber of otherCrowd) expect(seen(subscriber).map((message) => [message.id, message.body])).toEqual([[elsewhere, 'other workspace']]);

    // Shared: one execution per event, selection and class (2 events × 2 selections on the first
    // channel, 1 × 2 on each of the others), however many subscribers each class has.
    const after = await executionCounts(served.port);
    expect(after.results - before.results).toBe((12 + 8) * 2 + 8 + 8);
    expect(after.executions - before.executions).toBeLessThanOrEqual(2 * 2 + 2 + 2);

    await Promise.all([...first, ...secondCrowd, ...otherCrowd, ...off].map((subscriber) => subscriber.close()));
  }, 120_000);
});
