import autocannon from 'autocannon';
import type pg from 'pg';
import { send } from './http.js';
import type { BenchContext, BenchRequest, Operation } from './operations.js';
import { cpuMs } from './servers.js';

/** Numbers every request of the run, so that writes never repeat a name or an idempotency key. */
export class Counter {
  private n = 0;
  next(): number {
    return this.n++;
  }
}

export interface Window {
  /** Successful requests per second. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  requests: number;
  /** Non-2xx answers, connection errors, timeouts and 2xx answers that still report a failure. */
  errors: number;
  /** A few of those, to tell what went wrong. */
  samples: string[];
  /** CPU per successful request: the server process, and the database backends of the bench database. */
  cpuMs: number | null;
  pgCpuMs: number | null;
  /** The gateway's event-loop delay during the window (ms), from its /metrics; null for the floor. */
  eventLoop: EventLoopDelay | null;
}

/** perf_hooks.monitorEventLoopDelay percentiles, in ms. */
export interface EventLoopDelay {
  p50: number;
  p99: number;
  max: number;
}

/** What the gateway's /metrics (prom-client's default metrics) tells of its process. */
export interface ProcessGauges {
  /** Event-loop delay since the previous scrape: prom-client reads its monitorEventLoopDelay histogram, then resets it. */
  eventLoop: EventLoopDelay;
  rssMb: number;
  heapUsedMb: number;
}

/** Scrapes the gateway's /metrics; null when it has none (the floor) or it cannot be read. */
export async function scrapeGauges(base: string): Promise<ProcessGauges | null> {
  try {
    const response = await fetch(`${base}/metrics`);
    if (!response.ok) return null;
    const text = await response.text();
    const gauge = (name: string) => {
      const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
      return match ? Number(match[1]) : NaN;
    };
    return {
      eventLoop: {
        p50: gauge('nodejs_eventloop_lag_p50_seconds') * 1000,
        p99: gauge('nodejs_eventloop_lag_p99_seconds') * 1000,
        max: gauge('nodejs_eventloop_lag_max_seconds') * 1000,
      },
      rssMb: gauge('process_resident_memory_bytes') / 2 ** 20,
      heapUsedMb: gauge('nodejs_heap_size_used_bytes') / 2 ** 20,
    };
  } catch {
    return null;
  }
}

/** Sum of CPU time of the bench database's backends (every server's connections), in ms. */
export async function backendCpu(monitor: pg.ClientBase): Promise<Map<number, number>> {
  const { rows } = await monitor.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
  const times = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = cpuMs(pid);
    if (ms !== null) times.set(pid, ms);
  }
  return times;
}

function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? ms);
  return total;
}

/**
 * One autocannon run of `op` against `base`. Each request is built fresh from the
 * operation (a new contact, name, key…); 2xx answers are still checked by the
 * operation's `fault` (GraphQL errors arrive with status 200).
 */
export async function load(
  base: string,
  op: Operation,
  ctx: BenchContext,
  counter: Counter,
  options: { connections: number; duration: number; pid?: number; monitor?: pg.ClientBase; gauges?: boolean },
): Promise<Window> {
  // A scrape before the window resets the event-loop histogram, so the one after covers the window alone.
  if (options.gauges) await scrapeGauges(base);
  let faults = 0;
  const samples: string[] = [];
  const cpuBefore = options.pid ? cpuMs(options.pid) : null;
  const pgBefore = options.monitor ? await backendCpu(options.monitor) : null;
  const result = await autocannon({
    url: base,
    connections: options.connections,
    duration: options.duration,
    timeout: 30,
    requests: [
      {
        setupRequest: (request) => {
          const next = op.request(ctx, counter.next());
          return { ...request, method: next.method, path: next.path, headers: next.headers, ...(next.body === undefined ? {} : { body: next.body }) };
        },
        onResponse: (status, body) => {
          if (status >= 200 && status < 300) {
            const fault = op.fault?.(body);
            if (fault) {
              faults++;
              if (samples.length < 3) samples.push(fault);
            }
          } else if (samples.length < 3) {
            samples.push(`HTTP ${status}: ${body.slice(0, 300)}`);
          }
        },
      },
    ],
  });
  const gauges = options.gauges ? await scrapeGauges(base) : null;
  const cpuAfter = options.pid ? cpuMs(options.pid) : null;
  const pgAfter = options.monitor ? await backendCpu(options.monitor) : null;
  const ok = Math.max(0, result['2xx'] - faults);
  const errors = result.non2xx + result.errors + result.timeouts + faults;
  if (result.errors + result.timeouts > 0 && samples.length < 3) samples.push(`${result.errors} connection errors, ${result.timeouts} timeouts`);
  return {
    rps: ok / result.duration,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: ok,
    errors,
    samples,
    cpuMs: cpuBefore !== null && cpuAfter !== null && ok > 0 ? (cpuAfter - cpuBefore) / ok : null,
    pgCpuMs: pgBefore && pgAfter && ok > 0 ? cpuDelta(pgBefore, pgAfter) / ok : null,
    eventLoop: gauges?.eventLoop ?? null,
  };
}

/** Waits until no message delivery is pending; returns the seconds it took. */
export async function drainOutbox(monitor: pg.ClientBase, timeoutMs = 120_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await monitor.query<{ n: string }>(`SELECT count(*) AS n FROM deliveries WHERE status = 'pending' AND message_id IS NOT NULL`);
    if (Number(rows[0]!.n) === 0) return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutMs) throw new Error(`the outbox still holds ${rows[0]!.n} pending deliveries after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Latency {
  p50: number;
  p95: number;
  n: number;
}

/** Percentiles of a series of samples (ms), and how many there were. */
export interface Spread {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  n: number;
}

export function spread(samples: number[]): Spread {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN);
  return { p50: at(50), p90: at(90), p99: at(99), max: sorted.length ? sorted[sorted.length - 1]! : NaN, n: sorted.length };
}

export function percentile(samples: number[], p: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Latency of requests sent one at a time (no queueing), interleaved so that a
 * change in the machine's load touches every series alike. Each series gets
 * `warmup` unmeasured requests first.
 */
export async function sequentialLatency(base: string, series: Record<string, () => BenchRequest>, n: number, warmup = 3): Promise<Record<string, Latency>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(series).map((k) => [k, []]));
  for (let i = 0; i < n + warmup; i++) {
    for (const [name, next] of Object.entries(series)) {
      const started = performance.now();
      const answer = await send(base, next());
      const ms = performance.now() - started;
      if (answer.status < 200 || answer.status >= 300) throw new Error(`${name}: HTTP ${answer.status} ${answer.body.slice(0, 300)}`);
      if (i >= warmup) samples[name]!.push(ms);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { p50: percentile(v, 50), p95: percentile(v, 95), n: v.length }]));
}

export function median(values: (number | null)[]): number {
  const sorted = values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
