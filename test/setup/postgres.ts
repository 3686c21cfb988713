import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createTemporaryDatabase } from '../../src/db/temporary.js';

/** Server to create the run's database on; any database of it will do as the admin connection. */
const SERVER_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Creates and migrates a fresh database for this run; drops it afterwards. */
export default async function setup(project: TestProject) {
  const database = await createTemporaryDatabase(SERVER_URL, 'connect_test').catch((error: Error) => {
    throw new Error(
      `PostgreSQL is not reachable at ${SERVER_URL} (${error.message}). ` +
        'Start it, or point TEST_POSTGRES_URL at a server where the test user may create databases.',
    );
  });
  const db = await openDatabase({ databaseUrl: database.url, poolSize: 1 });
  await db.withSession((session) => migrate(session));
  await db.close();
  project.provide('databaseUrl', database.url);
  return () => database.drop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    dbKind: 'pglite' | 'postgres';
    databaseUrl: string;
  }
}
