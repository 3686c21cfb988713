import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createTemporaryDatabase } from '../../src/db/temporary.js';
import { createTestApp, onPostgres, type TestApp } from './app.js';
import type { Providers } from '../../src/providers/registry.js';

/**
 * An empty, unmigrated database of this project's kind: a new PostgreSQL database
 * on the run's server (dropped by `drop`), or a new in-memory PGlite.
 */
export async function freshDatabase(options: { onQuery?: (sql: string) => void } = {}): Promise<{ db: Database; drop(): Promise<void> }> {
  if (!onPostgres) {
    const db = await openDatabase({ pgliteDir: 'memory://', ...options });
    return { db, drop: () => db.close() };
  }
  const database = await createTemporaryDatabase(inject('databaseUrl'), 'connect_fresh');
  const db = await openDatabase({ databaseUrl: database.url, poolSize: 4, ...options });
  return {
    db,
    async drop() {
      await db.close();
      await database.drop();
    },
  };
}

/**
 * An app on a migrated database of its own, for tests whose delivery workers claim
 * every due delivery (on the shared run database they would take other files'),
 * or that change the schema. `setupSql` runs after the migrations; `onQuery`
 * hears every statement the app's database runs.
 */
export async function appOnOwnDatabase(
  options: { setupSql?: string; onQuery?: (sql: string) => void; env?: Record<string, string>; providers?: Providers } = {},
): Promise<TestApp & { drop(): Promise<void> }> {
  const fresh = await freshDatabase(options.onQuery ? { onQuery: options.onQuery } : {});
  await fresh.db.withSession(async (session) => {
    await migrate(session);
    if (options.setupSql) await session.exec(options.setupSql);
  });
  const app = await createTestApp(options.env ?? {}, fresh.db, options.providers ? { providers: options.providers } : {});
  return {
    ...app,
    async drop() {
      await app.close();
      await fresh.drop();
    },
  };
}

/**
 * An app on a migrated database of its own where a trigger raises `message` when
 * a row inserted into `table` satisfies `condition` (SQL over NEW): a fault deep
 * below the services, to watch rollback and masking.
 */
export function appWithFailingInsert(table: string, condition: string, message: string): Promise<TestApp & { drop(): Promise<void> }> {
  return appOnOwnDatabase({
    setupSql: `
      CREATE FUNCTION fail_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ${condition} THEN RAISE EXCEPTION '${message.replace(/'/g, "''")}'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER fail_on_insert BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION fail_on_insert();`,
  });
}

/**
 * For a test file whose workers and runners take every due row (so that on the shared run
 * database they would take other files' rows): an app on a database of its own, made before the
 * file's tests (set once they run) and dropped after them, and `cleanups` run after each test,
 * the last added first.
 */
export function appPerFile(): { app: TestApp & { drop(): Promise<void> }; cleanups: (() => Promise<void>)[] } {
  const own = { cleanups: [] as (() => Promise<void>)[] } as ReturnType<typeof appPerFile>;
  beforeAll(async () => {
    own.app = await appOnOwnDatabase();
  }, 120_000);
  afterEach(async () => {
    while (own.cleanups.length) await own.cleanups.pop()!();
  });
  afterAll(() => own.app?.drop());
  return own;
}
