import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import type { Arrival, CrowdArrivals, CrowdTransport, OpenCrowd } from './crowd-client.js';
import { ROOT, collectGarbage, cpuMs, rssMb, type ServerProcess } from './servers.js';

/**
 * The crowd row: `subscribers` GraphQL subscriptions to `messageAdded` on the gateway, half over
 * WebSocket (graphql-ws) and half over SSE (distinct connections), or all over one of them
 * (`transport`), while REST sends arrive at `rate` per second for `seconds`. Measured: the
 * gateway's memory per idle subscription, the events delivered against those expected (every send
 * to every subscriber), the fan-out p99 (from a send's 202 to the last subscriber receiving it),
 * over both transports and over each, and the sends' own p99.
 *
 * The row starts gateway processes of its own: `processes` of them, sharing Redis when more than
 * one (the subscribers split evenly across them, the sends alternating between them), each
 * event executed once per cohort (src/realtime/cohorts.ts). The subscribers are held by `clients` processes of their own (bench/crowd-client.ts), so
 * that reading 100,000 events a second is not one process's work.
 */
export interface CrowdResult {
  subscribers: number;
  /** What the subscribers used: WebSocket and SSE in turn, or one of them. */
  transport: CrowdTransport;
  /** Gateway processes the subscribers were spread across (sharing Redis when more than one). */
  processes: number;
  /** Client processes holding the subscribers. */
  clients: number;
  sends: number;
  accepted: number;
  /** Sends not answered 202, by their status or the client's error code. */
  refused: Record<string, number>;
  /** Resident memory the gateway grew by per open, idle subscription, in KiB (each reading taken after full collections, the young generation left out). */
  kbPerSubscriber: number | null;
  /** Each gateway's resident memory less its young generation (MB, after full collections) with a tenth of the crowd open, and with all of it. */
  rssMb: { tenth: (number | null)[]; all: (number | null)[] };
  delivered: number;
  expected: number;
  fanOutP99Ms: number | null;
  /** The fan-out p99 to the last subscriber over each transport (null: none used it). */
  fanOutP99ByTransportMs: { websocket: number | null; sse: number | null };
  /** The slowest fan-out of each second of sends, in order: whether the gateway kept up or fell behind. */
  fanOutBySecondMs: number[];
  sendP99Ms: number | null;
  /** Executions of the subscription's selection, against results handed to subscribers (the gateways' /metrics). */
  executions: number | null;
  results: number | null;
  /** CPU the gateways, and the client processes, spent from the first send to the last delivery (ms). */
  gatewayCpuMs: number | null;
  clientCpuMs: number | null;
}

/** A counter's or gauge's value in a gateway's /metrics (`series`: the name with its labels, if any). */
export async function metric(base: string, series: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    const line = text.split('\n').find((each) => each.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : null;
  } catch {
    return null;
  }
}
export const sum = (values: (number | null)[]) => (values.every((value) => value !== null) ? values.reduce<number>((total, value) => total + value!, 0) : null);

/** How the report names what the crowd's subscribers used. */
export const TRANSPORT_NAMES: Record<CrowdTransport, string> = { both: 'WebSocket and SSE', websocket: 'WebSocket', sse: 'SSE' };

const DOCUMENT = 'subscription BenchCrowd { messageAdded { id body status } }';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The CPU (ms) the processes of `list` have spent so far, all of them together; null when one cannot be read. */
export const cpuOf = (list: { pid?: number | undefined }[]) => sum(list.map((process) => cpuMs(process.pid!)));

/** Each accepted send's time from its 202 to the last subscriber over `slot` (1: WebSocket, 2: SSE; 0: either). */
export const fanOutOver = (accepted: Map<string, number>, arrivals: Map<string, Arrival>, slot: 0 | 1 | 2) =>
  [...accepted].flatMap(([id, at]) => {
    const entry = arrivals.get(id);
    const last = entry && (slot ? entry[slot] : Math.max(entry[1], entry[2]));
    return last ? [last - at] : [];
  });

/** What was spent between two readings of cpuOf (gateways, clients), and how much the gateways' idle memory grew (MB). */
export function crowdTotals(cpuBefore: (number | null)[], cpuAfter: (number | null)[], before: (number | null)[], after: (number | null)[]) {
  const spent = (i: number) => (cpuAfter[i] === null || cpuBefore[i] === null ? null : Math.round(cpuAfter[i]! - cpuBefore[i]!));
  const grew = before.every((mb) => mb !== null) && after.every((mb) => mb !== null) ? after.reduce((total, mb, i) => total + mb! - before[i]!, 0) : null;
  return { spent, grew };
}

export const p99 = (values: number[]) => (values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))]! : null);

/** The next IPC message of `type` from a client process; rejected if the process exits first. */
export const answer = <T>(child: ChildProcess, type: string) =>
  new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a crowd client exited (${code})`));
    const onMessage = (message: { type: string }) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });

/**
 * Each gateway's resident memory after full collections, less its young generation: V8 grows
 * and shrinks that (up to 3 × --max-semi-space-size) with the rate the process allocates at, so
 * that two readings of the same process can differ by 20 MB or more whatever it holds.
 */
export async function idleMemory(gateways: ServerProcess[]): Promise<(number | null)[]> {
  collectGarbage(gateways.map((gateway) => gateway.pid));
  // Answered on the thread that collects: once its collections are done.
  const young = await Promise.all(gateways.map((gateway) => metric(gateway.base, 'nodejs_heap_space_size_total_bytes{space="new"}')));
  // Sweeping finishes on other threads; freed pages go back a moment later.
  await sleep(1000);
  return gateways.map((gateway, index) => {
    const mb = rssMb(gateway.pid);
    return mb === null || young[index] === null ? null : mb - young[index]! / 2 ** 20;
  });
}

/** A helper process of a bench row (`file` under bench/), run by tsx and spoken to over IPC. */
export const forkBench = (file: string) => fork(path.join(ROOT, 'bench', file), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

/** A client process of the crowd rows (bench/crowd-client.ts). */
export const forkClient = () => forkBench('crowd-client.ts');

/** Tells each helper process (a crowd client, the broadcast row's receiver) to close and waits for it to exit (killed after 10 s). */
export async function closeClients(clients: ChildProcess[]): Promise<void> {
  await Promise.all(
    clients.map(async (child) => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

export interface CrowdOptions {
  subscribers: number;
  /** Default `both`. */
  transport?: CrowdTransport;
  processes?: number;
  clients?: number;
  /** Where the processes share events when more than one. */
  redisUrl: string;
  /** Settings for the gateways besides those the row sets. */
  env?: Record<string, string>;
  rate?: number;
  seconds?: number;
  /** Seconds of sends at the same rate before the measured ones (default 0). */
  warmup?: number;
}

export const now = () => performance.timeOrigin + performance.now();

export async function crowdRound(
  /** Starts a gateway process of the row, with `collectOnSignal` (bench/servers.ts). */
  startGateway: (index: number, env: Record<string, string>) => Promise<ServerProcess>,
  ctx: { host: string; apiKey: string; sendContacts: string[] },
  options: CrowdOptions,
): Promise<CrowdResult> {
  const { subscribers } = options;
  const rate = options.rate ?? 50;
  const seconds = options.seconds ?? 10;
  const warmup = options.warmup ?? 0;
  const processes = options.processes ?? 1;
  const transport = options.transport ?? 'both';
  const clientCount = Math.max(1, Math.min(options.clients ?? Math.ceil(subscribers / 500), subscribers));
  const env: Record<string, string> = { ...options.env };
  if (processes > 1) Object.assign(env, { REDIS_URL: options.redisUrl, REDIS_PREFIX: `bench-crowd-${randomBytes(4).toString('hex')}:` });
  const gateways: ServerProcess[] = [];
  const clients: ChildProcess[] = [];
  try {
    for (let index = 0; index < processes; index++) gateways.push(await startGateway(index, env));
    const ports = gateways.map((gateway) => Number(new URL(gateway.base).port));
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

    const memory = () => idleMemory(gateways);
    const perClient = Math.ceil(subscribers / clientCount);
    const shares: { child: ChildProcess; first: number; count: number }[] = [];
    for (let index = 0; index < clientCount; index++) {
      const first = index * perClient;
      const count = Math.min(perClient, subscribers - first);
      if (count <= 0) break;
      const child = forkClient();
      clients.push(child);
      shares.push({ child, first, count });
    }
    /** Each client opens its subscribers from `from` to `to` (fractions of its share). */
    const openShare = (from: number, to: number) =>
      Promise.all(
        shares.map(({ child, first, count }) => {
          const start = first + Math.floor(count * from);
          const end = first + Math.floor(count * to);
          const open: OpenCrowd = {
            type: 'open',
            document: DOCUMENT,
            host: ctx.host,
            apiKey: ctx.apiKey,
            ports: Array.from({ length: end - start }, (_, offset) => ports[(start + offset) % processes]!),
            first: start,
            transport,
          };
          const done = answer(child, 'opened');
          child.send(open);
          return done;
        }),
      );
    // A tenth of the crowd first, so that the memory measured is what the rest adds to a process
    // already warm (start-up garbage collected, the subscription paths loaded): per idle subscriber.
    await openShare(0, 0.1);
    const warm = shares.reduce((total, { count }) => total + Math.floor(count * 0.1), 0);
    await sleep(2000);
    const before = await memory();
    await openShare(0.1, 1);
    await sleep(2000);
    const after = await memory();

    const accepted = new Map<string, number>();
    const sendTimes: number[] = [];
    const refused: Record<string, number> = {};
    const refuse = (why: string) => (refused[why] = (refused[why] ?? 0) + 1);
    let sends = 0;
    /** One send; what a warm-up sends is not counted. */
    const send = (n: number, counted: boolean) =>
      new Promise<void>((resolve) => {
        const started = performance.now();
        const body = JSON.stringify({ to: ctx.sendContacts[n % ctx.sendContacts.length], message: `crowd ${n}` });
        const request = http.request(
          {
            host: '127.0.0.1',
            port: ports[n % processes],
            path: '/api/connect/messages',
            method: 'POST',
            agent,
            headers: { host: ctx.host, authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' },
          },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => {
              const at = now();
              if (!counted) return resolve();
              sendTimes.push(performance.now() - started);
              if (response.statusCode === 202) {
                const id = (JSON.parse(text) as { data: { message: { id: string } } }).data.message.id;
                accepted.set(id, at);
              } else refuse(String(response.statusCode));
              resolve();
            });
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) => {
          if (counted) refuse(error.code ?? error.message);
          resolve();
        });
        request.end(body);
      });
    /** Sends at `rate` for `duration` seconds, numbered from `first`. */
    const sendFor = async (duration: number, first: number, counted: boolean) => {
      const inFlight: Promise<void>[] = [];
      const start = performance.now();
      const total = rate * duration;
      for (let n = 0; n < total; n++) {
        const due = start + (n * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        if (counted) sends++;
        inFlight.push(send(first + n, counted));
      }
      await Promise.all(inFlight);
    };
    // A warm-up at the same rate, its deliveries left to finish: the row measures the process as it
    // runs, not the first seconds of its code paths and buffers.
    if (warmup > 0) {
      await sendFor(warmup, 0, false);
      await sleep(3000);
    }
    const cpuBefore = [cpuOf(gateways), cpuOf(clients)];
    await sendFor(seconds, rate * warmup, true);
    agent.destroy();

    const arrivals = new Map<string, Arrival>();
    const gather = async () => {
      arrivals.clear();
      const reports = await Promise.all(
        clients.map((child) => {
          const report = answer<CrowdArrivals>(child, 'report');
          child.send({ type: 'report' });
          return report;
        }),
      );
      for (const report of reports) {
        for (const [id, [count, webSocket, sse]] of Object.entries(report.arrivals)) {
          const entry = arrivals.get(id);
          if (entry) {
            entry[0] += count;
            entry[1] = Math.max(entry[1], webSocket);
            entry[2] = Math.max(entry[2], sse);
          } else arrivals.set(id, [count, webSocket, sse]);
        }
      }
    };
    // The last events reach the last subscribers.
    const deadline = performance.now() + 30_000;
    const expected = accepted.size * subscribers;
    const delivered = () => [...accepted.keys()].reduce((sum, id) => sum + (arrivals.get(id)?.[0] ?? 0), 0);
    await gather();
    while (delivered() < expected && performance.now() < deadline) {
      await sleep(500);
      await gather();
    }

    const fanOut = fanOutOver(accepted, arrivals, 0);
    const { spent, grew } = crowdTotals(cpuBefore, [cpuOf(gateways), cpuOf(clients)], before, after);
    return {
      subscribers,
      transport,
      processes,
      clients: clients.length,
      sends,
      accepted: accepted.size,
      refused,
      kbPerSubscriber: grew === null ? null : Math.round((grew * 10240) / (subscribers - warm)) / 10,
      rssMb: { tenth: before, all: after },
      delivered: delivered(),
      expected,
      fanOutP99Ms: p99(fanOut),
      fanOutP99ByTransportMs: { websocket: p99(fanOutOver(accepted, arrivals, 1)), sse: p99(fanOutOver(accepted, arrivals, 2)) },
      fanOutBySecondMs: Array.from({ length: Math.ceil(fanOut.length / rate) }, (_, second) => Math.round(Math.max(...fanOut.slice(second * rate, (second + 1) * rate)))),
      sendP99Ms: p99(sendTimes),
      executions: sum(await Promise.all(gateways.map((gateway) => metric(gateway.base, 'connect_subscription_executions_total')))),
      results: sum(await Promise.all(gateways.map((gateway) => metric(gateway.base, 'connect_subscription_results_total')))),
      gatewayCpuMs: spent(0),
      clientCpuMs: spent(1),
    };
  } finally {
    await closeClients(clients);
    for (const gateway of gateways) await gateway.stop();
  }
}
