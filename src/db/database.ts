import fs from 'node:fs';
import path from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import type { Logger } from 'pino';
import { PrismaClient, type Prisma } from '../generated/prisma/client.js';
import { DatabaseHealth } from './health.js';
import { poolTypes } from './timestamps.js';

/** One database session for statements that must share a connection (migrations, locks). */
export interface SqlSession {
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** Runs one statement by itself, outside any transaction, and resolves to its rows. */
export type RunSql = <T = Record<string, unknown>>(statement: Prisma.Sql) => Promise<T[]>;

export interface Database {
  kind: 'postgres' | 'pglite';
  /** Human description without credentials, for logs. */
  description: string;
  prisma: PrismaClient;
  /** Whether the database currently answers (always, for the embedded one). */
  health: DatabaseHealth;
  /**
   * Runs one statement with `$1`… placeholders bound to `params` and resolves to the rows it
   * changed. On PostgreSQL it goes straight to the pool, past Prisma's raw-query machinery (which
   * cost three times the driver's own CPU for a one-statement webhook); on PGlite through Prisma.
   * A statement sent here is not reported to `onQuery`.
   */
  execute(sql: string, params: unknown[]): Promise<number>;
  /**
   * Runs one statement of the hot paths by itself and resolves to its rows. On PostgreSQL it goes
   * straight to the pool, prepared as Prisma's statements are and reported to `onQuery`: Prisma's
   * raw-query path costs about 150 µs of CPU per statement more than the driver's own. On PGlite
   * through Prisma's `$queryRaw`, which serialises the one connection's statements. Values are
   * sent as the driver writes them (a Date with its offset); rows come back as the driver reads
   * them (timestamps as Dates, JSON parsed, `bigint` as text: cast counts to `int`).
   */
  query: RunSql;
  /** Runs `fn` on one dedicated session. */
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Connections open (`total`), of which `idle`, and queries `waiting` for one (metrics). */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent the embedded PGlite database is used. */
  databaseUrl?: string | undefined;
  /** PGlite data directory, or `memory://` for an in-memory database. */
  pgliteDir?: string | undefined;
  /**
   * An in-memory PGlite only: a dump of a data directory (PGlite's `dumpDataDir`, uncompressed) to
   * start from instead of an empty cluster. A dump of a migrated database opens several times faster
   * than a new cluster is made and migrated (the test suite opens one per test file).
   */
  pgliteStartFrom?: Blob | undefined;
  poolSize?: number | undefined;
  /** Called with every SQL statement Prisma sends and its parameters (instrumentation, tests). */
  onQuery?: QueryListener | undefined;
  /** Receives each wait at start and each outage and recovery of PostgreSQL. */
  logger?: Logger | undefined;
  /**
   * PostgreSQL only: wait up to this many seconds for the server to answer before
   * giving up, so that the gateway may start before its database. Unset: no wait.
   */
  connectTimeoutS?: number | undefined;
  /**
   * PostgreSQL only: the longest a statement may run, and an interactive
   * transaction may stay open, before it is cancelled and rolled back, so that one
   * slow query cannot hold a connection forever. Unset: PostgreSQL's and Prisma's defaults.
   */
  statementTimeoutMs?: number | undefined;
  transactionTimeoutMs?: number | undefined;
  /**
   * PostgreSQL only: prepare statements once per connection (named statements) instead of
   * parsing and planning each one afresh (see `preparedStatementNames`). Default true; off for a
   * connection pooler that cannot keep a session's prepared statements (PgBouncer before 1.21 in
   * transaction mode).
   */
  preparedStatements?: boolean | undefined;
}

/** Hears a statement Prisma sent, with the values bound to its placeholders. */
export type QueryListener = (sql: string, params: unknown[]) => void;

export class DatabaseInUseError extends Error {}

/** PostgreSQL did not answer within the start-up wait, or refused the credentials or database. */
export class DatabaseUnreachableError extends Error {}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const db = options.databaseUrl
    ? await openPostgres(options.databaseUrl, options.poolSize ?? 10, options)
    : await openPglite(options.pgliteDir ?? './.data/pglite', options.onQuery, options.pgliteStartFrom);
  // Closing twice (a shutdown racing a test teardown) is harmless.
  let closing: Promise<void> | undefined;
  const close = db.close;
  return { ...db, close: () => (closing ??= close()) };
}

/** A client on the adapter, emitting query events only when someone listens. */
function prismaClient(
  adapter: NonNullable<ConstructorParameters<typeof PrismaClient>[0]['adapter']>,
  onQuery?: QueryListener,
  transactionTimeoutMs?: number,
): PrismaClient {
  // 'minimal': Prisma's other error formats capture a stack trace at every call, to point a
  // failure at its line of code; that cost 30–40 µs per statement, and a failure's log entry
  // carries its own stack.
  const options = { adapter, errorFormat: 'minimal' as const, ...(transactionTimeoutMs ? { transactionOptions: { timeout: transactionTimeoutMs } } : {}) };
  if (!onQuery) return new PrismaClient(options);
  const client = new PrismaClient({ ...options, log: [{ emit: 'event', level: 'query' }] });
  (client as unknown as { $on(event: 'query', listener: (e: { query: string; params: string }) => void): void }).$on('query', (e) =>
    onQuery(e.query, parseParams(e.params)),
  );
  return client;
}

/** Prisma reports the bound values as JSON text; a listener gets them as values. */
function parseParams(params: string): unknown[] {
  try {
    const values: unknown = JSON.parse(params);
    return Array.isArray(values) ? values : [];
  } catch {
    return [];
  }
}

/**
 * A pool of up to `max` connections to `url`. Connecting gives up after 1.5 s so that a request
 * during an outage can still be answered within 2 s.
 */
function connectionPool(url: string, max: number, settings: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 1500, keepAlive: true, ...settings });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  return pool;
}

/** How the health probe's connection is named in `pg_stat_activity`. */
export const PROBE_APPLICATION_NAME = 'connect-gateway health probe';

/**
 * `SELECT 1` on the probe's connection. A probe given up on (`signal`) closes its connection:
 * one lost in a silent network would otherwise hold every later probe behind it.
 */
async function probeOnce(pool: pg.Pool, signal: AbortSignal): Promise<void> {
  const client = await pool.connect();
  let released = false;
  const release = (error?: Error) => {
    if (released) return;
    released = true;
    client.release(error);
  };
  // A checked-out client reports a lost connection as an 'error' event: unheard, it would end the process.
  const lost = (error: Error) => release(error);
  client.on('error', lost);
  const giveUp = () => release(new Error('The probe timed out.'));
  signal.addEventListener('abort', giveUp, { once: true });
  let healthy = false;
  try {
    if (signal.aborted) throw new Error('The probe timed out.');
    await client.query('SELECT 1');
    healthy = !released;
    release();
  } catch (error) {
    release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  } finally {
    signal.removeEventListener('abort', giveUp);
    // Back in the pool, the pool hears its errors; a discarded client keeps this listener for any late one.
    if (healthy) client.off('error', lost);
  }
}

async function openPostgres(url: string, poolSize: number, options: DatabaseOptions): Promise<Database> {
  const pool = connectionPool(url, poolSize, {
    // Prisma reads its own statements with its own parsers; the pool's are for Database.query.
    types: poolTypes,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.transactionTimeoutMs ? { idle_in_transaction_session_timeout: options.transactionTimeoutMs } : {}),
  });
  if (options.connectTimeoutS !== undefined) {
    try {
      await waitForPostgres(pool, redactUrl(url), options.connectTimeoutS, options.logger);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }
  const named = options.preparedStatements === false ? undefined : preparedStatementNames();
  // The adapter hands the name to pg, which sends a statement without one unprepared, as before.
  const adapterOptions = named && { statementNameGenerator: (query: { sql: string }) => named(query) as string };
  const prisma = prismaClient(new PrismaPg(pool, adapterOptions), options.onQuery, options.transactionTimeoutMs);
  // The probe has a connection of its own: with every pooled connection busy it would wait in the
  // pool's queue, and a queue longer than the probe timeout is load, not an outage.
  const probePool = connectionPool(url, 1, { application_name: PROBE_APPLICATION_NAME });
  const health = new DatabaseHealth((signal) => probeOnce(probePool, signal), options.logger).start();
  // Every statement the pool sees answered tells the probe that the database is there.
  const acquiredAt = new WeakMap<pg.PoolClient, number>();
  pool.on('acquire', (client) => acquiredAt.set(client, performance.now()));
  pool.on('release', (error, client) => {
    const sentAt = acquiredAt.get(client);
    if (!error && sentAt !== undefined) health.answered(sentAt);
  });
  return {
    kind: 'postgres',
    description: `PostgreSQL ${redactUrl(url)}`,
    prisma,
    health,
    execute: async (sql, params) => (await pool.query({ name: named?.({ sql }), text: sql, values: params })).rowCount ?? 0,
    query: async <T>(statement: Prisma.Sql) => {
      options.onQuery?.(statement.text, statement.values);
      return (await pool.query({ name: named?.({ sql: statement.text }), text: statement.text, values: statement.values })).rows as T[];
    },
    async withSession(fn) {
      const client = await pool.connect();
      // Sessions run migrations and hold locks: work that may rightly take longer than a request.
      if (options.statementTimeoutMs) await client.query('SET statement_timeout = 0');
      try {
        return await fn({
          exec: async (sql) => void (await client.query(sql)),
          query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
        });
      } finally {
        if (options.statementTimeoutMs) await client.query('RESET statement_timeout').catch(() => {});
        client.release();
      }
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      health.stop();
      await prisma.$disconnect();
      await Promise.all([pool.end(), probePool.end()]);
    },
  };
}

/** At most this many distinct statement texts are prepared; any further text is planned afresh each time. */
export const PREPARED_STATEMENT_LIMIT = 1000;

/**
 * Statements whose best plan depends on the value searched for (a substring with LIKE, a
 * full-text match): a generic plan could not tell a rare term from a common one.
 */
const VALUE_DEPENDENT_PLAN = /\bI?LIKE\b|@@/i;

/**
 * Said (as an SQL comment) by a search whose plan is the same for every value: it reads its
 * matches through their indexes into arrays and finds its rows by those (`= ANY(ARRAY(…))`), which
 * the planner sizes alike whatever the value, so no term is served by walking a table in order.
 * Such a statement is prepared like the others.
 */
export const PLAN_FOR_ANY_VALUE = '/* one plan for any value */';

/**
 * Names for the statements PostgreSQL should keep prepared on each connection: the driver then
 * parses a text once per connection and sends only its parameters afterwards, and PostgreSQL
 * reuses its plan (after five executions, a generic plan once it costs no more than planning
 * afresh). The one-statement writes are CTEs whose parsing and planning cost about three times
 * their execution. Each distinct text gets its own name, up to PREPARED_STATEMENT_LIMIT; a
 * statement with a value-dependent plan is never named (unless it says PLAN_FOR_ANY_VALUE).
 */
export function preparedStatementNames(limit = PREPARED_STATEMENT_LIMIT): (query: { sql: string }) => string | undefined {
  const names = new Map<string, string | undefined>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined && !names.has(sql) && names.size < limit) {
      name = VALUE_DEPENDENT_PLAN.test(sql) && !sql.includes(PLAN_FOR_ANY_VALUE) ? undefined : `connect_${names.size.toString(36)}`;
      names.set(sql, name);
    }
    return name;
  };
}

/** Answers that waiting cannot change: wrong credentials, no such database. */
const REFUSALS = new Set(['28P01', '28000', '3D000']);
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5000;

/** Probes until PostgreSQL answers, waiting longer each time, for at most `timeoutS` seconds. */
async function waitForPostgres(pool: pg.Pool, where: string, timeoutS: number, logger?: Logger): Promise<void> {
  const deadline = Date.now() + timeoutS * 1000;
  let wait = FIRST_WAIT_MS;
  for (let waited = false; ; waited = true) {
    try {
      await pool.query('SELECT 1');
      if (waited) logger?.info('database available');
      return;
    } catch (error) {
      const reason = connectionFailureReason(error);
      if (REFUSALS.has((error as { code?: string }).code ?? '')) {
        throw new DatabaseUnreachableError(`PostgreSQL at ${where} refused the connection: ${reason}`);
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new DatabaseUnreachableError(`PostgreSQL at ${where} is not reachable after ${timeoutS} s (DB_CONNECT_TIMEOUT_S): ${reason}`);
      }
      const pause = Math.min(wait, remaining);
      logger?.warn(`waiting for PostgreSQL at ${where} (${reason}); next attempt in ${(pause / 1000).toFixed(pause < 1000 ? 2 : 0)} s`);
      await new Promise((resolve) => setTimeout(resolve, pause));
      wait = Math.min(wait * 2, LONGEST_WAIT_MS);
    }
  }
}

/** A one-line reason; connecting to a name with several addresses fails with an AggregateError without a message. */
function connectionFailureReason(error: unknown): string {
  const e = error as { message?: string; code?: string; errors?: unknown[] };
  if (e.message) return e.message.split('\n')[0]!;
  if (e.errors?.length) return connectionFailureReason(e.errors[0]);
  return e.code ?? String(error);
}

/**
 * The embedded database loads an extension's code only when it is named here; the
 * migrations create pg_trgm (contact search), as they do on PostgreSQL.
 */
export const PGLITE_OPTIONS: PGliteOptions = { extensions: { pg_trgm } };

async function openPglite(dir: string, onQuery?: QueryListener, startFrom?: Blob): Promise<Database> {
  const inMemory = dir.startsWith('memory://');
  const releaseLock = inMemory ? () => {} : lockDataDir(dir);
  let client: PGlite;
  try {
    client = inMemory ? new PGlite({ ...PGLITE_OPTIONS, loadDataDir: startFrom }) : new PGlite(path.resolve(dir), PGLITE_OPTIONS);
    await client.waitReady;
  } catch (error) {
    releaseLock();
    throw error;
  }
  const prisma = prismaClient(new PrismaPGlite(client), onQuery);
  const session: SqlSession = {
    exec: async (sql) => void (await client.exec(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await client.query<T>(sql, params)).rows,
  };
  return {
    kind: 'pglite',
    description: inMemory ? 'embedded PGlite (in memory)' : `embedded PGlite at ${path.resolve(dir)}`,
    prisma,
    // The embedded database cannot become unreachable: its probe is only run on demand (readiness).
    health: new DatabaseHealth(() => client.query('SELECT 1')),
    // Through Prisma, which serialises the single connection's statements with its transactions.
    execute: (sql, params) => prisma.$executeRawUnsafe(sql, ...params),
    query: <T>(statement: Prisma.Sql) => prisma.$queryRaw<T[]>(statement),
    // PGlite is a single connection; callers serialise through it.
    withSession: (fn) => fn(session),
    // One connection, always open; PGlite queues statements internally, unseen.
    poolStats: () => ({ total: 1, idle: 0, waiting: 0 }),
    async close() {
      await prisma.$disconnect();
      await client.close();
      releaseLock();
    },
  };
}

/**
 * PGlite's files must be opened by one process at a time. A lock file beside the
 * data directory records the owner; a stale one (its process gone) is taken over.
 */
function lockDataDir(dir: string): () => void {
  const absolute = path.resolve(dir);
  fs.mkdirSync(absolute, { recursive: true });
  const lockPath = `${absolute}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(fs.readFileSync(lockPath, 'utf8').trim());
      if (owner && owner !== process.pid && processAlive(owner)) {
        throw new DatabaseInUseError(
          `The embedded database at ${absolute} is in use by process ${owner}. Stop that process first, ` +
            'or run the server on PostgreSQL (DATABASE_URL) to share one database between processes.',
        );
      }
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new DatabaseInUseError(`Could not lock the embedded database at ${absolute}.`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
