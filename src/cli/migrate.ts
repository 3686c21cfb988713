import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { loadEnv } from '../env.js';

const env = loadEnv();
const db = await openDatabase({ databaseUrl: env.DATABASE_URL, pgliteDir: env.PGLITE_DIR, poolSize: 1 });
try {
  const { applied } = await db.withSession((session) =>
    migrate(session, { onApplied: (name) => process.stdout.write(`applied ${name}\n`) }),
  );
  process.stdout.write(applied.length ? `${applied.length} migration(s) applied to ${db.description}\n` : `${db.description} is up to date\n`);
} catch (error) {
  process.stderr.write(`error: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await db.close();
}
