import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInboxServer, type InboxServer } from '../../examples/web-inbox/server.js';
import { configureChannel } from '../../src/modules/channels/channels.service.js';
import { DEMO_USER_EMAIL, seedDemo, type DemoSeed } from '../../src/modules/demo/demo.seed.js';
import { receiveMessage } from '../../src/modules/inbound/inbound.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { browserSuite } from '../helpers/browser.js';
import { serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { testSealer } from '../helpers/secrets.js';
import { WHATSAPP_SETTINGS, signedHeaders, startWhatsAppFake, statusUpdate, textMessage, webhookBody, type WhatsAppChange, type WhatsAppFake } from '../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../helpers/worker.js';
import type { DeliveryWorker } from '../../src/modules/delivery/delivery.worker.js';

// The web inbox example as `npm run demo:inbox` runs it: the gateway on a real port with the demo
// workspace (origin http://localhost:G), its channel speaking WhatsApp to the local stand-in, a
// delivery worker beside it, and the example's server (backend and built page) on another origin
// (http://localhost:B, in CORS_ORIGINS), driven in chromium.

const suite = browserSuite('the web inbox example in a real browser');

/** Waits for what the page shows; generous, since the machine may be busy. */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000 });
const HISTORY = 30;
const LINUS = { name: 'Linus Torvalds', phone: '+31612340009' };
const GRACE_PHONE = '+31612340002';

describe.skipIf(suite.skip)(suite.title, () => {
  let app: TestApp | undefined;
  let gateway: ServedApp | undefined;
  let worker: DeliveryWorker | undefined;
  let fake: WhatsAppFake | undefined;
  let inbox: InboxServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let outDir: string;
  let gatewayUrl: string;
  let demo: DemoSeed;
  const minted: { id: string; user: string; expiresAt: string }[] = [];
  /** Requests the page sent anywhere but its server and the gateway. */
  const foreign: string[] = [];
  /** The payloads of the operations the page started on its WebSockets. */
  const subscribed: { query?: unknown; extensions?: { persistedQuery?: { sha256Hash?: unknown } } }[] = [];

  async function rest(method: string, route: string, body?: unknown) {
    const response = await fetch(`${gatewayUrl}/api/connect${route}`, {
      method,
      headers: { authorization: `Bearer ${demo.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as { data: any } };
  }

  /** A webhook as Meta sends it, signed with the channel's app secret. */
  async function webhook(change: Omit<WhatsAppChange, 'phoneNumberId'>) {
    const body = webhookBody([{ ...change, phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId }]);
    const response = await fetch(`${gatewayUrl}/webhooks/whatsapp/${demo.channelId}`, { method: 'POST', headers: signedHeaders(body, WHATSAPP_SETTINGS.appSecret), body });
    expect(response.status).toBe(200);
  }

  beforeAll(async () => {
    outDir = mkdtempSync(path.join(os.tmpdir(), 'web-inbox-'));
    const built = build({ root: 'examples/web-inbox', logLevel: 'silent', build: { outDir, emptyOutDir: true } });

    // The page's port first: its origin goes into the gateway's CORS_ORIGINS.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const inboxPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));

    fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
    app = await createTestApp({}, undefined, { providers: testProviders({ settings: { WHATSAPP_API_URL: fake.url } }) });
    demo = (await seedDemo(app.db.prisma))!;
    // Session tokens may run only the registered documents, by id.
    await app.db.prisma.workspace.update({ where: { id: demo.workspaceId }, data: { trustedDocumentsOnly: true } });
    await configureChannel(
      app.db.prisma,
      demo.channelId,
      {
        provider: 'whatsapp_cloud',
        settings: { phoneNumberId: WHATSAPP_SETTINGS.phoneNumberId },
        secrets: { accessToken: WHATSAPP_SETTINGS.accessToken, appSecret: WHATSAPP_SETTINGS.appSecret, verifyToken: WHATSAPP_SETTINGS.verifyToken },
      },
      testSealer,
    );
    // A long conversation, to scroll back through: 30 unread messages, the newest two hours ago.
    const start = Date.now() - 3 * 60 * 60 * 1000;
    for (let i = 1; i <= HISTORY; i++) {
      await receiveMessage({ prisma: app.db.prisma, logger: pino({ level: 'silent' }) }, { id: demo.channelId, workspaceId: demo.workspaceId, name: 'Demo channel' }, {
        kind: 'message',
        providerId: `history.${i}`,
        from: LINUS,
        at: new Date(start + i * 60_000),
        body: `History ${String(i).padStart(2, '0')}`,
        media: [],
      });
    }
    gateway = await serveOnPort(app.db, { ...app.env, CORS_ORIGINS: [`http://localhost:${inboxPort}`] }, { providers: app.providers, events: app.events });
    gatewayUrl = `http://localhost:${gateway.port}`;
    worker = appWorker(app);
    worker.start();

    await built;
    inbox = await startInboxServer({ gatewayUrl, apiKey: demo.apiKey, port: inboxPort, mode: 'built', staticDir: outDir, ttlSeconds: 600, onMint: (session) => minted.push(session) });

    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${inbox!.url}/`) || url.startsWith(`${gatewayUrl}/`)) return route.continue();
      foreign.push(url);
      return route.abort('blockedbyclient');
    });
    page = await context.newPage();
    page.on('websocket', (socket) =>
      socket.on('framesent', ({ payload }) => {
        const message = JSON.parse(String(payload)) as { type: string; payload?: (typeof subscribed)[number] };
        if (message.type === 'subscribe' && message.payload) subscribed.push(message.payload);
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await inbox?.close();
    await worker?.stop();
    await gateway?.close();
    await app?.close();
    await fake?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  const item = (name: string): Locator => page.getByTestId('conversation').filter({ hasText: name });
  const names = () => page.getByTestId('conversation').locator('.contact').allInnerTexts();
  const badge = (name: string) => item(name).getByTestId('unread').allInnerTexts();
  const thread = () => page.getByTestId('messages').getByTestId('message');
  const conversationOf = async (name: string) =>
    ((await rest('GET', `/conversations?search=${encodeURIComponent(name)}`)).body.data as { id: string; unreadCount: number; assignee: { email: string } | null }[])[0]!;

  it('signs the agent in and lists the conversations with unread badges, assignee, labels and last messages', async () => {
    await page.goto(inbox!.url);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByTestId('connection').getAttribute('data-state')).toBe('connected');
    await poll(names).toEqual(['Alan Turing', 'Grace Hopper', 'Ada King', LINUS.name]);
    expect(await badge('Ada King')).toEqual(['2']);
    expect(await badge('Grace Hopper')).toEqual(['1']);
    expect(await badge(LINUS.name)).toEqual([String(HISTORY)]);
    expect(await item('Ada King').getByTestId('last-message').innerText()).toBe('It was order 1042.');
    expect(await item('Alan Turing').getByTestId('last-message').innerText()).toBe('Thanks, all sorted.');
    expect(await item('Ada King').getByTestId('assignee').innerText()).toBe('→ Demo Agent');
    expect(await item('Ada King').innerText()).toContain('orders');
    expect(await item('Grace Hopper').getByTestId('assignee').innerText()).toBe('Unassigned');

    // A session for the agent that may also change conversations, usable from the page's origin only.
    expect(minted).toHaveLength(1);
    const sessions = (await rest('GET', `/sessions?user=${DEMO_USER_EMAIL}`)).body.data;
    expect(sessions).toEqual([expect.objectContaining({ id: minted[0]!.id, scopes: ['read', 'send', 'conversations'], origins: [inbox!.url] })]);
    expect(await page.content()).not.toMatch(/cst_|cak_/);
  });

  it('narrows the list with the filters: assigned to me, unassigned, label, search (unread: below)', async () => {
    await page.getByRole('button', { name: 'Assigned to me', exact: true }).click();
    await poll(names).toEqual(['Ada King']);
    await page.getByRole('button', { name: 'Unassigned', exact: true }).click();
    await poll(names).toEqual(['Alan Turing', 'Grace Hopper', LINUS.name]);
    await page.getByRole('button', { name: 'All', exact: true }).click();
    await page.getByLabel('Label').fill('Orders');
    await poll(names).toEqual(['Ada King']);
    await page.getByLabel('Label').fill('');
    await page.getByLabel('Search').fill('delivery address');
    await poll(names).toEqual(['Grace Hopper']);
    await page.getByLabel('Search').fill('');
    await poll(names).toHaveLength(4);
  });

  it('opens a thread on its newest messages, loads older ones when scrolled back, and marks it read', async () => {
    await item(LINUS.name).getByRole('button').click();
    await poll(() => thread().count()).toBe(20);
    const texts = await thread().locator('.body').allInnerTexts();
    expect(texts[0]).toBe('History 11');
    expect(texts.at(-1)).toBe('History 30');
    // Opened at the bottom, on the newest message.
    const box = page.getByTestId('messages');
    expect(await box.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight)).toBeLessThan(5);

    // Opening it marked it read: the badge went, and the gateway agrees.
    await poll(() => badge(LINUS.name)).toEqual([]);
    expect((await conversationOf(LINUS.name)).unreadCount).toBe(0);

    await box.evaluate((element) => (element.scrollTop = 0));
    await poll(() => thread().count()).toBe(HISTORY);
    expect((await thread().locator('.body').allInnerTexts())[0]).toBe('History 01');
    expect(await page.getByTestId('history').innerText()).toBe('Start of the conversation');
    // The messages the agent was reading stayed in view: the page did not jump to the top.
    expect(await box.evaluate((element) => element.scrollTop)).toBeGreaterThan(100);
  });

  it('assigns a conversation to the agent', async () => {
    await item('Grace Hopper').getByRole('button').click();
    await poll(() => thread().locator('.body').allInnerTexts()).toEqual(['Can I change the delivery address?']);
    await page.getByRole('button', { name: 'Assign to me' }).click();
    await poll(() => page.getByTestId('thread-assignee').innerText()).toBe('Assigned to Demo Agent');
    await poll(() => item('Grace Hopper').getByTestId('assignee').innerText()).toBe('→ Demo Agent');
    expect(await page.getByRole('button', { name: 'Assign to me' }).isDisabled()).toBe(true);
    expect((await conversationOf('Grace Hopper')).assignee?.email).toBe(DEMO_USER_EMAIL);
  });

  it('sends a reply as the agent, and its delivery ticks move as WhatsApp reports them', async () => {
    await page.getByLabel('Reply').fill('Of course: which address?');
    await page.getByRole('button', { name: 'Send' }).click();
    const reply = thread().filter({ hasText: 'Of course: which address?' });
    await poll(() => reply.count()).toBe(1);
    expect(await reply.getAttribute('data-sender-type')).toBe('user');
    expect(await reply.innerText()).toContain('Demo Agent');
    const id = (await reply.getAttribute('data-id'))!;
    const stored = ((await rest('GET', '/messages?limit=100')).body.data as { id: string }[]).find((message) => message.id === id);
    expect(stored).toMatchObject({ body: 'Of course: which address?', direction: 'outbound', sender: { type: 'user', name: 'Demo Agent' } });

    // The worker hands it to WhatsApp (the stand-in): sent. Then WhatsApp's status webhooks.
    await poll(() => reply.getAttribute('data-status')).toBe('sent');
    expect(fake!.sent.some((send) => send.body?.text?.body === 'Of course: which address?')).toBe(true);
    const wamid = (await app!.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: id } })).providerId;
    await webhook({ statuses: [statusUpdate(wamid, 'delivered', { recipient: GRACE_PHONE })] });
    await poll(() => reply.getAttribute('data-status')).toBe('delivered');
    expect(await reply.getByTestId('tick').innerText()).toBe('✓✓');
    await webhook({ statuses: [statusUpdate(wamid, 'read', { recipient: GRACE_PHONE })] });
    await poll(() => reply.getAttribute('data-status')).toBe('read');
  });

  it('shows an inbound reply as it arrives, in the thread and the list, and Mark read clears its badge', async () => {
    await webhook({ contacts: [{ waId: GRACE_PHONE.slice(1), name: 'Grace Hopper' }], messages: [textMessage(GRACE_PHONE, 'To 1 Harbour Street, please')] });
    await poll(() => thread().locator('.body').allInnerTexts()).toContain('To 1 Harbour Street, please');
    await poll(() => item('Grace Hopper').getByTestId('last-message').innerText()).toBe('To 1 Harbour Street, please');
    await poll(() => badge('Grace Hopper')).toEqual(['1']);
    // The newest activity first.
    expect((await names())[0]).toBe('Grace Hopper');

    await page.getByRole('button', { name: 'Mark read' }).click();
    await poll(() => badge('Grace Hopper')).toEqual([]);
    expect((await conversationOf('Grace Hopper')).unreadCount).toBe(0);
    expect(await page.getByRole('button', { name: 'Mark read' }).isDisabled()).toBe(true);

    // What is left to read.
    await page.getByRole('button', { name: 'Unread', exact: true }).click();
    await poll(names).toEqual(['Alan Turing', 'Ada King']);
    expect(foreign).toEqual([]);
  });

  it('ran every operation on the socket by its registered id, with no text (the workspace runs only registered documents)', async () => {
    const registered = Object.keys(JSON.parse(readFileSync('examples/web-inbox/src/gql/persisted-documents.json', 'utf8')) as Record<string, string>);
    const ids = new Set(subscribed.map((operation) => `sha256:${String(operation.extensions?.persistedQuery?.sha256Hash)}`));
    // The list, a thread, its older pages, the three mutations and the three subscriptions.
    expect([...ids].sort()).toEqual([...registered].sort());
    expect(subscribed.filter((operation) => operation.query !== '')).toEqual([]);
  });
});
