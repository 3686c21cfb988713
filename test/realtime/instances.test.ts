import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';
import { fetchAs, requestOnPort, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { subscribeSse } from '../helpers/sse.js';
import { socketClient } from '../helpers/websocket.js';

/*
 * The realtime engine's state belongs to the app that made it (docs/architecture.md, "The realtime
 * engine"): two apps in one process share nothing — not the results of an event executed for a
 * cohort, not the loads of its rows, not the bus each made for itself.
 */

type Added = { messageAdded: { id: string; body: string | null } };
const MessageAdded = parse('subscription InstancesMessageAdded { messageAdded { id body } }') as TypedDocumentNode<Added, Record<string, never>>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let app: TestApp;
const served: ServedApp[] = [];
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(async () => {
  await Promise.all(served.map((one) => one.close()));
  await app?.close();
});

/** The subscription counters of the app on `port` (src/metrics/metrics.ts). */
async function counts(port: number) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { results: count('connect_subscription_results_total'), executions: count('connect_subscription_executions_total') };
}

/** Two subscribers of one cohort on `port`: one over WebSocket, one over SSE. */
async function pair(port: number, host: string, apiKey: string) {
  const ws = socketClient(port, host, { Authorization: `Bearer ${apiKey}` });
  const overSocket = ws.subscribe(MessageAdded);
  const overSse = await subscribeSse((path, init) => fetchAs(host)(`http://127.0.0.1:${port}${path}`, init), { authorization: `Bearer ${apiKey}` }, MessageAdded);
  return {
    streams: [overSocket, overSse],
    async close() {
      overSocket.stop();
      await overSse.close();
      await ws.dispose();
    },
  };
}

describe('two apps in one process', () => {
  it('share nothing of an event: on one bus, each app executes it for its own cohort and delivers it to its own subscribers', { timeout: 60_000 }, async () => {
    const s = await messagingSetup(app);
    const contact = await s.contact({ email: 'two-apps@example.com' });
    // Both apps hear the same bus: the very same event object reaches both.
    const first = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
    const second = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
    served.push(first, second);
    const onFirst = await pair(first.port, s.host, s.apiKey);
    const onSecond = await pair(second.port, s.host, s.apiKey);
    await sleep(300);
    const before = [await counts(first.port), await counts(second.port)];

    const sent = await s.send({ to: contact.id, message: 'to both apps' });
    expect(sent.status).toBe(202);
    const id = sent.body.data.message.id as string;
    for (const stream of [...onFirst.streams, ...onSecond.streams]) {
      const [result] = await stream.waitFor(1);
      expect(result!.data).toEqual({ messageAdded: { id, body: 'to both apps' } });
    }

    // Each app executed the event once for its cohort and handed that result to its two
    // subscribers: neither took the other's result (a module-wide cache would leave the second
    // app with no execution of its own).
    const after = [await counts(first.port), await counts(second.port)];
    for (const index of [0, 1]) {
      expect(after[index]!.executions - before[index]!.executions).toBe(1);
      expect(after[index]!.results - before[index]!.results).toBe(2);
    }
    await onFirst.close();
    await onSecond.close();
  });

  it('share no bus of their own: what one app publishes reaches only its own subscribers', { timeout: 60_000 }, async () => {
    const s = await messagingSetup(app);
    const contact = await s.contact({ email: 'apart@example.com' });
    // Each app makes its own bus (no REDIS_URL: nothing crosses between them).
    const first = await serveOnPort(app.db, app.env, { providers: app.providers });
    const second = await serveOnPort(app.db, app.env, { providers: app.providers });
    served.push(first, second);
    const onFirst = await pair(first.port, s.host, s.apiKey);
    const onSecond = await pair(second.port, s.host, s.apiKey);
    await sleep(300);

    const sent = await requestOnPort(
      first.port,
      s.host,
      'POST',
      '/api/connect/messages',
      { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
      JSON.stringify({ to: contact.id, message: 'to the first app only' }),
    );
    expect(sent.status).toBe(202);
    for (const stream of onFirst.streams) await stream.waitFor(1);
    await sleep(500);
    for (const stream of onSecond.streams) expect(stream.received).toEqual([]);
    await onFirst.close();
    await onSecond.close();
  });
});
