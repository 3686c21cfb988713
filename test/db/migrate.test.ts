import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from '../../src/db/migrate.js';
import { onPostgres } from '../helpers/app.js';
import { freshDatabase } from '../helpers/fresh-database.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function fresh() {
  const database = await freshDatabase();
  cleanups.push(database.drop);
  return database.db;
}

/** A copy of the project's migrations plus extra ones, in a temporary folder. */
function migrationsWith(extra: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
  fs.cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    fs.mkdirSync(path.join(dir, name));
    fs.writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type HistoryRow = { migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number };
const history = (db: Awaited<ReturnType<typeof fresh>>) =>
  db.withSession((s) =>
    s.query<HistoryRow>('SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name'),
  );

describe('migration runner', () => {
  it("applies every migration once and records it in Prisma's _prisma_migrations format", async () => {
    const db = await fresh();
    const first = await db.withSession((s) => migrate(s));
    const names = readMigrations().map((m) => m.name);
    expect(first.applied).toEqual(names);
    expect(names.length).toBeGreaterThan(0);

    const rows = await history(db);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = fs.readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.finished_at).not.toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }

    const second = await db.withSession((s) => migrate(s));
    expect(second.applied).toEqual([]);
    expect(await history(db)).toHaveLength(names.length);
  });

  it('applies a later migration on top of an up-to-date database', async () => {
    const db = await fresh();
    await db.withSession((s) => migrate(s));
    const dir = migrationsWith({ '29990101000000_add_note': 'ALTER TABLE "workspaces" ADD COLUMN "note" TEXT;' });
    expect((await db.withSession((s) => migrate(s, { dir }))).applied).toEqual(['29990101000000_add_note']);
    const columns = await db.withSession((s) =>
      s.query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_name = 'workspaces'`),
    );
    expect(columns.map((c) => c.column_name)).toContain('note');
  });

  it('rolls a failing migration back completely and records nothing for it', async () => {
    const db = await fresh();
    const dir = migrationsWith({
      '29990101000000_broken': 'CREATE TABLE "half_done" (id INT); SELECT * FROM "no_such_table";',
    });
    await expect(db.withSession((s) => migrate(s, { dir }))).rejects.toThrow(/29990101000000_broken failed/);
    const rows = await history(db);
    expect(rows.map((r) => r.migration_name)).not.toContain('29990101000000_broken');
    const tables = await db.withSession((s) =>
      s.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'half_done'`),
    );
    expect(tables[0]!.n).toBe(0);
    // The migrations before it stay applied; fixing the file lets the next start finish the job.
    expect(rows.length).toBe(readMigrations().length);
  });

  it('refuses to run when an applied migration was edited afterwards', async () => {
    const db = await fresh();
    const dir = migrationsWith({});
    await db.withSession((s) => migrate(s, { dir }));
    const first = readMigrations(dir)[0]!;
    fs.appendFileSync(path.join(dir, first.name, 'migration.sql'), '\n-- edited\n');
    await expect(db.withSession((s) => migrate(s, { dir }))).rejects.toThrow(MigrationError);
    await expect(db.withSession((s) => migrate(s, { dir }))).rejects.toThrow(/was modified after it was applied/);
  });

  it.runIf(onPostgres)('lets exactly one of several concurrent runners apply the migrations', async () => {
    const db = await fresh();
    const results = await Promise.all([1, 2, 3].map(() => db.withSession((s) => migrate(s))));
    const applied = results.map((r) => r.applied.length);
    expect(applied.filter((n) => n > 0)).toEqual([readMigrations().length]);
    expect(await history(db)).toHaveLength(readMigrations().length);
  });
});

describe('npm run db:migrate', () => {
  it('answers a bad setting with one error line and exit 1', async () => {
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/migrate.ts'], {
      env: { ...process.env, DB_POOL_SIZE: '0', PGLITE_DIR: 'memory://', DATABASE_URL: '' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('error: invalid configuration: DB_POOL_SIZE: expected a whole number from 1 to 200\n');
  });
});
