import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { testWorker } from '../helpers/worker.js';
import { onPostgres } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { loadChannel, migratedDatabase, phone, request, sleep, type Outcome } from '../helpers/load.js';
import { startReceiver } from '../helpers/receiver.js';
import { startServer } from '../helpers/server-process.js';
import { rawExchange } from '../helpers/real-port.js';

/** Concurrent senders; half reuse keep-alive connections, half open one per request. */
const SENDERS = 6;
/** How long the process may take from SIGTERM to exit. */
const EXIT_WITHIN_MS = 25_000;

// The server process runs a delivery worker, so it gets a database of its own:
// on the run's database it would claim other test files' deliveries.
describe.skipIf(!onPostgres)('SIGTERM under load', () => {
  it('answers every request it accepted, releases its delivery claims and exits 0', async () => {
    const database = await migratedDatabase('connect_shutdown');
    // A receiver that holds every delivery far longer than a shutdown may take: claims stay in flight.
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 120_000 }));
    const ws = await loadChannel(database.db, receiver.url);
    const server = startServer({
      DATABASE_URL: database.url,
      DELIVERY_WORKER: '1',
      DELIVERY_POLL_MS: '50',
      // Longer than the shutdown bound: waiting for the receiver's answer cannot be how the claims end.
      DELIVERY_TIMEOUT_MS: '120000',
      // A deadline is always shorter than the lease (docs/operating-safely.md, Staying up).
      DELIVERY_LEASE_MS: '180000',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: SENDERS });
    try {
      const base = await server.listening;
      const pid = Number(/"pid":(\d+)/.exec(server.output())![1]);

      const outcomes: (Outcome & { text: string })[] = [];
      let signalAt = Infinity;
      let exitedAt = Infinity;
      void server.exited.then(() => (exitedAt = Date.now()));
      let n = 0;
      const sender = async (agent: http.Agent | false) => {
        const deadline = Date.now() + 45_000;
        // Until the server stops answering: refused once it no longer listens, or gone.
        while (Date.now() < deadline && exitedAt === Infinity) {
          const text = `shutdown load ${++n}`;
          const outcome = await request(base, {
            method: 'POST',
            path: '/api/connect/messages',
            host: ws.host,
            headers: { ...bearer(ws.apiKey), 'idempotency-key': `key-${n}` },
            body: { to: { phone: phone(n) }, message: text },
            agent,
          });
          outcomes.push({ ...outcome, text });
          if (outcome.error === 'ECONNREFUSED' && outcome.started > signalAt) break;
        }
      };
      const senders = Array.from({ length: SENDERS }, (_, i) => sender(i % 2 === 0 ? keepAlive : false));

      // Load runs until the worker holds claims whose deliveries hang at the receiver.
      const claimed = async () =>
        database.db.prisma.delivery.findMany({ where: { lockedBy: { not: null }, status: 'pending' }, select: { id: true, lockedBy: true } });
      let held: { id: string; lockedBy: string | null }[] = [];
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(50)) {
        if (receiver.received.length > 0 && outcomes.length >= 100) held = await claimed();
        if (held.length) break;
      }
      expect(held.length, server.output().slice(-2000)).toBeGreaterThan(0);
      expect(new Set(held.map((d) => d.lockedBy)).size).toBe(1);

      signalAt = Date.now();
      process.kill(pid, 'SIGTERM');
      const code = await Promise.race([server.exited, sleep(EXIT_WITHIN_MS).then(() => 'still running')]);
      const exitMs = Date.now() - signalAt;
      await Promise.all(senders);

      expect(code, server.output().slice(-2000)).toBe(0);
      expect(exitMs).toBeLessThan(EXIT_WITHIN_MS);
      expect(server.output()).toContain('"msg":"stopped"');

      // Every answer is a complete 202: nothing accepted was cut off or failed.
      const answered = outcomes.filter((o) => o.status !== undefined);
      const failed = outcomes.filter((o) => o.error !== undefined);
      expect(answered.filter((o) => o.status !== 202).map((o) => [o.status, o.body])).toEqual([]);
      // Requests that were on their way when the signal came were answered, not dropped.
      const inFlightAtSignal = answered.filter((o) => o.started < signalAt && o.ended >= signalAt);
      const answeredAfterSignal = answered.filter((o) => o.ended >= signalAt);
      expect(inFlightAtSignal.length).toBeGreaterThan(0);
      // A request that got no answer found the server closed: it was never processed.
      expect([...new Set(failed.map((o) => o.error))].filter((e) => !['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(e!))).toEqual([]);
      const stored = await database.db.prisma.message.findMany({ where: { channelId: ws.channel.id }, select: { id: true, body: true } });
      expect(stored.map((m) => m.body).sort()).toEqual(answered.map((o) => o.text).sort());
      expect(new Set(stored.map((m) => m.id))).toEqual(new Set(answered.map((o) => o.body.data.message.id)));

      // The claims the process held are released, not left to run out their lease.
      expect(await claimed()).toEqual([]);
      expect(await database.db.prisma.delivery.count({ where: { lockedUntil: { not: null } } })).toBe(0);
      expect(server.output()).toContain('delivery leases released');
      // So another worker takes exactly that work at once.
      const next = testWorker(database.db, { leaseMs: 30_000, id: 'next-worker' });
      const taken = new Set((await next.claim(10_000)).map((row) => row.id));
      expect(held.filter((d) => !taken.has(d.id))).toEqual([]);

      console.log(
        `shutdown: ${outcomes.length} requests, ${answered.length} answered 202 (${inFlightAtSignal.length} in flight at SIGTERM, ` +
          `${answeredAfterSignal.length} answered after it), ${failed.length} refused after close ` +
          `(${[...new Set(failed.map((o) => o.error))].join(', ') || 'none'}); ${held.length} claims released; exit 0 after ${exitMs} ms`,
      );
    } finally {
      server.child.kill('SIGKILL');
      keepAlive.destroy();
      await receiver.close();
      await database.drop();
    }
  }, 90_000);
});

/** A server process with a channel to act as: on the run's PostgreSQL in a database of its own, or embedded in memory. */
async function serverWithChannel() {
  if (onPostgres) {
    const database = await migratedDatabase('connect_streams');
    const ws = await loadChannel(database.db);
    const server = startServer({ DATABASE_URL: database.url });
    return { server, host: ws.host, apiKey: ws.apiKey, drop: () => database.drop() };
  }
  // The embedded database is the server's own: the demo workspace's key comes from the banner.
  const server = startServer({ PGLITE_DIR: 'memory://', SEED_DEMO: '1' });
  await server.listening;
  for (const deadline = Date.now() + 10_000; !/Bearer (cak_[\w-]+)/.test(server.output()) && Date.now() < deadline; ) await sleep(50);
  const apiKey = /Bearer (cak_[\w-]+)/.exec(server.output())![1]!;
  return { server, host: 'localhost', apiKey, drop: async () => {} };
}

describe('SIGTERM with subscription streams open', () => {
  it('ends every stream with complete at once, so the process exits without waiting out the drain', async () => {
    const { server, host, apiKey, drop } = await serverWithChannel();
    try {
      const base = await server.listening;
      const port = Number(new URL(base).port);
      const pid = Number(/"pid":(\d+)/.exec(server.output())![1]);
      const query = JSON.stringify({ query: 'subscription { messageAdded { id } }' });
      const streams = Array.from({ length: 3 }, () =>
        rawExchange(
          port,
          `POST /graphql HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${apiKey}\r\nAccept: text/event-stream\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${query.length}\r\n\r\n${query}`,
          { timeoutMs: 30_000 },
        ),
      );
      // The streams are open once the server has answered their heads; give them that moment.
      await sleep(1500);
      const signalAt = Date.now();
      process.kill(pid, 'SIGTERM');
      const code = await Promise.race([server.exited, sleep(15_000).then(() => 'still running')]);
      const exitMs = Date.now() - signalAt;
      expect(code, server.output().slice(-2000)).toBe(0);
      // The drain allows 10 s for requests still running; open streams no longer count as such.
      expect(exitMs).toBeLessThan(5000);
      for (const stream of await Promise.all(streams)) {
        expect(stream.status).toBe(200);
        expect(stream.head.toLowerCase()).toContain('content-type: text/event-stream');
        expect(stream.ended).toBe('closed');
        expect(stream.body).toContain('event: complete');
      }
    } finally {
      server.child.kill('SIGKILL');
      await drop();
    }
  }, 120_000);
});

describe.skipIf(!onPostgres)('SIGTERM with provider connections open', () => {
  it('closes the connections the providers keep alive before it stops, rather than leaving them to the exit', async () => {
    const database = await migratedDatabase('connect_shutdown_providers');
    let server: ReturnType<typeof startServer> | undefined;
    // A receiver that answers at once and keeps its connections alive: the gateway's client keeps them open.
    const closed: boolean[] = [];
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    receiver.keepAliveTimeout = 60_000;
    receiver.on('connection', (socket) => socket.on('close', () => closed.push(!server!.output().includes('"msg":"stopped"'))));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const ws = await loadChannel(database.db, `http://127.0.0.1:${(receiver.address() as import('node:net').AddressInfo).port}/hook`);
      server = startServer({ DATABASE_URL: database.url, DELIVERY_WORKER: '1', DELIVERY_POLL_MS: '50', WEBHOOK_PRIVATE_TARGETS: 'allow' });
      const base = await server.listening;
      const pid = Number(/"pid":(\d+)/.exec(server.output())![1]);
      const sent = await request(base, { method: 'POST', path: '/api/connect/messages', host: ws.host, headers: bearer(ws.apiKey), body: { to: { phone: phone(1) }, message: 'kept alive' } });
      expect(sent.status).toBe(202);
      const delivered = async () => (await database.db.prisma.delivery.count({ where: { messageId: sent.body.data.message.id, status: 'succeeded' } })) === 1;
      for (const deadline = Date.now() + 10_000; !(await delivered()) && Date.now() < deadline; ) await sleep(50);
      expect(await delivered()).toBe(true);
      expect(closed).toEqual([]);
      process.kill(pid, 'SIGTERM');
      expect(await Promise.race([server.exited, sleep(15_000).then(() => 'still running')]), server.output().slice(-2000)).toBe(0);
      await sleep(100);
      // Closed by the gateway while it was still stopping: before its last log line.
      expect(closed).toEqual([true]);
    } finally {
      server?.child.kill('SIGKILL');
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      await database.drop();
    }
  }, 120_000);
});
