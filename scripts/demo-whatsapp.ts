// `npm run demo:whatsapp`: a whole WhatsApp round trip offline. The gateway runs on an in-memory
// database beside a local stand-in for Meta's Graph API (test/helpers/whatsapp-fake.ts); a message
// sent through the API goes to the stand-in, which reports it sent, delivered and read, and answers
// with a reply that comes back through a signed webhook, into GraphQL's messageAdded.
import { createApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { loadEnv } from '../src/env.js';
import { createEventBus } from '../src/events/bus.js';
import { Sealer, newKey } from '../src/lib/sealed.js';
import { createLogger } from '../src/logger.js';
import { createChannel } from '../src/modules/channels/channels.service.js';
import { DeliveryWorker } from '../src/modules/delivery/delivery.worker.js';
import { processInboundEvent } from '../src/modules/inbound/inbound.worker.js';
import { createTemplate } from '../src/modules/templates/templates.service.js';
import { createWorkspace } from '../src/modules/workspaces/workspaces.service.js';
import { createProviders } from '../src/providers/registry.js';
import { createHttpServer } from '../src/http/server.js';
import { WHATSAPP_SETTINGS, signedHeaders, startWhatsAppFake, statusUpdate, textMessage, webhookBody } from '../test/helpers/whatsapp-fake.js';

const PHONE = '+31612345678';
const env = loadEnv({ ...process.env, PORT: process.env.PORT ?? '4100', DATABASE_URL: '', PGLITE_DIR: 'memory://', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const logger = createLogger(env);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
const db = await openDatabase({ pgliteDir: 'memory://' });
await db.withSession((session) => migrate(session));
const sealer = new Sealer(newKey());

const workspace = await createWorkspace(db.prisma, { hostname: 'localhost', name: 'WhatsApp demo' });
const { channel, apiKey } = await createChannel(
  db.prisma,
  {
    workspaceId: workspace.id,
    name: 'Demo WhatsApp',
    type: 'whatsapp',
    provider: {
      provider: 'whatsapp_cloud',
      settings: { phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId },
      secrets: { accessToken: WHATSAPP_SETTINGS.accessToken, appSecret: WHATSAPP_SETTINGS.appSecret, verifyToken: WHATSAPP_SETTINGS.verifyToken },
    },
  },
  sealer,
);
await createTemplate(db.prisma, {
  workspaceId: workspace.id,
  channelId: channel.id,
  name: 'welcome',
  language: 'en_US',
  body: 'Hello {{1}}, thanks for trying the Connect gateway!',
  status: 'approved',
});

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
const port = (server.address() as { port: number }).port;
const base = `http://localhost:${port}`;

/** Posts a webhook to the gateway as Meta would: signed with the channel's app secret. */
async function webhook(body: string) {
  await fetch(`http://127.0.0.1:${port}/webhooks/whatsapp/${channel.id}`, { method: 'POST', headers: { ...signedHeaders(body, WHATSAPP_SETTINGS.appSecret), host: 'localhost' }, body });
}

// What WhatsApp does with a message: sent, delivered and read, then the person answers.
fake.onSend((send, wamid) => {
  void (async () => {
    const to = `+${String(send.body?.to ?? '')}`;
    console.log(`\n→ WhatsApp (local stand-in) took a ${send.body?.type} message for ${to}: ${wamid}`);
    for (const status of ['sent', 'delivered', 'read'] as const) {
      await sleep(700);
      await webhook(webhookBody([{ phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId, statuses: [statusUpdate(wamid, status, { recipient: to })] }]));
      console.log(`← status ${status}`);
    }
    await sleep(700);
    await webhook(
      webhookBody([
        {
          phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId,
          contacts: [{ waId: to.slice(1), name: 'Demo Person' }],
          messages: [textMessage(to, 'Thanks! This reply came back through a signed WhatsApp webhook.')],
        },
      ]),
    );
    console.log('← a reply from Demo Person (see GraphiQL, or GET /api/connect/messages)');
  })().catch((error: unknown) => console.error('demo stand-in failed:', (error as Error).message));
});

const body = JSON.stringify({ to: { phone: PHONE, name: 'Demo Person' }, type: 'template', template: { name: 'welcome', parameters: ['Demo Person'] } });
process.stdout.write(`
WhatsApp demo: the gateway at ${base}, WhatsApp's Graph API played by a local stand-in at ${fake.url}.
Nothing leaves this machine.

1. Open ${base}/graphql, paste in the Headers tab:
     {"Authorization": "Bearer ${apiKey}"}
   and run:
     subscription { messageAdded { direction status body sender { type name } } }

2. Send a template message to ${PHONE} (outside WhatsApp's 24-hour window only templates may go):
     curl -s -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' \\
       -d '${body}' ${base}/api/connect/messages

3. Watch: the stand-in takes it, reports it sent, delivered and read, and Demo Person replies.
   Then list the conversation's messages, statuses included:
     curl -s -H 'Authorization: Bearer ${apiKey}' ${base}/api/connect/messages

Ctrl-C stops the demo.
`);

async function stop() {
  await worker?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await app.dispose();
  await events.dispose();
  await providers.close();
  await fake.close();
  await db.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
