/**
 * `npm run bench`: the gateway against the floor (bench/floor/server.ts), both real
 * processes on one fresh PostgreSQL database, in alternating rounds of the same
 * autocannon load, reporting throughput ratios, latencies, statement counts and
 * CPU per request, and judging them against the performance targets. On a
 * shared machine absolute numbers swing; ratios measured in the same run do not,
 * so every ratio is the median of per-round ratios. `--help` lists the options.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { createTemporaryDatabase } from '../src/db/temporary.js';
import { newKey } from '../src/lib/sealed.js';
import { HELP, UsageError, parseArgs, type Settings } from './args.js';
import { contactSearch, pageLatency, rareContactName, searchLatency, type SearchLatency } from './checks.js';
import { loadContext } from './context.js';
import { closeConnections } from './http.js';
import { TRANSPORT_NAMES, crowdRound, type CrowdResult } from './crowd.js';
import { mixedCrowdRound, type MixedCrowdResult } from './mixed-crowd.js';
import { Counter, drainOutbox, load, scrapeGauges } from './measure.js';
import { OPERATIONS, type Operation } from './operations.js';
import { duration, note } from './progress.js';
import { summariseProfile } from './profile.js';
import { judge, render, summarise, summariseWhatsApp, type OperationResult, type Report, type RoundExtras } from './report.js';
import { BENCH_WHATSAPP, addMessages, closeSessions, createTenant, createWhatsAppChannel, openSessions, seedData } from './seed.js';
import { ROOT, buildGateway, buildRef, liveHeapMb, rssMb, startFloor, startGateway, type ServerProcess, type WhatsAppSettings } from './servers.js';
import { countStatements, type StatementReport } from './statements.js';
import { growInbox, inboxLatency, type InboxAtScale } from './inbox-scale.js';
import { importRow, type ImportRun } from './import.js';
import { broadcastRound, type BroadcastResult } from './broadcast.js';
import { deliveryRound, discardInbound, inboundProcessing, repliers } from './whatsapp.js';
import { startBenchWhatsAppFake, type BenchWhatsAppFake } from './whatsapp-fake.js';

/**
 * Each GraphQL operation beside the REST one it is judged against: their throughputs are compared
 * across windows, which then see the same minute of the machine rather than two minutes apart
 * (there the gateway's GraphQL-to-REST ratio swung 0.79–1.44 between rounds, and the floor's own
 * between the same two windows 0.69–1.33). Which of the two goes first alternates by round, as
 * gateway and floor do, since the second window of a pair ran slower on both servers.
 */
function loadOrder(ops: Operation[], round: number): Operation[] {
  const follows = (op: Operation) => op.rest !== undefined && ops.some((other) => other.id === op.rest!.id);
  // An operation judged against one that is itself judged against another joins their group.
  const followers = (op: Operation): Operation[] => ops.filter((other) => follows(other) && other.rest!.id === op.id).flatMap((other) => [other, ...followers(other)]);
  return ops.flatMap((op) => {
    if (follows(op)) return [];
    const pair = [op, ...followers(op)];
    return round % 2 === 0 ? pair : pair.reverse();
  });
}

/** Work to undo however the run ends: servers to stop, the database to drop. Last added, first run. */
class Cleanup {
  private readonly steps: (() => Promise<unknown>)[] = [];
  private running: Promise<void> | null = null;
  add(step: () => Promise<unknown>) {
    this.steps.push(step);
  }
  run(): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length) await this.steps.pop()!().catch((error: Error) => note(`cleanup: ${error.message}`));
    })();
    return this.running;
  }
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

async function machine(monitor: pg.ClientBase): Promise<Record<string, string | number>> {
  const { rows } = await monitor.query<{ version: string; shared_buffers: string }>(`SELECT version(), current_setting('shared_buffers') AS shared_buffers`);
  return {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.versions.node,
    postgres: rows[0]!.version.split(' on ')[0]!,
    sharedBuffers: rows[0]!.shared_buffers,
    loadAverage: os.loadavg()[0]!.toFixed(2),
  };
}

async function throughput(
  settings: Settings,
  ops: Operation[],
  servers: ServerProcess[],
  ctx: Parameters<typeof load>[2],
  counter: Counter,
  monitor: pg.ClientBase,
  options: {
    /** The gateway inbound acceptance is measured on: its worker off, as the floor processes nothing. */
    acceptor: ServerProcess | null;
    /** What else each round measures once its operations have run. */
    afterRound(round: number): Promise<void>;
    /** Whether the servers run their delivery workers: without them nothing empties the outbox, so no window waits for it. */
    workers: boolean;
  },
): Promise<OperationResult[]> {
  const rounds = new Map<string, OperationResult['rounds']>(ops.map((op) => [op.id, []]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const op of loadOrder(ops, round)) {
      const pair = op.inbound ? servers.map((server) => (server.name === 'gateway' ? options.acceptor! : server)) : servers;
      // Alternating who goes first cancels a drift of the machine's load within a round.
      const order = round % 2 === 0 ? pair : [...pair].reverse();
      const windows: Record<string, Awaited<ReturnType<typeof load>>> = {};
      const drains: Record<string, number> = {};
      const drained = op.write && options.workers;
      for (const server of order) {
        if (settings.warmup > 0) await load(server.base, op, ctx, counter, { connections: settings.connections, duration: settings.warmup });
        // Each window starts with an empty outbox and its server delivers what it accepted.
        if (drained) await drainOutbox(monitor);
        if (op.inbound) await discardInbound(monitor);
        const window = await load(server.base, op, ctx, counter, {
          connections: settings.connections,
          duration: settings.duration,
          pid: server.pid,
          monitor,
          gauges: server.name === 'gateway',
        });
        if (drained) drains[server.name] = await drainOutbox(monitor);
        if (op.inbound) await discardInbound(monitor);
        windows[server.name] = window;
        note(
          `round ${round + 1}/${settings.rounds}  ${op.id.padEnd(18)} ${server.name.padEnd(7)} ${window.rps.toFixed(0).padStart(6)} req/s  ` +
            `p50 ${window.p50.toFixed(0)} ms  p99 ${window.p99.toFixed(0)} ms  errors ${window.errors}${window.samples[0] ? ` (${window.samples[0].slice(0, 120)})` : ''}`,
        );
      }
      rounds.get(op.id)!.push({ gateway: windows.gateway!, floor: windows.floor!, ...(drained ? { drainS: { gateway: drains.gateway!, floor: drains.floor! } } : {}) });
    }
    await options.afterRound(round);
  }
  return ops.map((op) => summarise(op, rounds.get(op.id)!, op.rest ? rounds.get(op.rest.id) : undefined));
}

async function main(): Promise<number> {
  let settings: Settings;
  try {
    const parsed = parseArgs(process.argv.slice(2));
    if (parsed === 'help') {
      process.stdout.write(HELP);
      return 0;
    }
    settings = parsed;
    if (settings.render) {
      const report = JSON.parse(fs.readFileSync(settings.render, 'utf8')) as Report;
      process.stdout.write(`${render(report)}\n`);
      return report.passed ? 0 : 1;
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  const started = performance.now();
  const startedAt = new Date().toISOString();
  let ops = settings.scale && !settings.only.length ? [] : OPERATIONS.filter((op) => !settings.only.length || settings.only.includes(op.id));
  // Inbound processing and delivery through each worker, once per round (delivery needs contacts that wrote in first).
  const wanted = (id: string) => (settings.only.length ? settings.only.includes(id) : !settings.scale);
  let deliveryRows = settings.worker && wanted('wa.deliver');
  let processingRows = settings.worker && (wanted('wa.process') || deliveryRows);
  const cleanup = new Cleanup();
  const interrupted = (signal: string) => {
    note(`${signal}: stopping the servers and dropping the bench database`);
    void cleanup.run().then(() => process.exit(130));
  };
  process.once('SIGINT', () => interrupted('SIGINT'));
  process.once('SIGTERM', () => interrupted('SIGTERM'));

  try {
    const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'connect-bench-'));
    // What is measured: the working tree as built now (its commit, and whether src/ or prisma/ differ
    // from it), or the commit --ref names, built by itself.
    let commit = git(['rev-parse', 'HEAD']) || 'unknown';
    let dirty = git(['status', '--porcelain', '--', 'src', 'prisma']) !== '';
    let dist: string | undefined;
    if (settings.ref) {
      note(`building ${settings.ref} apart from the working tree`);
      const built = buildRef(settings.ref);
      cleanup.add(async () => fs.rmSync(built.dir, { recursive: true, force: true }));
      ({ commit, dist } = built);
      dirty = false;
    } else if (settings.build) {
      note('building the gateway (npm run build)');
      buildGateway();
    } else if (!fs.existsSync(path.join(ROOT, 'dist/main.js'))) {
      throw new Error('--no-build, but dist/main.js does not exist: run npm run build first');
    }

    note(`creating a database on ${settings.server.replace(/\/\/[^@/]*@/, '//')}`);
    const database = await createTemporaryDatabase(settings.server, 'connect_bench');
    cleanup.add(async () => {
      if (settings.keep) note(`kept the bench database: ${database.url}`);
      else await database.drop();
    });
    const db = await openDatabase({ databaseUrl: database.url, poolSize: 2 });
    // The measured version's own migrations: a commit's schema, not the working tree's.
    await db.withSession((session) => migrate(session, dist ? { dir: path.join(dist, '../prisma/migrations') } : {}));
    await db.close();
    const tenant = createTenant(database.url, dist ?? path.join(ROOT, 'dist'));
    // Both servers seal and open stored credentials with one key, and send WhatsApp messages to a stand-in on 127.0.0.1.
    const fake: BenchWhatsAppFake = await startBenchWhatsAppFake(BENCH_WHATSAPP.accessToken);
    cleanup.add(() => fake.close());
    const whatsapp: WhatsAppSettings = { secretsKey: newKey().toString('base64'), apiUrl: fake.url };
    let whatsappChannel = { channelId: '', apiKey: '' };
    try {
      whatsappChannel = createWhatsAppChannel(database.url, dist ?? path.join(ROOT, 'dist'), whatsapp.secretsKey);
    } catch (error) {
      // A gateway from before the provider layer (--ref) has no whatsapp_cloud channels: its run has no WhatsApp rows.
      note(`no whatsapp_cloud channel could be made, so no WhatsApp rows: ${(error as Error).message.split('\n')[0]}`);
      ops = ops.filter((op) => !op.inbound);
      processingRows = deliveryRows = false;
    }

    const sessions = await openSessions(database.url);
    cleanup.add(() => closeSessions(sessions));
    const monitor = new pg.Client({ connectionString: database.url });
    await monitor.connect();
    cleanup.add(() => monitor.end());
    const seedStarted = performance.now();
    const initialMessages = settings.scale ? Math.max(1, Math.floor(settings.messages / 10)) : settings.messages;
    note(`seeding ${settings.contacts.toLocaleString('en-US')} contacts and ${initialMessages.toLocaleString('en-US')} messages`);
    const fixture = await seedData(sessions, tenant, { contacts: settings.contacts, messages: initialMessages });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    note(`seeded in ${duration(seedSeconds)}`);

    const ctx = await loadContext(monitor, fixture, Date.now().toString(36), whatsappChannel);
    if (!ctx.sessionToken && ops.some((op) => op.session)) {
      note('the measured version has no session tokens, so no session rows');
      ops = ops.filter((op) => !op.session);
    }
    const counter = new Counter();
    const contactTerm = await rareContactName(monitor, fixture.workspaceId);
    let statements: StatementReport | null = null;
    if (settings.statements) {
      note('counting SQL statements per operation');
      statements = await countStatements({
        databaseUrl: database.url,
        logDir: logs,
        pool: settings.pool,
        ops: ops.length ? ops : OPERATIONS.filter((op) => !op.write),
        ctx,
        counter,
        monitor,
        worker: settings.worker,
        contactSearch: contactTerm,
        dist,
        whatsapp,
      });
      // The webhooks counted were stored for processing: nothing is to process them.
      await discardInbound(monitor);
      if (settings.showSql) {
        for (const [name, counts] of [['gateway', statements.gateway], ['floor', statements.floor]] as const) {
          for (const [id, count] of Object.entries(counts)) note(`${name} ${id}: ${count.perRequest}\n  ${count.sample.join('\n  ')}`);
        }
      }
    }

    note('starting the gateway and the floor');
    const gateway = await startGateway(database.url, logs, { worker: settings.worker, poolSize: settings.pool, profile: settings.profile, dist, whatsapp, traceGc: true });
    cleanup.add(() => gateway.stop());
    const floor = await startFloor(database.url, logs, { worker: settings.worker, poolSize: settings.pool, whatsapp, prepared: settings.floorPrepared });
    cleanup.add(() => floor.stop());
    const servers = [gateway, floor];
    let acceptor: ServerProcess | null = null;
    if (ops.some((op) => op.inbound)) {
      // Its own directory, so that its CPU profile is told apart from the gateway's.
      const dir = path.join(logs, 'inbound');
      fs.mkdirSync(dir);
      acceptor = await startGateway(database.url, dir, { worker: false, poolSize: settings.pool, profile: settings.profile, dist, whatsapp });
      cleanup.add(() => acceptor!.stop());
      // A new process is slow for its first thousands of requests (the compiler at work); the floor has served
      // every operation before. Both take webhooks, unmeasured, before the first round.
      const inbound = ops.find((op) => op.inbound)!;
      for (const server of [acceptor, floor]) await load(server.base, inbound, ctx, counter, { connections: settings.connections, duration: 3 });
      await discardInbound(monitor);
    }

    const extras: RoundExtras[] = [];
    const afterRound = async (round: number) => {
      const extra: RoundExtras = { round: round + 1, processing: null, delivery: null, rssMb: null, heapUsedMb: null, liveHeapMb: null, fullCollections: 0 };
      if (processingRows) {
        extra.processing = await inboundProcessing(gateway, ctx, counter, monitor, { connections: settings.connections, duration: settings.duration });
        const p = extra.processing;
        note(
          `round ${round + 1}/${settings.rounds}  ${'wa.process'.padEnd(18)} gateway ${p.processedPerS.toFixed(0).padStart(6)} events/s  ` +
            `steady ${p.steadyRate}/s: lag p50 ${p.lag.p50.toFixed(0)} ms  p99 ${p.lag.p99.toFixed(0)} ms  missing ${p.missing}  errors ${p.errors}`,
        );
      }
      if (deliveryRows) {
        const recipients = await repliers(monitor, ctx.whatsapp.channelId);
        extra.delivery = await deliveryRound(servers, round, ctx, counter, monitor, fake, recipients, { connections: settings.connections, duration: settings.duration });
      }
      // Memory after each round: the same figure rising round after round is a leak.
      const gauges = await scrapeGauges(gateway.base);
      extra.rssMb = rssMb(gateway.pid);
      extra.heapUsedMb = gauges?.heapUsedMb ?? null;
      const live = liveHeapMb(gateway.logFile);
      extra.liveHeapMb = live?.mb ?? null;
      extra.fullCollections = live?.collections ?? 0;
      note(
        `round ${round + 1}/${settings.rounds}  gateway RSS ${extra.rssMb?.toFixed(0) ?? '?'} MB, heap used ${extra.heapUsedMb?.toFixed(0) ?? '?'} MB, ` +
          `live after the latest full collection ${extra.liveHeapMb?.toFixed(0) ?? '?'} MB (${extra.fullCollections} so far)`,
      );
      extras.push(extra);
    };
    const operations =
      ops.length || processingRows ? await throughput(settings, ops, servers, ctx, counter, monitor, { acceptor, afterRound, workers: settings.worker }) : [];
    await acceptor?.stop();
    note('measuring latency one request at a time');
    let search = await searchLatency(servers, ctx, monitor);
    let searchAtScale: Report['searchAtScale'] = null;
    if (settings.scale) {
      note(`growing the messages to ${settings.messages.toLocaleString('en-US')}`);
      await addMessages(sessions, fixture, settings.messages - initialMessages);
      // Deep cursors for the grown data: the page checks below run on all of it.
      Object.assign(ctx, await loadContext(monitor, fixture, ctx.run, whatsappChannel));
      const before = search;
      search = await searchLatency(servers, ctx, monitor);
      const growth = Object.fromEntries(Object.entries(search).map(([kind, r]) => [kind, r.gateway.p50 / before[kind as keyof SearchLatency].gateway.p50]));
      searchAtScale = { messages: settings.messages, before: initialMessages, latency: before, growth };
    }
    const pages = await pageLatency(servers, ctx);
    let inboxAtScale: InboxAtScale | null = null;
    if (settings.inboxScale > 0) {
      note(`adding ${settings.inboxScale.toLocaleString('en-US')} conversations for the inbox at scale`);
      const seconds = await growInbox(sessions, fixture, settings.inboxScale);
      inboxAtScale = { ...(await inboxLatency(gateway, ctx, monitor, fixture)), seedSeconds: Math.round(seconds * 10) / 10 };
      note(`inbox at scale: ${JSON.stringify(inboxAtScale)}`);
    }
    let crowd: CrowdResult | null = null;
    if (settings.crowd > 0) {
      const { crowdProcesses: processes } = settings;
      note(`the crowd: ${settings.crowd} subscribers (${TRANSPORT_NAMES[settings.crowdTransport]}) on ${processes} gateway process(es), REST sends at 50/s for ${settings.crowdSeconds} s after ${settings.crowdWarmup} s unmeasured`);
      crowd = await crowdRound(
        (index, env) => startGateway(database.url, logs, { worker: false, poolSize: settings.pool, dist, whatsapp, profile: settings.profile, log: `crowd-${index + 1}.log`, collectOnSignal: true, env }),
        ctx,
        {
          subscribers: settings.crowd,
          transport: settings.crowdTransport,
          processes,
          redisUrl: settings.redis,
          env: settings.crowdEnv,
          warmup: settings.crowdWarmup,
          seconds: settings.crowdSeconds,
          ...(settings.crowdClients ? { clients: settings.crowdClients } : {}),
        },
      );
      note(`crowd: ${JSON.stringify(crowd)}`);
    }
    let mixedCrowd: MixedCrowdResult | null = null;
    if (settings.mixedCrowd > 0) {
      const { crowdProcesses: processes } = settings;
      note(
        `the mixed crowd: ${settings.mixedCrowd} session subscribers over ${settings.mixedChannels} channels on ${processes} gateway process(es), ` +
          `REST sends at 50/s and typing reports at ${settings.mixedTyping}/s for ${settings.crowdSeconds} s after ${settings.crowdWarmup} s unmeasured`,
      );
      mixedCrowd = await mixedCrowdRound(
        (index, env) => startGateway(database.url, logs, { worker: false, poolSize: settings.pool, dist, whatsapp, profile: settings.profile, log: `mixed-crowd-${index + 1}.log`, collectOnSignal: true, env }),
        { host: ctx.host, sendContacts: ctx.sendContacts, workspaceId: fixture.workspaceId },
        { db: monitor, databaseUrl: database.url, dist: dist ?? path.join(ROOT, 'dist'), secretsKey: whatsapp?.secretsKey },
        {
          subscribers: settings.mixedCrowd,
          channels: settings.mixedChannels,
          typingRate: settings.mixedTyping,
          processes,
          redisUrl: settings.redis,
          env: settings.crowdEnv,
          warmup: settings.crowdWarmup,
          seconds: settings.crowdSeconds,
          ...(settings.crowdClients ? { clients: settings.crowdClients } : {}),
        },
      );
      note(`mixed crowd: ${JSON.stringify(mixedCrowd)}`);
    }
    const contacts = await contactSearch(monitor, statements?.contactSearch ?? null, contactTerm, settings.contacts, gateway, ctx);
    // After the contact search: its plan is judged on the seeded contacts alone.
    let imported: ImportRun | null = null;
    if (settings.import > 0) {
      note(`the import row: ${settings.import.toLocaleString('en-US')} contacts through POST /contacts/import`);
      imported = await importRow(gateway, ctx, settings.import);
      note(`import: ${JSON.stringify(imported)}`);
    }
    const rss = rssMb(gateway.pid);
    closeConnections();
    let broadcast: BroadcastResult | null = null;
    if (settings.broadcast > 0) {
      // Last, on gateways of its own: the bench's gateway and floor (whose workers would take the
      // broadcast's deliveries from the outbox) are done with.
      await gateway.stop();
      await floor.stop();
      const { broadcast: recipients, broadcastRate: rate, broadcastProcesses: processes, broadcastLimitSeconds: limitSeconds } = settings;
      note(`the broadcast row: ${recipients.toLocaleString('en-US')} recipients at ${rate}/s on ${processes} gateway process(es)${limitSeconds ? `, 429s for ${limitSeconds} s mid-run` : ''}; load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
      broadcast = await broadcastRound(
        (index, env) => startGateway(database.url, logs, { worker: true, poolSize: settings.pool, dist, whatsapp, profile: settings.profile, log: `broadcast-${index + 1}.log`, collectOnSignal: true, traceGc: true, env }),
        { databaseUrl: database.url, dist: dist ?? path.join(ROOT, 'dist'), host: ctx.host, secretsKey: whatsapp.secretsKey },
        { recipients, rate, processes, limitSeconds },
      );
      note(`broadcast: ${JSON.stringify(broadcast)}`);
    }

    const partial: Omit<Report, 'targets' | 'passed' | 'profile' | 'inboundProfile'> = {
      version: 1,
      commit,
      dirty,
      startedAt,
      durationS: (performance.now() - started) / 1000,
      machine: await machine(monitor),
      settings: { ...settings, server: undefined, ops: ops.map((op) => op.id) },
      seed: { contacts: fixture.contacts, messages: fixture.messages, conversations: fixture.conversations, seconds: Math.round(seedSeconds * 10) / 10 },
      operations,
      statements,
      pages,
      crowd,
      mixedCrowd,
      search,
      searchAtScale,
      inboxAtScale,
      importRun: imported,
      broadcast,
      contactSearch: contacts,
      whatsapp: extras.length ? summariseWhatsApp(extras) : null,
      rounds: extras,
      rssMb: rss === null ? null : Math.round(rss),
      logs,
    };
    const targets = judge(partial);
    await cleanup.run();
    const profile = settings.profile ? summariseProfile(logs) : null;
    const inboundProfile = settings.profile && acceptor ? summariseProfile(path.join(logs, 'inbound')) : null;
    const report: Report = { ...partial, profile, inboundProfile, targets, passed: targets.every((t) => t.pass !== false) };
    report.durationS = (performance.now() - started) / 1000;
    process.stdout.write(settings.json ? `${JSON.stringify(report)}\n` : `\n${render(report)}\n`);
    return report.passed ? 0 : 1;
  } catch (error) {
    await cleanup.run();
    throw error;
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`bench failed: ${error.stack ?? error.message}\n`);
    process.exit(3);
  },
);
