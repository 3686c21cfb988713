/**
 * The broadcast row (`--broadcast N`): one broadcast of a text to N contacts at a channel's rate R,
 * on gateway processes of the row's own (one, or `processes` on the same database, whose runners
 * share the channel's pace through its `channel_pacing` row: docs/broadcasts.md#pacing), to a fake
 * provider that counts what it takes per wall-clock second and per recipient
 * (bench/broadcast-receiver.ts). Measured: the broadcast's duration against N / R, the most sends
 * the fake took in one second, the gateways' memory growth (read as the crowd row reads it), a
 * light steady load's p99 during the broadcast against the same load on the idle gateways just
 * before, and the counts (every recipient sent, none twice). With `limitSeconds` the fake answers
 * `429` for that long once a third of the recipients are taken, and the row shows the sends per
 * second slowing down and climbing back.
 *
 * The channel uses the `webhook` provider (a signed POST of each message to the channel's URL):
 * the cheapest provider for the gateway, it reaches any contact (a WhatsApp text would need each
 * recipient inside the 24-hour window), and its payload names the recipient for the fake to count.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { ReceiverReport, ReceiverStart } from './broadcast-receiver.js';
import { answer, closeClients, cpuOf, forkBench, idleMemory, p99, sleep, sum } from './crowd.js';
import { IMPORT_REQUEST_ROWS, importBatch } from './import.js';
import { percentile, scrapeGauges } from './measure.js';
import { Progress, note } from './progress.js';
import { adminCommand } from './seed.js';
import { rssMb, type ServerProcess } from './servers.js';

/** The light steady load beside the broadcast: GET /contacts?limit=25 at this rate, over this many connections. */
export const STEADY_RATE = 50;
export const STEADY_CONNECTIONS = 4;
/** Seconds of that load on the idle gateways, just before the broadcast. */
export const IDLE_LOAD_S = 20;
/** Targets (docs/broadcasts.md, docs/benchmarks.md#the-broadcast-row). */
export const BROADCAST_TARGETS = { duration: 0.1, perSecond: 1.1, memoryMb: 100, p99: 1.5, recovered: 0.9 } as const;
/** The row gives up when the broadcast's progress stands still this long. */
const STALL_MS = 60_000;
/** What the fake's `Retry-After` says while it answers 429. */
const RETRY_AFTER_S = 1;

export interface SteadyLoad {
  /** Requests a second asked for, over how many connections, for how long (s). */
  rate: number;
  connections: number;
  seconds: number;
  requests: number;
  /** Answers other than 200 and connection errors. */
  errors: number;
  /** From each request's due time to its answer (ms): a request kept waiting for a connection counts its wait. */
  p50Ms: number | null;
  p99Ms: number | null;
  /** From when its connection took it to its answer (ms): the gateway's time alone, as autocannon counts it. */
  serviceP99Ms: number | null;
}

export interface BroadcastResult {
  recipients: number;
  /** The channel's max rate (`channel:configure --max-rate`), which the broadcast takes by default. */
  rate: number;
  processes: number;
  /** Seconds the fake answered 429 (0: no rate-limit step). */
  limitSeconds: number;
  /** The contacts, imported through POST /contacts/import before the broadcast. */
  imported: { seconds: number; created: number; matched: number };
  /** How long POST /broadcasts took to answer its 202 (ms). */
  createMs: number;
  /** The view at the end: its status and counts. */
  status: string;
  counts: Record<string, number>;
  /** The row gave up waiting (no progress for a minute). */
  stalled: boolean;
  /** The view's startedAt to finishedAt (s), against recipients / rate. */
  durationS: number | null;
  expectedS: number;
  /** The fake's first to last send taken (s). */
  spanS: number | null;
  /** Sends the fake took (200), for distinct recipients, for a recipient already taken; 429s answered; bodies it could not read. */
  taken: number;
  distinct: number;
  twice: number;
  /** Of those, the same delivery again (the worker sent it and could not record it: docs/broadcasts.md#surviving-a-crash's lease case). */
  twiceSameDelivery: number;
  refused: number;
  malformed: number;
  /** Sends taken in each wall-clock second from the first to the last, and 429s answered in the same seconds. */
  perSecond: number[];
  refusedPerSecond: number[];
  /** The most sends taken in one wall-clock second, and within any 1,000 ms. */
  maxPerSecond: number;
  maxSliding: number;
  /**
   * The rate-limit step: its window, as seconds of `perSecond` (from, until); the mean of the whole
   * seconds before it; the first full second after it, and the most of any second after it.
   */
  limit: { fromSecond: number; untilSecond: number; before: number; firstAfter: number | null; bestAfter: number | null } | null;
  /** Each gateway's memory less its young generation after full collections, before and after (MB); the total growth; the peak VmRSS growth while it ran. */
  memory: { before: (number | null)[]; after: (number | null)[]; grewMb: number | null; peakRssGrowthMb: number | null };
  load: { idle: SteadyLoad; during: SteadyLoad; p99Ratio: number | null };
  /** CPU the gateways spent from the broadcast's creation to its end (ms). */
  gatewayCpuMs: number | null;
  /** Rounds whose turns were moved on because the round outlasted its lead (the gateways' logs). */
  lateRounds: number;
  /** The row's readings of GET /broadcasts/{id} not answered 200, by status (0: no answer). */
  pollErrors: Record<number, number>;
  /** Delivery attempts that ended in an error the worker only logs (`delivery attempt failed`: the gateways' logs), e.g. no pool connection to record a send. */
  failedAttempts: number;
  /** The gateways' longest event-loop delay in each second of the broadcast (ms, the worst of the processes; /metrics), and the longest of all. */
  eventLoopMaxMs: number[];
  eventLoopWorstMs: number | null;
  /** The gateways' longest full collection (Mark-Compact, ms of pause: their --trace-gc lines) and how many they made. */
  longestFullGcMs: number | null;
  fullGcs: number;
  /** The machine's 1-minute load average as the broadcast was created and as it ended. */
  loadAverage: { atStart: number; atEnd: number };
}

export interface BroadcastOptions {
  recipients: number;
  rate: number;
  processes: number;
  limitSeconds: number;
}

interface Answer {
  status: number;
  text: string;
}

/**
 * GET /contacts?limit=25 at `rate` a second, open loop, spread over the gateways, until stopped:
 * each request's time runs from when it was due, so a gateway that falls behind shows in the p99.
 */
function steadyLoad(ports: number[], auth: { host: string; apiKey: string }, rate: number, connections: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const times: number[] = [];
  const service: number[] = [];
  let errors = 0;
  let stopped = false;
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  const one = (port: number, due: number) =>
    new Promise<void>((resolve) => {
      const request = http.request(
        { host: '127.0.0.1', port, path: '/api/connect/contacts?limit=25', agent, headers: { host: auth.host, authorization: `Bearer ${auth.apiKey}`, accept: 'application/json' } },
        (response) => {
          response.resume();
          response.on('end', () => {
            if (response.statusCode === 200) {
              times.push(performance.now() - due);
              service.push(performance.now() - written);
            } else errors++;
            resolve();
          });
        },
      );
      let written = due;
      request.on('socket', () => (written = performance.now()));
      request.on('error', () => {
        errors++;
        resolve();
      });
      request.end();
    });
  const running = (async () => {
    for (let n = 0; !stopped; n++) {
      const due = started + (n * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (stopped) break;
      const pending = one(ports[n % ports.length]!, due);
      inFlight.add(pending);
      void pending.then(() => inFlight.delete(pending));
    }
  })();
  return {
    async stop(): Promise<SteadyLoad> {
      stopped = true;
      const seconds = (performance.now() - started) / 1000;
      await running;
      await Promise.all(inFlight);
      agent.destroy();
      return {
        rate,
        connections,
        seconds: Math.round(seconds * 10) / 10,
        requests: times.length + errors,
        errors,
        p50Ms: times.length ? Math.round(percentile(times, 50) * 10) / 10 : null,
        p99Ms: times.length ? Math.round(p99(times)! * 10) / 10 : null,
        serviceP99Ms: service.length ? Math.round(p99(service)! * 10) / 10 : null,
      };
    },
  };
}

/** The receiver's report of what it took so far. */
const receiverReport = (receiver: ChildProcess) => {
  const report = answer<ReceiverReport>(receiver, 'report');
  receiver.send({ type: 'report' });
  return report;
};

/** The longest pause of a full collection (Mark-Compact) the `--trace-gc` logs hold, and how many there were. */
function fullCollections(files: string[]): { longestFullGcMs: number | null; fullGcs: number } {
  const pauses = files.flatMap((file) => {
    try {
      return [...fs.readFileSync(file, 'utf8').matchAll(/Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, ([\d.]+) \//g)].map((match) => Number(match[1]));
    } catch {
      return [];
    }
  });
  return { longestFullGcMs: pauses.length ? Math.round(Math.max(...pauses)) : null, fullGcs: pauses.length };
}

/** Times a line holding `text` appears in the files. */
const countInLogs = (files: string[], text: string) =>
  files.reduce((total, file) => {
    try {
      return total + fs.readFileSync(file, 'utf8').split(text).length - 1;
    } catch {
      return total;
    }
  }, 0);

export async function broadcastRound(
  /** Starts a gateway process of the row, its delivery worker (and so its broadcast runner) on, with `collectOnSignal` (bench/servers.ts). */
  startGateway: (index: number, env: Record<string, string>) => Promise<ServerProcess>,
  tools: { databaseUrl: string; dist: string; host: string; secretsKey: string },
  options: BroadcastOptions,
): Promise<BroadcastResult> {
  const { recipients, rate, processes, limitSeconds } = options;
  const tag = randomBytes(3).toString('hex');
  const gateways: ServerProcess[] = [];
  const receiver = forkBench('broadcast-receiver.ts');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  try {
    const { port: receiverPort } = await answer<{ port: number }>(receiver, 'ready');
    const start: ReceiverStart = { type: 'start', limitAfter: limitSeconds > 0 ? Math.floor(recipients / 3) : 0, limitSeconds, retryAfter: RETRY_AFTER_S };
    receiver.send(start);

    // The channel and its rate, by the measured version's own admin commands. The receiver is on
    // 127.0.0.1, which production refuses as a webhook target unless told otherwise.
    const adminEnv = { SECRETS_KEY: tools.secretsKey, WEBHOOK_PRIVATE_TARGETS: 'allow' };
    const admin = (args: string[]) => adminCommand(tools.databaseUrl, tools.dist, args, adminEnv);
    const channel = await admin(['channel:create', '--hostname', tools.host, '--name', `Broadcast bench ${tag}`, '--webhook-url', `http://127.0.0.1:${receiverPort}/broadcast`]);
    const configured = await admin(['channel:configure', '--id', channel.id!, '--max-rate', String(rate)]);
    if (Number(configured.maxRatePerSecond) !== rate) throw new Error(`channel:configure --max-rate ${rate} answered ${JSON.stringify(configured)}`);
    const auth = { host: tools.host, apiKey: channel.apiKey! };

    // The delivery worker polls at the gateway's default, so that each process finds the messages
    // the others' runners made (docs/broadcasts.md#pacing); the bench's other gateways never poll.
    const env = { DELIVERY_POLL_MS: '1000', WEBHOOK_PRIVATE_TARGETS: 'allow' };
    for (let index = 0; index < processes; index++) gateways.push(await startGateway(index, env));
    const ports = gateways.map((gateway) => Number(new URL(gateway.base).port));
    const request = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      new Promise<Answer>((resolve, reject) => {
        const sent = http.request(
          {
            host: '127.0.0.1',
            port: ports[0],
            path: `/api/connect${path}`,
            method,
            agent,
            headers: { host: auth.host, authorization: `Bearer ${auth.apiKey}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
          },
        );
        sent.on('error', reject);
        sent.end(body === undefined ? undefined : JSON.stringify(body));
      });

    // The audience: N new contacts, each with a name and an email of this run.
    const importStarted = performance.now();
    const ids: string[] = [];
    const imported = { created: 0, matched: 0 };
    for (let from = 0; from < recipients; from += IMPORT_REQUEST_ROWS) {
      const rows = Array.from({ length: Math.min(IMPORT_REQUEST_ROWS, recipients - from) }, (_, k) => ({
        name: `Broadcast ${tag} ${from + k}`,
        email: `broadcast-${tag}-${from + k}@bench.example`,
      }));
      const batch = await importBatch(gateways[0]!.base, auth, rows);
      if (batch.counts.failed) throw new Error(`POST /contacts/import failed ${batch.counts.failed} of the broadcast's contacts`);
      ids.push(...(batch.ids as string[]));
      imported.created += batch.counts.created;
      imported.matched += batch.counts.matched;
    }
    const importSeconds = Math.round((performance.now() - importStarted) / 100) / 10;
    note(`broadcast: ${ids.length.toLocaleString('en-US')} contacts imported in ${importSeconds} s; the light load (${STEADY_RATE} req/s, ${STEADY_CONNECTIONS} connections) on the idle gateway(s) for ${IDLE_LOAD_S} s`);

    const idleLoad = steadyLoad(ports, auth, STEADY_RATE, STEADY_CONNECTIONS);
    await sleep(IDLE_LOAD_S * 1000);
    const idle = await idleLoad.stop();
    const before = await idleMemory(gateways);
    const rawBefore = sum(gateways.map((gateway) => rssMb(gateway.pid)));

    const cpuBefore = cpuOf(gateways);
    const loadAtStart = os.loadavg()[0]!;
    const duringLoad = steadyLoad(ports, auth, STEADY_RATE, STEADY_CONNECTIONS);
    const createStarted = performance.now();
    const body = { name: `Bench broadcast ${tag}`, audience: { contacts: ids }, message: { type: 'text', message: `Bench broadcast ${tag}: the spring sale starts today.` } };
    const created = await request('POST', '/broadcasts', body, { 'idempotency-key': `bench-broadcast-${tag}` });
    const createMs = Math.round(performance.now() - createStarted);
    if (created.status !== 202) {
      await duringLoad.stop();
      throw new Error(`POST /broadcasts answered ${created.status}: ${created.text.slice(0, 300)}`);
    }
    const id = (JSON.parse(created.text) as { data: { broadcast: { id: string } } }).data.broadcast.id;
    note(`broadcast ${id}: ${recipients.toLocaleString('en-US')} recipients at ${rate}/s on ${processes} process(es), 202 in ${createMs} ms${limitSeconds ? `; the fake answers 429 for ${limitSeconds} s once it has taken ${start.limitAfter}` : ''}`);

    type View = { status: string; counts: Record<string, number>; startedAt: string | null; finishedAt: string | null };
    const progress = new Progress('broadcast', recipients, 'recipients');
    let view: View | null = null;
    let lastDone = -1;
    let lastMove = performance.now();
    let peakRaw = rawBefore;
    let stalled = false;
    const pollErrors: Record<number, number> = {};
    const eventLoopMaxMs: number[] = [];
    // A scrape resets each gateway's delay histogram: the next one covers the second after it.
    await Promise.all(gateways.map((gateway) => scrapeGauges(gateway.base)));
    for (;;) {
      await sleep(1000);
      const gauges = await Promise.all(gateways.map((gateway) => scrapeGauges(gateway.base)));
      const worst = Math.max(...gauges.map((gauge) => gauge?.eventLoop.max ?? NaN));
      if (Number.isFinite(worst)) eventLoopMaxMs.push(Math.round(worst));
      // The row's own reading, not the measured load: a refusal is counted and the next second reads again.
      const read = await request('GET', `/broadcasts/${id}`).catch((error: Error) => ({ status: 0, text: error.message }));
      if (read.status !== 200) {
        pollErrors[read.status] = (pollErrors[read.status] ?? 0) + 1;
        if (performance.now() - lastMove > STALL_MS) {
          stalled = true;
          break;
        }
        continue;
      }
      view = (JSON.parse(read.text) as { data: { broadcast: View } }).data.broadcast;
      const raw = sum(gateways.map((gateway) => rssMb(gateway.pid)));
      if (raw !== null && peakRaw !== null) peakRaw = Math.max(peakRaw, raw);
      const done = recipients - (view.counts.pending ?? 0);
      progress.update(view.status === 'finished' ? recipients : Math.min(done, recipients - 1));
      if (view.status === 'finished' || view.status === 'canceled') break;
      if (done !== lastDone) {
        lastDone = done;
        lastMove = performance.now();
      } else if (performance.now() - lastMove > STALL_MS) {
        note(`broadcast: no progress for ${STALL_MS / 1000} s (${done}/${recipients} done, ${view.status}); giving up`);
        stalled = true;
        break;
      }
    }
    const during = await duringLoad.stop();
    const loadAtEnd = os.loadavg()[0]!;
    const gatewayCpuMs = cpuOf(gateways);
    // The last sends reach the fake a moment after the view says finished.
    await sleep(500);
    const received = await receiverReport(receiver);
    const after = await idleMemory(gateways);

    const perSecond = received.perSecond.map((second) => second.taken);
    const refusedPerSecond = received.perSecond.map((second) => second.refused);
    let limit: BroadcastResult['limit'] = null;
    if (received.window && received.perSecond.length) {
      const first = received.perSecond[0]!.second;
      const fromSecond = Math.floor(received.window.from / 1000) - first;
      const untilSecond = Math.floor(received.window.until / 1000) - first;
      // The full seconds before the window (not the first, partly before the first send) and after it.
      const beforeWindow = perSecond.slice(1, Math.max(1, fromSecond));
      const afterWindow = perSecond.slice(untilSecond + 1);
      limit = {
        fromSecond,
        untilSecond,
        // The mean, not the median: sends that come in bursts leave most seconds empty.
        before: beforeWindow.length ? Math.round(beforeWindow.reduce((total, n) => total + n, 0) / beforeWindow.length) : 0,
        firstAfter: afterWindow[0] ?? null,
        bestAfter: afterWindow.length ? Math.max(...afterWindow) : null,
      };
    }
    const total = (mbs: (number | null)[]) => sum(mbs);
    const grew = total(before) !== null && total(after) !== null ? Math.round((total(after)! - total(before)!) * 10) / 10 : null;
    const at = (iso: string | null | undefined) => (iso ? new Date(iso).getTime() : null);
    const startedAt = at(view?.startedAt);
    const finishedAt = at(view?.finishedAt);
    return {
      recipients,
      rate,
      processes,
      limitSeconds,
      imported: { seconds: importSeconds, ...imported },
      createMs,
      status: view?.status ?? 'unknown',
      counts: view?.counts ?? {},
      stalled,
      durationS: startedAt !== null && finishedAt !== null ? Math.round((finishedAt - startedAt) / 100) / 10 : null,
      expectedS: recipients / rate,
      spanS: received.first !== null && received.last !== null ? Math.round((received.last - received.first) / 100) / 10 : null,
      taken: received.taken,
      distinct: received.distinct,
      twice: received.twice,
      twiceSameDelivery: received.twiceSameDelivery,
      refused: received.refused,
      malformed: received.malformed,
      perSecond,
      refusedPerSecond,
      maxPerSecond: perSecond.length ? Math.max(...perSecond) : 0,
      maxSliding: received.maxSliding,
      limit,
      memory: {
        before,
        after,
        grewMb: grew,
        peakRssGrowthMb: peakRaw !== null && rawBefore !== null ? Math.round((peakRaw - rawBefore) * 10) / 10 : null,
      },
      load: { idle, during, p99Ratio: idle.p99Ms && during.p99Ms !== null ? Math.round((during.p99Ms / idle.p99Ms) * 100) / 100 : null },
      gatewayCpuMs: gatewayCpuMs === null || cpuBefore === null ? null : Math.round(gatewayCpuMs - cpuBefore),
      lateRounds: countInLogs(gateways.map((gateway) => gateway.logFile), 'outlasted its lead'),
      loadAverage: { atStart: Math.round(loadAtStart * 100) / 100, atEnd: Math.round(loadAtEnd * 100) / 100 },
      pollErrors,
      eventLoopMaxMs,
      eventLoopWorstMs: eventLoopMaxMs.length ? Math.max(...eventLoopMaxMs) : null,
      ...fullCollections(gateways.map((gateway) => gateway.logFile)),
      failedAttempts: countInLogs(gateways.map((gateway) => gateway.logFile), '"msg":"delivery attempt failed"'),
    };
  } finally {
    agent.destroy();
    await closeClients([receiver]);
    for (const gateway of gateways) await gateway.stop();
  }
}

/** The per-second series as the report prints it: `taken` each second, `+N×429` where the fake refused some. */
export function seriesLine(result: Pick<BroadcastResult, 'perSecond' | 'refusedPerSecond'>): string {
  return result.perSecond.map((taken, i) => (result.refusedPerSecond[i] ? `${taken}(+${result.refusedPerSecond[i]}×429)` : `${taken}`)).join(' ');
}

