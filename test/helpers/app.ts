import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { createApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { loadEnv, type Env } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { checkAgainstDocument } from './openapi.js';
import { TEST_SECRETS_KEY, testSealer } from './secrets.js';
import { testProviders } from './worker.js';
import type { Providers } from '../../src/providers/registry.js';
import { createEventBus } from '../../src/realtime/bus.js';
import type { EventBus } from '../../src/context/services.js';
import type { Logger } from 'pino';

export const dbKind = inject('dbKind');
export const onPostgres = dbKind === 'postgres';

/** The run's migrated embedded database, dumped once by test/setup/pglite.ts; read once per file. */
let snapshot: Promise<Blob> | undefined;
const migratedSnapshot = () => (snapshot ??= readFile(inject('pgliteSnapshot')).then((bytes) => new Blob([bytes])));

/** A database for one test file: the run's PostgreSQL database, or a new in-memory PGlite started from the migrated dump. */

export async function openTestDatabase(options: { onQuery?: (sql: string) => void } = {}): Promise<Database> {
  if (onPostgres) return openDatabase({ databaseUrl: inject('databaseUrl'), poolSize: 10, ...options });
  const db = await openDatabase({ pgliteDir: 'memory://', pgliteStartFrom: await migratedSnapshot(), ...options });
  await db.withSession((session) => migrate(session));
  return db;
}

/**
 * A test app whose every statement is recorded (`env` over the test defaults; `AUTH_CACHE_MS: '0'`
 * makes each request pay its authentication), and `counted(run)`: the statements `run` issued.
 */
export async function statementCountingApp(env: Record<string, string> = {}): Promise<{ app: TestApp; counted(run: () => Promise<unknown>): Promise<string[]> }> {
  let statements: string[] = [];
  const app = await createTestApp(env, await openTestDatabase({ onQuery: (sql) => statements.push(sql) }));
  return {
    app,
    async counted(run) {
      statements = [];
      await run();
      return statements;
    },
  };
}

export interface TestApp {
  db: Database;
  env: Env;
  /** Every log line the app wrote, as JSON text. */
  logs: string[];
  /** The app's logger (writing into `logs`), for workers built beside it. */
  logger: Logger;
  /** The app's domain events (GraphQL subscriptions): a worker processing inbound events publishes here. */
  events: EventBus;
  /** The app's providers. */
  providers: Providers;
  /** Calls the real HTTP surface through yoga's fetch, with Host set to `host`. */
  fetch(host: string, path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Calls the real HTTP surface of `yoga` through its fetch, with Host set to `host`; every answer
 * is checked against the OpenAPI document.
 */
export function fetchThrough(yoga: { fetch(url: string, init: RequestInit): Response | Promise<Response> }): TestApp['fetch'] {
  return async (host, path, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('host', host);
    const url = `http://${host}${path}`;
    const response = await yoga.fetch(url, { ...init, headers });
    await checkAgainstDocument(init.method ?? 'GET', new URL(url), response, headers);
    return response;
  };
}

/** The app on the file's database, or on `database` when given (closed with the app). */
export async function createTestApp(
  envOverrides: Record<string, string> = {},
  database?: Database,
  parts: { providers?: Providers } = {},
): Promise<TestApp> {
  const db = database ?? (await openTestDatabase());
  // A budget no suite reaches by accident; the rate-limit tests set their own.
  const env = loadEnv({ NODE_ENV: 'test', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '1000000', SECRETS_KEY: TEST_SECRETS_KEY, ...envOverrides });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  // The production logger (redaction included), writing into `logs`.
  const logger = createLogger({ ...env, LOG_LEVEL: 'debug' }, sink);
  const { providers = testProviders() } = parts;
  const events = createEventBus({ redisUrl: env.REDIS_URL, prefix: env.REDIS_PREFIX, logger, maxPending: env.SUBSCRIPTION_MAX_PENDING });
  const yoga = createApp({ db, env, logger, sealer: testSealer, providers, events });
  return {
    db,
    env,
    logs,
    logger,
    events,
    providers,
    fetch: fetchThrough(yoga),
    async close() {
      await yoga.dispose();
      await events.dispose();
      await providers.close();
      await db.close();
    },
  };
}
