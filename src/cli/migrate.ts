import { openDatabase, type Database } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { loadEnv } from '../env.js';

let db: Database | undefined;
try {
  const env = loadEnv();
  db = await openDatabase({ databaseUrl: env.DATABASE_URL, pgliteDir: env.PGLITE_DIR, poolSize: 1 });
  const { applied } = await db.withSession((session) =>
    migrate(session, { onApplied: (name) => process.stdout.write(`applied ${name}\n`) }),
  );
  process.stdout.write(applied.length ? `${applied.length} migration(s) applied to ${db.description}\n` : `${db.description} is up to date\n`);
} catch (error) {
  // A bad setting or an unreachable database is one line, as at server start.
  process.stderr.write(`error: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await db?.close();
}
