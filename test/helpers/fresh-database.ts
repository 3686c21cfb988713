import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createTemporaryDatabase } from '../../src/db/temporary.js';
import { createTestApp, onPostgres, type TestApp } from './app.js';

/**
 * An empty, unmigrated database of this project's kind: a new PostgreSQL database
 * on the run's server (dropped by `drop`), or a new in-memory PGlite.
 */
export async function freshDatabase(): Promise<{ db: Database; drop(): Promise<void> }> {
  if (!onPostgres) {
    const db = await openDatabase({ pgliteDir: 'memory://' });
    return { db, drop: () => db.close() };
  }
  const database = await createTemporaryDatabase(inject('databaseUrl'), 'connect_fresh');
  const db = await openDatabase({ databaseUrl: database.url, poolSize: 4 });
  return {
    db,
    async drop() {
      await db.close();
      await database.drop();
    },
  };
}

/**
 * An app on a migrated database of its own where a trigger raises `message` when
 * a row inserted into `table` satisfies `condition` (SQL over NEW): a fault deep
 * below the services, to watch rollback and masking.
 */
export async function appWithFailingInsert(table: string, condition: string, message: string): Promise<TestApp & { drop(): Promise<void> }> {
  const fresh = await freshDatabase();
  await fresh.db.withSession(async (session) => {
    await migrate(session);
    await session.exec(`
      CREATE FUNCTION fail_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ${condition} THEN RAISE EXCEPTION '${message.replace(/'/g, "''")}'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER fail_on_insert BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION fail_on_insert();`);
  });
  const app = await createTestApp({}, fresh.db);
  return {
    ...app,
    async drop() {
      await app.close();
      await fresh.drop();
    },
  };
}
