import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';
import { fetchAs, requestOnPort, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { sessionSetup } from '../helpers/sessions.js';
import { observeSse, subscribeSse } from '../helpers/sse.js';
import { socketClient } from '../helpers/websocket.js';
import { graphql } from '../gql/index.js';

/*
 * Subscribers of one selection and one credential share one source on a process
 * (src/realtime/delivery.ts FanOut): each event is filtered, held and executed once for all
 * of them, and written to each. What each subscriber sees must be what a stream of its own would
 * give: every event from the moment it subscribed, in order, over SSE and WebSocket alike; the
 * others unaffected when one leaves; the credential's lapse ending every one of them.
 */

const FanOutMessageAdded = graphql(`
  subscription FanOutMessageAdded {
    messageAdded { id body }
  }
`);

type Received = { data?: { messageAdded: { body: string | null } } | null; errors?: readonly { extensions?: { code?: unknown } }[] }[];
const bodies = (received: Received) => received.filter((event) => event.data).map((event) => event.data!.messageAdded.body);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let app: TestApp;
let served: ServedApp;
beforeAll(async () => {
  app = await createTestApp();
  served = await serveOnPort(app.db, app.env, { providers: app.providers });
});
afterAll(async () => {
  await served?.close();
  await app.close();
});

/** The subscription counters of the served app (src/metrics/metrics.ts). */
async function counts() {
  const text = await (await fetch(`http://127.0.0.1:${served.port}/metrics`)).text();
  const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    results: count('connect_subscription_results_total'),
    executions: count('connect_subscription_executions_total'),
    sources: count('connect_subscription_sources'),
  };
}

/** On the served port for `host`: a fetch for subscriptions, and a REST send with the backend key `apiKey`. */
function onServed(host: string, apiKey: string, contactId: string) {
  return {
    fetch: (path: string, init: RequestInit) => fetchAs(host)(`http://127.0.0.1:${served.port}${path}`, init),
    send: (message: string) =>
      requestOnPort(served.port, host, 'POST', '/api/connect/messages', { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, JSON.stringify({ to: contactId, message })),
  };
}

describe('subscribers sharing a source', () => {
  it('each receives every event from when it subscribed, in order, over SSE and WebSocket; one leaving leaves the others whole', { timeout: 60_000 }, async () => {
    const setup = await messagingSetup(app);
    const headers = { authorization: `Bearer ${setup.apiKey}` };
    const contact = await setup.contact({ email: 'fan-out@example.com' });
    const port = onServed(setup.host, setup.apiKey, contact.id);
    const onPort = port.fetch;
    const send = async (message: string) => expect((await port.send(message)).status).toBe(202);

    const first = await subscribeSse(onPort, headers, FanOutMessageAdded);
    const second = await subscribeSse(onPort, headers, FanOutMessageAdded);
    const ws = socketClient(served.port, setup.host, { Authorization: `Bearer ${setup.apiKey}` });
    const overSocket = ws.subscribe(FanOutMessageAdded);
    await sleep(300);
    const before = await counts();
    // Three subscribers, one source: one bus subscription and one credential hold.
    expect(before.sources).toBe(1);

    await send('one');
    for (const stream of [first, second, overSocket]) await stream.waitFor(1);

    // A subscriber that comes later receives what is sent after it, not before.
    const late = await subscribeSse(onPort, headers, FanOutMessageAdded);
    await sleep(300);
    await send('two');
    for (const stream of [first, second, overSocket]) await stream.waitFor(2);
    await late.waitFor(1);

    // One leaving: the others go on.
    await first.close();
    await sleep(200);
    await send('three');
    for (const stream of [second, overSocket]) await stream.waitFor(3);
    await late.waitFor(2);
    await sleep(300);

    expect(bodies(first.received as Received)).toEqual(['one', 'two']);
    expect(bodies(second.received as Received)).toEqual(['one', 'two', 'three']);
    expect(bodies(overSocket.received as Received)).toEqual(['one', 'two', 'three']);
    expect(bodies(late.received as Received)).toEqual(['two', 'three']);
    expect(overSocket.errors).toEqual([]);
    // Each event executed once for all of them, and counted once per subscriber it reached.
    const after = await counts();
    expect(after.results - before.results).toBe(3 + 4 + 3);
    expect(after.executions - before.executions).toBe(3);
    expect(after.sources).toBe(1);

    // Once all have left, a new subscriber starts afresh.
    overSocket.stop();
    await ws.dispose();
    await second.close();
    await late.close();
    await sleep(200);
    // The last one leaving lets go of the source.
    expect((await counts()).sources).toBe(0);
    const again = await subscribeSse(onPort, headers, FanOutMessageAdded);
    await sleep(300);
    await send('four');
    await again.waitFor(1);
    await sleep(200);
    expect(bodies(again.received as Received)).toEqual(['four']);
    await again.close();
  });

  it('a revoked session ends every stream sharing its source, each with its error then complete; nothing sent after reaches any', { timeout: 60_000 }, async () => {
    const setup = await sessionSetup(app);
    const backend = { authorization: `Bearer ${setup.apiKey}` };
    const headers = { authorization: `Bearer ${setup.session.token}` };
    const contact = await setup.contact({ email: 'fan-out-revoked@example.com' });
    const { fetch: onPort, send } = onServed(setup.host, setup.apiKey, contact.id);

    const streams = [await observeSse(onPort, headers, FanOutMessageAdded), await observeSse(onPort, headers, FanOutMessageAdded)];
    const ws = socketClient(served.port, setup.host, { Authorization: `Bearer ${setup.session.token}` });
    const overSocket = ws.subscribe(FanOutMessageAdded);
    await sleep(300);
    expect((await send('before')).status).toBe(202);
    for (const stream of [...streams, overSocket]) await stream.waitFor(1);

    expect((await requestOnPort(served.port, setup.host, 'DELETE', `/api/connect/sessions/${setup.session.id}`, backend)).status).toBe(204);
    expect((await send('after')).status).toBe(202);
    for (const stream of streams) {
      const end = await stream.endsWithin(5000);
      expect(end.completed).toBe(true);
      const received = stream.received as Received;
      expect(bodies(received)).toEqual(['before']);
      expect(received).toHaveLength(2);
      expect(received[1]!.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect((await ws.closed).code).toBe(4403);
    expect(bodies(overSocket.received as Received)).toEqual(['before']);
    await sleep(300);
    for (const stream of streams) expect(bodies(stream.received as Received)).toEqual(['before']);
    for (const stream of streams) await stream.close();
  });
});
