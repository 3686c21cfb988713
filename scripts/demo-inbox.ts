// `npm run demo:inbox`: the web inbox (examples/web-inbox) on the demo workspace, offline. The
// gateway runs on an in-memory database with the demo seed (a few conversations with unread
// replies), its channel wired to a local stand-in for WhatsApp's Graph API
// (test/helpers/whatsapp-fake.ts); the inbox's backend and Vite's dev server run beside it. A reply
// sent from the page goes to the stand-in, which reports it sent, delivered and read (the ticks
// move), and the contact answers through a signed webhook: the answer arrives in the page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { loadEnv } from '../src/env.js';
import { createEventBus } from '../src/events/bus.js';
import { Sealer, newKey } from '../src/lib/sealed.js';
import { createLogger } from '../src/logger.js';
import { configureChannel } from '../src/modules/channels/channels.service.js';
import { DEMO_USER_EMAIL, seedDemo } from '../src/modules/demo/demo.seed.js';
import { DeliveryWorker } from '../src/modules/delivery/delivery.worker.js';
import { processInboundEvent } from '../src/modules/inbound/inbound.worker.js';
import { createProviders } from '../src/providers/registry.js';
import { createHttpServer } from '../src/http/server.js';
import { WHATSAPP_SETTINGS, signedHeaders, startWhatsAppFake, statusUpdate, textMessage, webhookBody } from '../test/helpers/whatsapp-fake.js';
import { startInboxServer } from '../examples/web-inbox/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free port of 127.0.0.1, when asked for port 0: the page's origin must be known before the gateway starts (CORS_ORIGINS). */
async function freePort(port: number): Promise<number> {
  if (port !== 0) return port;
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port: free } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return free;
}

const inboxPort = await freePort(Number(process.env.INBOX_PORT ?? 5190));
const inboxOrigin = `http://localhost:${inboxPort}`;
const env = loadEnv({
  ...process.env,
  PORT: process.env.PORT ?? '4100',
  DATABASE_URL: '',
  PGLITE_DIR: 'memory://',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  CORS_ORIGINS: inboxOrigin,
});
const logger = createLogger(env);

const fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
const db = await openDatabase({ pgliteDir: 'memory://' });
await db.withSession((session) => migrate(session));
const sealer = new Sealer(newKey());
const demo = (await seedDemo(db.prisma))!;
// The demo channel speaks WhatsApp through the stand-in.
await configureChannel(
  db.prisma,
  demo.channelId,
  {
    provider: 'whatsapp_cloud',
    settings: { phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId },
    secrets: { accessToken: WHATSAPP_SETTINGS.accessToken, appSecret: WHATSAPP_SETTINGS.appSecret, verifyToken: WHATSAPP_SETTINGS.verifyToken },
  },
  sealer,
);

const providers = createProviders({ timeoutMs: 5000, targets: 'allow', whatsapp: { baseUrl: fake.url, version: env.WHATSAPP_API_VERSION } });
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
const gatewayUrl = `http://localhost:${port}`;

/** Posts a webhook to the gateway as Meta would: signed with the channel's app secret. */
async function webhook(body: string) {
  await fetch(`http://127.0.0.1:${port}/webhooks/whatsapp/${demo.channelId}`, { method: 'POST', headers: { ...signedHeaders(body, WHATSAPP_SETTINGS.appSecret), host: 'localhost' }, body });
}

// What WhatsApp does with a message: sent, delivered and read, then the person answers.
fake.onSend((send, wamid) => {
  // A read receipt the gateway reports when the agent marks a conversation read: nothing to answer.
  if (send.body?.status === 'read') return;
  void (async () => {
    const to = `+${String(send.body?.to ?? '')}`;
    const contact = await db.prisma.contact.findFirst({ where: { workspaceId: demo.workspaceId, phone: to }, select: { name: true } });
    for (const status of ['sent', 'delivered', 'read'] as const) {
      await sleep(800);
      await webhook(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, statuses: [statusUpdate(wamid, status, { recipient: to })] }]));
    }
    await sleep(1500);
    await webhook(
      webhookBody([
        {
          phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId,
          contacts: [{ waId: to.slice(1), name: contact?.name ?? to }],
          messages: [textMessage(to, 'Thanks! (This answer came back through a signed WhatsApp webhook.)')],
        },
      ]),
    );
  })().catch((error: unknown) => console.error('demo stand-in failed:', (error as Error).message));
});

const inbox = await startInboxServer({ gatewayUrl, apiKey: demo.apiKey, port: inboxPort, mode: process.env.INBOX_MODE === 'built' ? 'built' : 'dev' });
process.stdout.write(`
Web inbox demo: the gateway at ${gatewayUrl} with the demo workspace, WhatsApp played by a local
stand-in at ${fake.url}. Nothing leaves this machine.

  Open ${inbox.url} and sign in as ${DEMO_USER_EMAIL}.

Open a conversation and send a reply: the stand-in reports it sent, delivered and read (the ticks
move), and the contact answers a moment later. Edits under examples/web-inbox/src reload the page.

Ctrl-C stops the demo.
`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await inbox.close();
  await worker?.stop();
  server.closeAllConnections();
  const closed = new Promise((resolve) => server.close(resolve));
  // The page's WebSockets are no longer the HTTP server's connections: the app closes them.
  await app.dispose();
  await closed;
  await events.dispose();
  await providers.close();
  await fake.close();
  await db.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
