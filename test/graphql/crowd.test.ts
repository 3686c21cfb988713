import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { messagingSetup } from '../helpers/messaging.js';
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

type Subscriber = { received: { data?: unknown; errors?: unknown[] }[]; close(): Promise<void> };

/** `count` subscribers, alternating WebSocket and SSE, and the two selections. */
async function crowd(count: number): Promise<Subscriber[]> {
  const fetchHere = fetchAs(s.host);
  const subscribers: Subscriber[] = [];
  for (let index = 0; index < count; index++) {
    const document = index % 4 < 2 ? BODIES : STATUSES;
    if (index % 2 === 0) {
      const socket = socketClient(served.port, s.host, bearer(s.apiKey));
      const subscription = socket.subscribe(document as never);
      subscribers.push({
        received: subscription.received as Subscriber['received'],
        close: async () => {
          subscription.stop();
          await socket.dispose();
        },
      });
    } else {
      const stream = await subscribeSse((path, init) => fetchHere(`http://127.0.0.1:${served.port}${path}`, init), bearer(s.apiKey), document as never);
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
    // Each read asks for one message, not one copy per subscriber.
    expect(widest(messageReadStatements())).toBeLessThanOrEqual(widestWithFew);

    await Promise.all(subscribers.map((subscriber) => subscriber.close()));
  }, 120_000);
});
