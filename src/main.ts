import http from 'node:http';
import v8 from 'node:v8';
import type { Database } from './db/database.js';
import type { DeliveryWorker } from './modules/delivery/delivery.worker.js';
import type { BroadcastRunner } from './modules/broadcasts/broadcasts.runner.js';
import type { EventBus } from './context/services.js';
import type { Telemetry } from './telemetry.js';
import type { RateLimiter } from './context/rate-limit.js';
import { ConfigError, deliveryTimingProblem, loadEnv, privateTargets, publicUrl, seedDemoEnabled, tracingEnabled, type Env } from './env.js';
import { createLogger } from './logger.js';
import { OpenStreams } from './lib/streams.js';
import { describeError } from './errors/log.js';

// A full collection once the old generation has doubled, rather than V8's default of letting it
// grow to four times what is live: under load that kept about 120 MB of garbage resident (RSS
// 340 MB against 270 MB), while the extra collections of a 55 MB live heap cost no measurable
// throughput. `node --heap-growing-percent=N dist/main.js` chooses otherwise.
if (!process.execArgv.some((flag) => flag.startsWith('--heap-growing-percent'))) v8.setFlagsFromString('--heap-growing-percent=100');

/** A start-up failure an operator can fix: one line on stderr, exit 1. */
function fail(message: string): never {
  process.stderr.write(`error: ${message.split('\n')[0]}\n`);
  process.exit(1);
}

/** A failure of the surroundings (database, files, port), as opposed to a defect: reported as one line. */
class StartError extends Error {}

async function step<T>(work: () => Promise<T>, prefix = ''): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new StartError(`${prefix}${(error as Error).message}`);
  }
}

let env: Env;
try {
  env = loadEnv();
  const timing = deliveryTimingProblem(env);
  if (timing) throw new ConfigError([timing]);
} catch (error) {
  fail((error as Error).message);
}
const logger = createLogger(env);

// A rejected promise nobody handles is a defect of the code, never a reason to drop every request
// and stream this process serves: it is logged as one, with its stack, and the process goes on.
// Only the server installs this: the test runner, which loads the app without it, still fails a
// test on any unhandled rejection.
process.on('unhandledRejection', (reason) => {
  logger.error({ err: describeError(reason) }, 'unhandled promise rejection (a defect): logged, the process goes on');
});

let db: Database | undefined;
let server: http.Server | undefined;
let yoga: { dispose(): Promise<void> | void } | undefined;
let worker: DeliveryWorker | undefined;
let broadcasts: BroadcastRunner | undefined;
/** Closes the providers' HTTP connections (to provider APIs, webhook receivers, media hosts). */
let closeProviders: (() => Promise<void>) | undefined;
let events: EventBus | undefined;
let rateLimiter: RateLimiter | null | undefined;
let smtpListener: { readonly port: number; close(): Promise<void> } | undefined;
/** OpenTelemetry, when an OTLP endpoint is set (docs/operations.md#tracing). */
let telemetry: Telemetry | undefined;
let stopping = false;
/** The subscription streams the app holds open, ended at once on shutdown. */
const streams = new OpenStreams();

// Installed before anything starts, so that a signal during start-up (a slow
// database, migrations) stops the process cleanly too.
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info(`${signal} received, shutting down`);
  // The worker stops claiming at once and winds down while the open requests finish.
  const workerStopped = Promise.all([worker?.stop(), broadcasts?.stop()]);
  // The SMTP listener stops taking connections and lets the sessions in flight finish (at most 10 s), beside the HTTP drain.
  const smtpStopped = smtpListener?.close();
  if (server?.listening) {
    const open = server;
    const closed = new Promise((resolve) => open.once('close', resolve));
    open.close();
    // Subscription streams never end by themselves: they end now, with `complete`, and their
    // clients reconnect to another server; the drain then waits for ordinary requests alone.
    streams.endAll();
    // A request arriving on a keep-alive connection that is still open is served, then its connection closed.
    open.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => response.setHeader('connection', 'close'));
    // A connection whose request finishes becomes idle: closed then, not after the client's keep-alive timeout.
    const sweep = setInterval(() => open.closeIdleConnections(), 50);
    // A request still running after 10 s is cut off, so that shutdown stays bounded.
    const force = setTimeout(() => open.closeAllConnections(), 10_000);
    open.closeIdleConnections();
    await closed;
    clearInterval(sweep);
    clearTimeout(force);
  }
  await smtpStopped;
  await workerStopped;
  // The providers' connections are closed, not cut by the exit; a send the worker gave up on is abandoned.
  await closeProviders?.();
  await yoga?.dispose();
  await events?.dispose();
  await rateLimiter?.dispose();
  await db?.close();
  // The spans still buffered are exported, for at most a few seconds.
  await Promise.race([telemetry?.shutdown().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
  logger.info('stopped');
  process.exit(0);
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use: stop the process using it, or set PORT to another port`;
    case 'EACCES':
      return `not permitted to listen on ${host}:${port} (ports below 1024 need privileges): set PORT to another port`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses, e.g. 127.0.0.1`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST ${host} does not resolve to an address of this machine`;
    default:
      return `cannot listen on ${host}:${port}: ${error.message}`;
  }
}

async function start(env: Env) {
  // One line per phase of the start (docs/operations.md, Start-up), so that no start is silent for long.
  logger.info('starting: loading the server');
  // Before anything that uses pg or serves HTTP is loaded, so that the SDK's instrumentations
  // patch them; without an endpoint the SDK is never loaded.
  if (tracingEnabled(env)) telemetry = await step(async () => (await import('./telemetry.js')).startTelemetry(env, logger), 'OpenTelemetry: ');
  // Loaded only once the settings are valid, so that a bad setting is reported at once.
  const [
    { createApp },
    { openDatabase },
    { migrate },
    { demoBanner, demoReminder, findDemo, seedDemo },
    { DeliveryWorker },
    { createProviders },
    { schedulePurge },
    { createHttpServer },
    { loadSealer },
    { prepareSecrets },
    { processInboundEvent },
    { createEventBus },
    { createRateLimiter },
    { emailStore },
    { BroadcastRunner },
  ] = await Promise.all([
    import('./app.js'),
    import('./db/database.js'),
    import('./db/migrate.js'),
    import('./modules/demo/demo.seed.js'),
    import('./modules/delivery/delivery.worker.js'),
    import('./providers/registry.js'),
    import('./modules/idempotency/idempotency.service.js'),
    import('./http/server.js'),
    import('./lib/secrets-key.js'),
    import('./modules/secrets/secrets.service.js'),
    import('./modules/inbound/inbound.worker.js'),
    import('./realtime/bus.js'),
    import('./context/rate-limit.js'),
    import('./modules/inbound/email.store.js'),
    import('./modules/broadcasts/broadcasts.runner.js'),
  ]);
  logger.info(env.DATABASE_URL ? 'starting: connecting to PostgreSQL' : `starting: opening the embedded database in ${env.PGLITE_DIR}`);
  db = await step(() =>
    openDatabase({
      databaseUrl: env.DATABASE_URL,
      pgliteDir: env.PGLITE_DIR,
      poolSize: env.DB_POOL_SIZE,
      logger,
      connectTimeoutS: env.DB_CONNECT_TIMEOUT_S,
      statementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
      transactionTimeoutMs: env.DB_TRANSACTION_TIMEOUT_MS,
      preparedStatements: env.DB_PREPARED_STATEMENTS,
    }),
  );
  if (stopping) return;
  const open = db;
  logger.info(`database: ${db.description}`);
  if (env.MIGRATE_ON_START) {
    const { applied } = await step(
      () =>
        open.withSession((session) =>
          migrate(session, {
            onPending: (count) => logger.info(`starting: applying ${count} pending migration${count === 1 ? '' : 's'}`),
            onApplied: (name, index, count) => logger.info(`migration ${index} of ${count} applied: ${name}`),
          }),
        ),
      'migrations failed: ',
    );
    logger.info(applied.length ? `database schema is up to date (${applied.length} migrations applied)` : 'database schema is up to date');
  }
  if (stopping) return;
  // A key that cannot open what is stored stops the start here, not a delivery later.
  const sealer = await step(async () => {
    const loaded = loadSealer({ key: env.SECRETS_KEY, previous: env.SECRETS_KEY_PREVIOUS, kind: open.kind, pgliteDir: env.PGLITE_DIR });
    const { sealed } = await prepareSecrets(open.prisma, loaded);
    if (sealed) logger.info({ sealed }, 'stored secrets sealed with SECRETS_KEY');
    return loaded;
  });
  if (stopping) return;

  const providers = createProviders({
    timeoutMs: env.DELIVERY_TIMEOUT_MS,
    targets: privateTargets(env),
    publicUrl: publicUrl(env),
    settings: env,
    email: emailStore(db.prisma),
  });
  closeProviders = () => providers.close();
  // One bus for the app's subscriptions and the worker's inbound messages.
  events = createEventBus({ redisUrl: env.REDIS_URL, prefix: env.REDIS_PREFIX, logger, maxPending: env.SUBSCRIPTION_MAX_PENDING });
  const bus = events;
  worker = env.DELIVERY_WORKER
    ? new DeliveryWorker({
        prisma: db.prisma,
        sql: db.query,
        logger,
        providers,
        sealer,
        events: bus,
        inbound: (eventId) => processInboundEvent({ prisma: open.prisma, logger, events: bus, parsers: providers.parsers, sealer }, eventId),
        leaseMs: env.DELIVERY_LEASE_MS,
        pollMs: env.DELIVERY_POLL_MS,
        backoffMs: env.DELIVERY_BACKOFF_MS,
        maxBackoffMs: env.DELIVERY_MAX_BACKOFF_MS,
        tracing: telemetry?.tracing,
      })
    : undefined;
  // Broadcasts' messages are made where deliveries are worked: the runner wakes its process's worker.
  broadcasts = env.DELIVERY_WORKER
    ? new BroadcastRunner({ prisma: db.prisma, sql: db.query, logger, events: bus, providers: providers.list, onMessagesMade: () => worker?.nudge() })
    : undefined;
  rateLimiter = createRateLimiter({
    perMinute: env.RATE_LIMIT_PER_MINUTE,
    sessionPerMinute: env.SESSION_RATE_LIMIT_PER_MINUTE,
    redisUrl: env.REDIS_URL,
    prefix: env.REDIS_PREFIX,
    logger,
  });
  // Budgets are shared through Redis from the first request on: wait for it briefly before listening.
  if (rateLimiter && !(await rateLimiter.ready(3000))) logger.warn('rate limit store not reachable yet: counting in memory until it is');
  if (stopping) return;
  const app = createApp(
    { db, env, logger, streams, events: bus, sealer, providers, rateLimiter, onMessageQueued: () => worker?.nudge(), onBroadcastQueued: () => broadcasts?.nudge(), tracing: telemetry?.tracing },
    { plugins: telemetry?.plugins ?? [] },
  );
  yoga = app;
  const listener = createHttpServer(app, logger, { keepAliveMs: env.HTTP_KEEP_ALIVE_MS });

  // The port is bound before the demo is seeded: a failed start creates no key that nobody saw.
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(env.PORT, env.HOST, () => {
        listener.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await app.dispose();
    await db.close();
    fail(listenError(error as NodeJS.ErrnoException, env.HOST, env.PORT));
  }
  server = listener;
  if (stopping) return;
  const address = listener.address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  const shown = env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  logger.info(`Connect gateway listening on http://${shown}:${port} (REST /api/connect, GraphQL /graphql)`);
  if (env.SMTP_INBOUND_PORT !== undefined) await startSmtp(env, open);
  if (stopping) return;

  if (seedDemoEnabled(env, db.kind)) {
    logger.info('starting: seeding the demo workspace for localhost (when it does not exist)');
    const created = await seedDemo(db.prisma);
    const existing = created ? null : await findDemo(db.prisma);
    if (stopping) return;
    const options = { host: env.HOST, port, graphiql: env.NODE_ENV !== 'production', embedded: db.kind === 'pglite' };
    if (created) process.stdout.write(`${demoBanner(created, options)}\n`);
    else if (existing) process.stdout.write(`${demoReminder(existing, options)}\n`);
  }
  worker?.start();
  broadcasts?.start();
  schedulePurge(db.prisma, logger);
}

/** The inbound SMTP listener on SMTP_INBOUND_PORT (docs/channels.md); a port or certificate problem is one line, exit 1. */
async function startSmtp(env: Env, open: Database) {
  const [{ startSmtpListener }, { readFile }] = await Promise.all([import('./modules/inbound/smtp.listener.js'), import('node:fs/promises')]);
  const host = env.SMTP_INBOUND_HOST ?? env.HOST;
  const port = env.SMTP_INBOUND_PORT!;
  const tls =
    env.SMTP_INBOUND_TLS_CERT && env.SMTP_INBOUND_TLS_KEY
      ? await step(
          async () => ({ cert: await readFile(env.SMTP_INBOUND_TLS_CERT!), key: await readFile(env.SMTP_INBOUND_TLS_KEY!) }),
          'SMTP_INBOUND_TLS_CERT/SMTP_INBOUND_TLS_KEY: ',
        )
      : undefined;
  try {
    smtpListener = await startSmtpListener({
      db: open,
      logger,
      host,
      port,
      tls,
      onStored: () => worker?.nudge(),
      tracing: telemetry?.tracing,
      maxClients: env.SMTP_MAX_CLIENTS,
      sessionTimeoutMs: env.SMTP_SESSION_TIMEOUT_S * 1000,
    });
  } catch (error) {
    throw new StartError(`SMTP_INBOUND_PORT: ${listenError(error as NodeJS.ErrnoException, host, port).replace(/set PORT/g, 'set SMTP_INBOUND_PORT')}`);
  }
  const shown = host.includes(':') ? `[${host}]` : host;
  logger.info(`inbound SMTP listening on ${shown}:${smtpListener.port}${tls ? ' (STARTTLS)' : ''}`);
}

start(env).catch(async (error: Error) => {
  // During shutdown, closing the database may fail a start-up step; the shutdown exits.
  if (stopping) return;
  await db?.close().catch(() => {});
  if (error instanceof StartError) fail(error.message);
  logger.fatal({ err: error }, 'start-up failed');
  process.exit(1);
});
