import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { PGLITE_OPTIONS } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';

/**
 * Migrates one embedded database for the run and dumps its data directory to a file: each test
 * file's database starts from that dump (test/helpers/app.ts) rather than from a new cluster
 * migrated afresh, which costs several times more.
 */
export default async function setup(project: TestProject) {
  const client = new PGlite(PGLITE_OPTIONS);
  await migrate({
    exec: async (sql) => void (await client.exec(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await client.query<T>(sql, params)).rows,
  });
  const dump = await client.dumpDataDir('none');
  await client.close();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'connect-pglite-'));
  const file = path.join(dir, 'migrated.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteSnapshot', file);
  return () => rm(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteSnapshot: string;
  }
}
