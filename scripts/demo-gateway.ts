// The gateway the offline demos run (`npm run demo:whatsapp`, `npm run demo:inbox`): an in-memory
// database, a delivery worker, and a local stand-in for WhatsApp's Graph API
// (test/helpers/whatsapp-fake.ts) that the demo's channel speaks to, playing WhatsApp's part: a
// message it takes is reported sent, delivered and read through signed webhooks, then answered.
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { loadEnv } from '../src/env.js';
import { createEventBus } from '../src/events/bus.js';
import { Sealer, newKey } from '../src/lib/sealed.js';
import { createLogger } from '../src/logger.js';
import { DeliveryWorker } from '../src/modules/delivery/delivery.worker.js';
import { processInboundEvent } from '../src/modules/inbound/inbound.worker.js';
import { createProviders } from '../src/providers/registry.js';
import { createHttpServer } from '../src/http/server.js';
import { WHATSAPP_SETTINGS, signedHeaders, startWhatsAppFake, statusUpdate, textMessage, webhookBody } from '../test/helpers/whatsapp-fake.js';

/** The provider settings of a channel that speaks WhatsApp through the stand-in. */
export const STAND_IN_PROVIDER = {
  provider: 'whatsapp_cloud' as const,
  settings: { phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId },
  secrets: { accessToken: WHATSAPP_SETTINGS.accessToken, appSecret: WHATSAPP_SETTINGS.appSecret, verifyToken: WHATSAPP_SETTINGS.verifyToken },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface StandInAnswers<Made> {
  /** Before each status (sent, delivered, read) the stand-in reports, and before its answer. */
  statusDelayMs: number;
  answerDelayMs: number;
  /** Who answers a message sent to `to` (E.164), and with what; `made` is what the demo's setup made. */
  answer(to: string, db: Database, made: Made): Promise<{ name: string; text: string }>;
  /** Told each step, for a demo that narrates them. */
  log?(line: string): void;
}

/**
 * Starts the demo gateway on `env.PORT` (`options.env` over the process's environment), with what
 * `setup` makes on the migrated in-memory database (the stand-in's channel among it, returned as
 * `setup`), and the stand-in answering as `answers` says. `stop` ends it all and the process, after
 * the demo's own `before`.
 */
export async function startDemoGateway<Made extends { channelId: string }>(options: {
  env: Record<string, string | undefined>;
  setup(db: Database, sealer: Sealer): Promise<Made>;
  answers: StandInAnswers<Made>;
}) {
  const env = loadEnv({ ...process.env, PORT: process.env.PORT ?? '4100', DATABASE_URL: '', PGLITE_DIR: 'memory://', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...options.env });
  const logger = createLogger(env);
  const fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  const db = await openDatabase({ pgliteDir: 'memory://' });
  await db.withSession((session) => migrate(session));
  const sealer = new Sealer(newKey());
  const setup = await options.setup(db, sealer);
  const { channelId } = setup;

  const providers = createProviders({ timeoutMs: 5000, targets: 'allow', settings: { WHATSAPP_API_URL: fake.url, WHATSAPP_API_VERSION: env.WHATSAPP_API_VERSION } });
  const events = createEventBus({ logger });
  let worker: DeliveryWorker | undefined;
  const app = createApp({ db, env, logger, events, sealer, providers, onMessageQueued: () => worker?.nudge() });
  worker = new DeliveryWorker({
    prisma: db.prisma,
    sql: db.query,
    logger,
    providers,
    sealer,
    events,
    inbound: (eventId) => processInboundEvent({ prisma: db.prisma, logger, events, parsers: providers.parsers, sealer }, eventId),
    leaseMs: 30_000,
    pollMs: 200,
    backoffMs: 500,
  });
  const server = createHttpServer(app, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(env.PORT, '127.0.0.1', resolve);
  });
  worker.start();
  const port = (server.address() as AddressInfo).port;

  /** Posts a webhook to the gateway as Meta would: signed with the channel's app secret. */
  const webhook = async (body: string) => {
    await fetch(`http://127.0.0.1:${port}/webhooks/whatsapp/${channelId}`, { method: 'POST', headers: { ...signedHeaders(body, WHATSAPP_SETTINGS.appSecret), host: 'localhost' }, body });
  };

  // What WhatsApp does with a message: sent, delivered and read, then the person answers.
  const { answers } = options;
  fake.onSend((send, wamid) => {
    // A read receipt the gateway reports when an agent marks a conversation read: nothing to answer.
    if (send.body?.status === 'read') return;
    void (async () => {
      const to = `+${String(send.body?.to ?? '')}`;
      answers.log?.(`\n→ WhatsApp (local stand-in) took a ${send.body?.type} message for ${to}: ${wamid}`);
      for (const status of ['sent', 'delivered', 'read'] as const) {
        await sleep(answers.statusDelayMs);
        await webhook(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, statuses: [statusUpdate(wamid, status, { recipient: to })] }]));
        answers.log?.(`← status ${status}`);
      }
      await sleep(answers.answerDelayMs);
      const answer = await answers.answer(to, db, setup);
      await webhook(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, contacts: [{ waId: to.slice(1), name: answer.name }], messages: [textMessage(to, answer.text)] }]));
      answers.log?.(`← a reply from ${answer.name} (see GraphiQL, or GET /api/connect/messages)`);
    })().catch((error: unknown) => console.error('demo stand-in failed:', (error as Error).message));
  });

  let stopping = false;
  const stop = async (before?: () => Promise<unknown>) => {
    if (stopping) return;
    stopping = true;
    await before?.();
    await worker?.stop();
    server.closeAllConnections();
    const closed = new Promise((resolve) => server.close(resolve));
    // WebSockets are no longer the HTTP server's connections: the app closes them.
    await app.dispose();
    await closed;
    await events.dispose();
    await providers.close();
    await fake.close();
    await db.close();
    process.exit(0);
  };

  return { fake, setup, url: `http://localhost:${port}`, stop };
}
