import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { onPostgres } from './app.js';

/**
 * An empty, unmigrated database of this project's kind: a new PostgreSQL database
 * on the run's server (dropped by `drop`), or a new in-memory PGlite.
 */
export async function freshDatabase(): Promise<{ db: Database; url?: string; drop(): Promise<void> }> {
  if (!onPostgres) {
    const db = await openDatabase({ pgliteDir: 'memory://' });
    return { db, drop: () => db.close() };
  }
  const base = new URL(inject('databaseUrl'));
  const name = `connect_fresh_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), poolSize: 4 });
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    },
  };
}
