import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlSession } from './database.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

/** Prisma Migrate's own advisory lock key: our runner and `prisma migrate` exclude each other. */
const PRISMA_ADVISORY_LOCK = 72707369;

// Prisma's `_prisma_migrations` table, column for column, so that `prisma migrate status`
// and `prisma migrate deploy` read our history as their own.
const HISTORY_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Applies pending migrations in name order, each in its own transaction together
 * with its history row, so a failing migration leaves neither changes nor record.
 */
export async function migrate(
  session: SqlSession,
  options: { dir?: string; onPending?: (count: number) => void; onApplied?: (name: string, index: number, count: number) => void } = {},
): Promise<{ applied: string[] }> {
  const migrations = readMigrations(options.dir);
  await session.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
  try {
    await session.exec(HISTORY_TABLE);
    const history = await session.query<HistoryRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
    );
    const done = new Map<string, HistoryRow>();
    for (const row of history) {
      if (row.rolled_back_at) continue;
      if (!row.finished_at) {
        throw new MigrationError(
          `Migration ${row.migration_name} started but never finished. Inspect the database, then mark it ` +
            'with `prisma migrate resolve` before starting again.',
        );
      }
      done.set(row.migration_name, row);
    }
    for (const migration of migrations) {
      const row = done.get(migration.name);
      if (row && row.checksum !== migration.checksum) {
        throw new MigrationError(`Migration ${migration.name} was modified after it was applied.`);
      }
    }

    const applied: string[] = [];
    const pending = migrations.filter((migration) => !done.has(migration.name));
    if (pending.length) options.onPending?.(pending.length);
    for (const migration of pending) {
      await session.exec('BEGIN');
      try {
        await session.exec(migration.sql);
        await session.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await session.exec('COMMIT');
      } catch (error) {
        await session.exec('ROLLBACK');
        throw new MigrationError(`Migration ${migration.name} failed: ${(error as Error).message}`);
      }
      applied.push(migration.name);
      options.onApplied?.(migration.name, applied.length, pending.length);
    }
    return { applied };
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]);
  }
}
