import http from 'node:http';
import { createApp } from './app.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { DEMO_HOSTNAME, seedDemo } from './db/seed.js';
import { ConfigError, loadEnv } from './env.js';
import { createLogger } from './logger.js';
import { DeliveryWorker } from './modules/delivery/delivery.worker.js';
import { defaultProviders } from './modules/delivery/providers.js';

let env;
try {
  env = loadEnv();
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(1);
}
const logger = createLogger(env);

const db = await openDatabase({ databaseUrl: env.DATABASE_URL, pgliteDir: env.PGLITE_DIR, poolSize: env.DB_POOL_SIZE }).catch(
  (error: Error) => {
    logger.fatal(error.message);
    process.exit(1);
  },
);
logger.info(`database: ${db.description}`);

try {
  if (env.MIGRATE_ON_START) {
    const { applied } = await db.withSession((session) => migrate(session));
    logger.info(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
  }
} catch (error) {
  logger.fatal((error as Error).message);
  await db.close();
  process.exit(1);
}

const empty = db.kind === 'pglite' && (await db.prisma.workspace.count()) === 0;
const demo = empty || env.SEED_DEMO ? await seedDemo(db.prisma) : null;

const worker = env.DELIVERY_WORKER
  ? new DeliveryWorker({
      prisma: db.prisma,
      logger,
      providers: defaultProviders({ timeoutMs: env.DELIVERY_TIMEOUT_MS }),
      leaseMs: env.DELIVERY_LEASE_MS,
      pollMs: env.DELIVERY_POLL_MS,
      backoffMs: env.DELIVERY_BACKOFF_MS,
    })
  : null;
worker?.start();

const yoga = createApp({ db, env, logger, onMessageQueued: () => worker?.nudge(), ...(demo ? { demoApiKey: demo.apiKey } : {}) });
const server = http.createServer(yoga);

server.listen(env.PORT, env.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  logger.info(`Connect gateway listening on http://${env.HOST}:${port} (REST /api/connect, GraphQL /graphql)`);
  if (demo) {
    process.stdout.write(
      [
        '',
        `Demo workspace created for hostname "${DEMO_HOSTNAME}" with channel ${demo.channelId}.`,
        'Its API key is shown only now. Try it:',
        '',
        `  curl -H 'Authorization: Bearer ${demo.apiKey}' -H 'Accept: application/json' http://${DEMO_HOSTNAME}:${port}/api/connect/channels`,
        '',
      ].join('\n') + '\n',
    );
  }
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info(`${signal} received, shutting down`);
  const force = setTimeout(() => server.closeAllConnections(), 10_000).unref();
  server.close();
  server.closeIdleConnections();
  await new Promise((resolve) => server.once('close', resolve));
  clearTimeout(force);
  await worker?.stop();
  await yoga.dispose();
  await db.close();
  logger.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
