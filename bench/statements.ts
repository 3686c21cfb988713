import type pg from 'pg';
import { closeConnections, send } from './http.js';
import { drainOutbox, type Counter } from './measure.js';
import type { BenchContext, Operation } from './operations.js';
import { StatementCounter, type Statement } from './pg-proxy.js';
import { drainInbound } from './whatsapp.js';
import { startFloor, startGateway, type ServerProcess, type WhatsAppSettings } from './servers.js';

export interface StatementCount {
  /** Statements the database ran per request (BEGIN and COMMIT included). */
  perRequest: number;
  /** The statements of one request, shortened. */
  sample: string[];
}

export interface StatementReport {
  gateway: Record<string, StatementCount>;
  floor: Record<string, StatementCount>;
  /** Statements the delivery worker ran per message sent, after the request. */
  workerPerMessage: { gateway: number | null; floor: number | null };
  /** Statements the gateway's worker ran per signed webhook processed into a message (the floor processes none). */
  workerPerInbound: number | null;
  /** JSON paths where the floor's answer is not shaped like the gateway's, per operation. */
  shapeMismatches: Record<string, string[]>;
  /** The statement the gateway runs for a contact search, to explain its plan. */
  contactSearch: Statement | null;
}

/** The health probe every server process runs on its own; not part of any request. */
const isProbe = (s: Statement) => /^\s*SELECT 1\s*$/i.test(s.sql);
const shorten = (sql: string) => sql.replace(/\s+/g, ' ').replace(/"public"\./g, '').trim().slice(0, 160);

/** Requests a statement count is averaged over, after two unmeasured ones. */
const REQUESTS = 3;
/** Sends whose worker statements are averaged. */
const SENDS = 10;

/**
 * Counts the SQL statements each operation costs on each server, through a
 * proxy that reads the PostgreSQL wire protocol (every statement that reaches the
 * database counts, whatever sent it). Each server runs by itself, one request at
 * a time, its delivery worker off; then with the worker on for sends, to count
 * what delivering a message costs. Also compares the JSON shapes of the answers
 * and records the gateway's contact-search statement.
 */
export async function countStatements(options: {
  databaseUrl: string;
  logDir: string;
  pool: number;
  ops: Operation[];
  ctx: BenchContext;
  counter: Counter;
  monitor: pg.ClientBase;
  worker: boolean;
  contactSearch: string;
  /** The gateway's compiled directory, when not dist/. */
  dist?: string | undefined;
  whatsapp?: WhatsAppSettings | undefined;
}): Promise<StatementReport> {
  const target = new URL(options.databaseUrl);
  const proxy = await new StatementCounter({ host: target.hostname, port: Number(target.port || 5432) }).start();
  const proxied = new URL(options.databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  const url = proxied.toString();
  const report: StatementReport = { gateway: {}, floor: {}, workerPerMessage: { gateway: null, floor: null }, workerPerInbound: null, shapeMismatches: {}, contactSearch: null };
  const answers: Record<string, Record<string, unknown>> = { gateway: {}, floor: {} };
  const take = () => proxy.take().filter((s) => !isProbe(s));
  let server: ServerProcess | undefined;
  try {
    for (const name of ['gateway', 'floor'] as const) {
      const start = name === 'gateway' ? startGateway : startFloor;
      server = await start(url, options.logDir, { worker: false, poolSize: options.pool, dist: options.dist, whatsapp: options.whatsapp });
      for (const op of options.ops) {
        for (let i = 0; i < 2; i++) await expectOk(server, op, options.ctx, options.counter);
        take();
        const counts: number[] = [];
        let sample: Statement[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          answers[name]![op.id] = await expectOk(server, op, options.ctx, options.counter);
          sample = take();
          counts.push(sample.length);
        }
        report[name][op.id] = { perRequest: counts.reduce((a, b) => a + b, 0) / counts.length, sample: sample.map((s) => shorten(s.sql)) };
      }
      if (name === 'gateway') {
        await send(server.base, {
          method: 'GET',
          path: `/api/connect/contacts?limit=25&search=${encodeURIComponent(options.contactSearch)}`,
          headers: { host: options.ctx.host, authorization: `Bearer ${options.ctx.apiKey}` },
        });
        const statements = take();
        // The statement that matches the term (LIKE or ILIKE), never the one reading the found rows by id.
        report.contactSearch = statements.find((s) => /\bI?LIKE\b/i.test(s.sql)) ?? null;
      }
      closeConnections();
      await server.stop();
      server = undefined;
    }
    for (const op of options.ops) {
      const mismatches = compareShapes(answers.gateway![op.id], answers.floor![op.id]);
      if (mismatches.length) report.shapeMismatches[op.id] = mismatches;
    }

    const sendOp = options.ops.find((op) => op.id === 'rest.send') ?? options.ops.find((op) => op.id === 'gql.sendMessage');
    if (options.worker && sendOp) {
      for (const name of ['gateway', 'floor'] as const) {
        const start = name === 'gateway' ? startGateway : startFloor;
        server = await start(url, options.logDir, { worker: true, poolSize: options.pool, dist: options.dist, whatsapp: options.whatsapp });
        // What the counts above left in the outbox is delivered first, unseen.
        await expectOk(server, sendOp, options.ctx, options.counter);
        await drainOutbox(options.monitor);
        await settle();
        take();
        for (let i = 0; i < SENDS; i++) await expectOk(server, sendOp, options.ctx, options.counter);
        await drainOutbox(options.monitor);
        await settle();
        const total = take().length;
        report.workerPerMessage[name] = Math.max(0, total / SENDS - report[name][sendOp.id]!.perRequest);
        closeConnections();
        await server.stop();
        server = undefined;
      }
    }

    const inboundOp = options.ops.find((op) => op.inbound);
    if (options.worker && inboundOp) {
      server = await startGateway(url, options.logDir, { worker: true, poolSize: options.pool, dist: options.dist, whatsapp: options.whatsapp });
      // The events the counts above stored are processed first, unseen.
      await expectOk(server, inboundOp, options.ctx, options.counter);
      await drainInbound(options.monitor);
      await settle();
      take();
      for (let i = 0; i < SENDS; i++) await expectOk(server, inboundOp, options.ctx, options.counter);
      await drainInbound(options.monitor);
      await settle();
      report.workerPerInbound = Math.max(0, take().length / SENDS - report.gateway[inboundOp.id]!.perRequest);
      closeConnections();
      await server.stop();
      server = undefined;
    }
  } finally {
    closeConnections();
    await server?.stop();
    await proxy.stop();
  }
  return report;
}

/** Lets a worker finish the statements that follow its last claim. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

async function expectOk(server: ServerProcess, op: Operation, ctx: BenchContext, counter: Counter): Promise<unknown> {
  const answer = await send(server.base, op.request(ctx, counter.next()));
  const fault = answer.status >= 200 && answer.status < 300 ? op.fault?.(answer.body) : `HTTP ${answer.status}: ${answer.body.slice(0, 300)}`;
  if (fault) throw new Error(`${server.name} ${op.id}: ${fault}`);
  // A webhook is answered with plain text.
  return answer.body.startsWith('{') ? JSON.parse(answer.body) : answer.body;
}

/** Paths at which two JSON values differ in shape; null matches anything (the rows differ, not the shape). */
export function compareShapes(a: unknown, b: unknown, path = '$'): string[] {
  if (a === null || b === null || a === undefined || b === undefined) return a === undefined || b === undefined ? (a === b ? [] : [path]) : [];
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return [path];
    if (a.length === 0 || b.length === 0) return [];
    return compareShapes(a[0], b[0], `${path}[0]`);
  }
  if (typeof a === 'object' || typeof b === 'object') {
    if (typeof a !== 'object' || typeof b !== 'object') return [path];
    const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
    const out: string[] = [];
    for (const key of keys) {
      const left = (a as Record<string, unknown>)[key];
      const right = (b as Record<string, unknown>)[key];
      if (!(key in (a as object)) || !(key in (b as object))) out.push(`${path}.${key}`);
      else out.push(...compareShapes(left, right, `${path}.${key}`));
    }
    return out;
  }
  return typeof a === typeof b ? [] : [path];
}
