/**
 * The WhatsApp rows that are not a plain request rate: inbound events processed
 * into messages (and the lag from a webhook's 200 to GraphQL's `messageAdded`),
 * and messages delivered from `POST /messages` to the Cloud API's stand-in (and
 * that lag), each server's worker doing the delivering.
 */
import http from 'node:http';
import type pg from 'pg';
import { note } from './progress.js';
import { drainOutbox, load, scrapeGauges, spread, type Counter, type EventLoopDelay, type Spread } from './measure.js';
import { inboundWebhook, type BenchContext, type BenchRequest, type Operation } from './operations.js';
import type { ServerProcess } from './servers.js';
import type { BenchWhatsAppFake } from './whatsapp-fake.js';

export interface ProcessingRound {
  /** A backlog of webhooks posted to the gateway (worker on) at once, `connections` at a time, and accepted. */
  accepted: number;
  /** Those events processed into messages per second: from the first webhook until the last is stored. */
  processedPerS: number;
  /** The steady load: webhooks per second offered (half of processedPerS), and how many. */
  steadyRate: number;
  steadySent: number;
  /** Messages per second that reached `messageAdded` during the steady load. */
  steadyPerS: number;
  /** From each webhook's 200 to its message on the `messageAdded` subscription (GraphQL over SSE), ms. */
  lag: Spread;
  /** Steady webhooks whose message never reached the subscription within 30 s. */
  missing: number;
  /** Webhooks refused or failed during the round. */
  errors: number;
  eventLoop: EventLoopDelay | null;
}

export interface DeliverySide {
  /** POST /messages answered 202 per second. */
  acceptedPerS: number;
  /** Messages taken by the stand-in per second: from the window's first request to the last arrival. */
  deliveredPerS: number;
  delivered: number;
  /** From sending POST /messages to the stand-in taking the message, ms. */
  lag: Spread;
  errors: number;
  samples: string[];
  eventLoop: EventLoopDelay | null;
}

export interface DeliveryRound {
  gateway: DeliverySide;
  floor: DeliverySide;
}

/** Subscribes to `messageAdded` of the channel the key acts for, over GraphQL SSE; calls `onMessage` with each message's body and arrival time. */
async function subscribeMessages(base: string, ctx: BenchContext, onMessage: (body: string, at: number) => void): Promise<() => void> {
  const body = JSON.stringify({ query: 'subscription BenchMessageAdded { messageAdded { id body direction } }' });
  return new Promise((resolve, reject) => {
    const request = http.request(`${base}/graphql`, {
      method: 'POST',
      headers: {
        host: ctx.host,
        authorization: `Bearer ${ctx.whatsapp.apiKey}`,
        accept: 'text/event-stream',
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`the messageAdded subscription was refused: HTTP ${response.statusCode}`));
        return;
      }
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^event: next$/m.test(block) ? /^data: (.*)$/m.exec(block)?.[1] : undefined;
          if (!data) continue;
          const message = (JSON.parse(data) as { data?: { messageAdded?: { body?: string } } }).data?.messageAdded;
          if (message?.body) onMessage(message.body, at);
        }
      });
      response.on('error', () => {});
      resolve(() => request.destroy());
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** Waits until no inbound event is left to process; the seconds it took. */
export async function drainInbound(monitor: pg.ClientBase, timeoutMs = 180_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await monitor.query<{ n: string }>(`SELECT count(*) AS n FROM deliveries WHERE status = 'pending' AND inbound_event_id IS NOT NULL`);
    if (Number(rows[0]!.n) === 0) return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutMs) throw new Error(`${rows[0]!.n} inbound events still unprocessed after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * The stored events of an acceptance window, and their deliveries, removed: nothing processes them.
 * A webhook still in flight when the load stopped is stored a moment later (its client gave up,
 * its server did not), so passes go on until one, 100 ms after the last, finds nothing more.
 */
export async function discardInbound(monitor: pg.ClientBase): Promise<void> {
  for (;;) {
    const { rowCount } = await monitor.query(`DELETE FROM deliveries WHERE inbound_event_id IS NOT NULL AND status = 'pending'`);
    await monitor.query(`DELETE FROM inbound_events e WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.inbound_event_id = e.id)`);
    if (!rowCount) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const inboundNumber = (ctx: BenchContext) => {
  const pattern = new RegExp(`^Bench inbound ${ctx.run} (\\d+):`);
  return (body: string) => {
    const match = pattern.exec(body);
    return match ? Number(match[1]) : null;
  };
};

/** Posts one request over `agent`; resolves with the status (0 when the connection failed) and when the answer ended. */
function post(base: string, request: BenchRequest, agent: http.Agent): Promise<{ status: number; at: number }> {
  return new Promise((resolve) => {
    const req = http.request(`${base}${request.path}`, { method: request.method, headers: request.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, at: performance.now() }));
      res.on('error', () => resolve({ status: 0, at: performance.now() }));
    });
    req.on('error', () => resolve({ status: 0, at: performance.now() }));
    req.end(request.body);
  });
}

/** Webhooks per second of duration in the backlog a processing round starts with. */
const BACKLOG_PER_S = 50;

/**
 * One round of inbound processing on the gateway with its worker on: a backlog of signed
 * webhooks (50 per second of `duration`) posted `connections` at a time, and the worker's rate
 * taken until the last is a message; then a steady load at half that rate for `duration` s, each
 * webhook's 200 timed against its message's arrival on `messageAdded`.
 */
export async function inboundProcessing(
  gateway: ServerProcess,
  ctx: BenchContext,
  counter: Counter,
  monitor: pg.ClientBase,
  options: { connections: number; duration: number },
): Promise<ProcessingRound> {
  await drainInbound(monitor);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const backlog = Math.max(20, Math.round(BACKLOG_PER_S * options.duration));
  let accepted = 0;
  let errors = 0;
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (next < backlog) {
        next++;
        const { status } = await post(gateway.base, inboundWebhook(ctx, counter.next()), agent);
        if (status === 200) accepted++;
        else errors++;
      }
    }),
  );
  await drainInbound(monitor);
  const processedPerS = accepted / ((performance.now() - started) / 1000);

  const rate = Math.max(5, Math.round(processedPerS / 2));
  const number = inboundNumber(ctx);
  const answered = new Map<number, number>();
  const arrived = new Map<number, number>();
  const unsubscribe = await subscribeMessages(gateway.base, ctx, (body, at) => {
    const n = number(body);
    if (n !== null) arrived.set(n, at);
  });
  const ids: number[] = [];
  await scrapeGauges(gateway.base);
  const steadyStart = performance.now();
  try {
    const total = Math.round(rate * options.duration);
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      // Open loop: webhook i leaves at its time whatever the answers before it did.
      const due = steadyStart + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const n = counter.next();
      ids.push(n);
      inFlight.push(
        post(gateway.base, inboundWebhook(ctx, n), agent).then(({ status, at }) => {
          if (status === 200) answered.set(n, at);
          else errors++;
        }),
      );
    }
    await Promise.all(inFlight);
    const deadline = performance.now() + 30_000;
    while (performance.now() < deadline && [...answered.keys()].some((n) => !arrived.has(n))) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    unsubscribe();
    agent.destroy();
  }
  const gauges = await scrapeGauges(gateway.base);
  const lags = [...answered].filter(([n]) => arrived.has(n)).map(([n, at]) => arrived.get(n)! - at);
  const lastArrival = Math.max(...ids.map((n) => arrived.get(n) ?? 0));
  const steadyPerS = lags.length / ((lastArrival - steadyStart) / 1000);
  await drainInbound(monitor);
  return {
    accepted,
    processedPerS,
    steadyRate: rate,
    steadySent: ids.length,
    steadyPerS,
    lag: spread(lags),
    missing: answered.size - lags.length,
    errors,
    eventLoop: gauges?.eventLoop ?? null,
  };
}

/** Contacts that wrote in on the WhatsApp channel: inside WhatsApp's 24-hour window, so a text may go to them. */
export async function repliers(monitor: pg.ClientBase, channelId: string): Promise<string[]> {
  const { rows } = await monitor.query<{ contact_id: string }>(
    `SELECT DISTINCT contact_id FROM messages WHERE channel_id = $1 AND direction = 'inbound' AND created_at > now() - interval '23 hours'`,
    [channelId],
  );
  return rows.map((r) => r.contact_id);
}

/**
 * One round of delivery, on each server in turn (alternating who goes first): autocannon posts
 * texts to contacts that wrote in for `duration` s, the server's worker sends them to the
 * stand-in, and the window ends when the outbox is empty. Each send is timed from its request to
 * its arrival at the stand-in.
 */
export async function deliveryRound(
  servers: ServerProcess[],
  round: number,
  ctx: BenchContext,
  counter: Counter,
  monitor: pg.ClientBase,
  fake: BenchWhatsAppFake,
  recipients: string[],
  options: { connections: number; duration: number },
): Promise<DeliveryRound> {
  if (!recipients.length) throw new Error('no contact wrote in on the WhatsApp channel: nothing may be sent to');
  const order = round % 2 === 0 ? servers : [...servers].reverse();
  const pattern = new RegExp(`^Bench delivery ${ctx.run} (\\d+):`);
  const out: Partial<DeliveryRound> = {};
  for (const server of order) {
    await drainOutbox(monitor);
    const sentAt = new Map<number, number>();
    const arrived = new Map<number, number>();
    fake.onText((text, at) => {
      const match = pattern.exec(text);
      if (match) arrived.set(Number(match[1]), at);
    });
    const op: Operation = {
      id: 'wa.deliver',
      title: 'delivery',
      transport: 'rest',
      write: true,
      request: (c, n) => {
        sentAt.set(n, performance.now());
        return {
          method: 'POST',
          path: '/api/connect/messages',
          headers: { host: c.host, authorization: `Bearer ${c.whatsapp.apiKey}`, accept: 'application/json', 'content-type': 'application/json' },
          body: JSON.stringify({ to: recipients[n % recipients.length], message: `Bench delivery ${c.run} ${n}: your parcel with the charger is on its way.` }),
        };
      },
    };
    const started = performance.now();
    const window = await load(server.base, op, ctx, counter, { connections: options.connections, duration: options.duration, gauges: server.name === 'gateway' });
    await drainOutbox(monitor);
    // The last sends' answers from the stand-in reach the listener just after the outbox empties.
    await new Promise((resolve) => setTimeout(resolve, 200));
    fake.onText(null);
    const lags = [...arrived].filter(([n]) => sentAt.has(n)).map(([n, at]) => at - sentAt.get(n)!);
    const last = Math.max(started, ...arrived.values());
    out[server.name] = {
      acceptedPerS: window.rps,
      deliveredPerS: lags.length / ((last - started) / 1000),
      delivered: lags.length,
      lag: spread(lags),
      errors: window.errors,
      samples: window.samples,
      eventLoop: window.eventLoop,
    };
    note(
      `round ${round + 1}  ${'wa.deliver'.padEnd(18)} ${server.name.padEnd(7)} ${window.rps.toFixed(0).padStart(6)} req/s  ` +
        `${out[server.name]!.deliveredPerS.toFixed(0)} delivered/s  lag p50 ${out[server.name]!.lag.p50.toFixed(0)} ms  p99 ${out[server.name]!.lag.p99.toFixed(0)} ms  errors ${window.errors}` +
        `${window.samples[0] ? ` (${window.samples[0].slice(0, 120)})` : ''}`,
    );
  }
  return out as DeliveryRound;
}

