// `npm run demo:inbox`: the web inbox (examples/web-inbox) on the demo workspace, offline. The
// gateway runs on an in-memory database with the demo seed (a few conversations with unread
// replies), its channel wired to a local stand-in for WhatsApp's Graph API
// (test/helpers/whatsapp-fake.ts); the inbox's backend and Vite's dev server run beside it. A reply
// sent from the page goes to the stand-in, which reports it sent, delivered and read (the ticks
// move), and the contact answers through a signed webhook: the answer arrives in the page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { configureChannel } from '../src/modules/channels/channels.service.js';
import { DEMO_USER_EMAIL, seedDemo } from '../src/modules/demo/demo.seed.js';
import { startInboxServer } from '../examples/web-inbox/server.js';
import { STAND_IN_PROVIDER, startDemoGateway } from './demo-gateway.js';

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
const gateway = await startDemoGateway({
  env: { CORS_ORIGINS: inboxOrigin },
  setup: async (db, sealer) => {
    const demo = (await seedDemo(db.prisma))!;
    // The demo channel speaks WhatsApp through the stand-in.
    await configureChannel(db.prisma, demo.channelId, STAND_IN_PROVIDER, sealer);
    return demo;
  },
  answers: {
    statusDelayMs: 800,
    answerDelayMs: 1500,
    answer: async (to, db, demo) => {
      const contact = await db.prisma.contact.findFirst({ where: { workspaceId: demo.workspaceId, phone: to }, select: { name: true } });
      return { name: contact?.name ?? to, text: 'Thanks! (This answer came back through a signed WhatsApp webhook.)' };
    },
  },
});
const { apiKey } = gateway.setup;
const gatewayUrl = gateway.url;
const fake = gateway.fake;

const inbox = await startInboxServer({ gatewayUrl, apiKey, port: inboxPort, mode: process.env.INBOX_MODE === 'built' ? 'built' : 'dev' });
process.stdout.write(`
Web inbox demo: the gateway at ${gatewayUrl} with the demo workspace, WhatsApp played by a local
stand-in at ${fake.url}. Nothing leaves this machine.

  Open ${inbox.url} and sign in as ${DEMO_USER_EMAIL}.

Open a conversation and send a reply: the stand-in reports it sent, delivered and read (the ticks
move), and the contact answers a moment later. Edits under examples/web-inbox/src reload the page.

Ctrl-C stops the demo.
`);

const stop = () => gateway.stop(() => inbox.close());
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
