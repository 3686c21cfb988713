import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend, registerDocuments } from '../../examples/browser-session/server.js';
import { browserSuite } from '../helpers/browser.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { seedDemo } from '../../src/modules/demo/demo.seed.js';

// The browser session example as its README runs it: the gateway on a real port with the demo
// workspace `npm start` creates (origin http://localhost:G), the example's backend on another
// origin (http://localhost:B, listed in CORS_ORIGINS), and the page built by Vite, in chromium.

const suite = browserSuite('the browser session example in a real browser');

/** Waits for what the page shows; generous, since the machine may be busy. */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000 });
const AGENT = 'agent@demo.localhost';

describe.skipIf(suite.skip)(suite.title, () => {
  let app: TestApp | undefined;
  let gateway: ServedApp | undefined;
  let backendServer: http.Server | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let outDir: string;
  let gatewayUrl: string;
  let pageOrigin: string;
  let apiKey: string;
  /** The sessions the backend minted, in order. */
  const minted: { id: string; user: string; expiresAt: string }[] = [];
  /** Requests the page sent anywhere but its backend and the gateway. */
  const foreign: string[] = [];

  /** A call to the gateway's REST API with the backend's credential. */
  async function rest(method: string, route: string, body?: unknown) {
    const response = await fetch(`${gatewayUrl}/api/connect${route}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: response.status === 204 ? null : ((await response.json()) as { data: Record<string, any> }) };
  }

  // Starting the gateway, building the page and launching chromium take a few seconds each.
  beforeAll(async () => {
    outDir = mkdtempSync(path.join(os.tmpdir(), 'browser-session-'));
    const built = build({ root: 'examples/browser-session', logLevel: 'silent', build: { outDir, emptyOutDir: true } });

    // The backend listens first: its origin goes into the gateway's CORS_ORIGINS.
    backendServer = http.createServer();
    await new Promise<void>((resolve) => backendServer!.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://localhost:${(backendServer.address() as AddressInfo).port}`;

    app = await createTestApp();
    const demo = await seedDemo(app.db.prisma);
    apiKey = demo!.apiKey;
    gateway = await serveOnPort(app.db, { ...app.env, CORS_ORIGINS: [pageOrigin] }, { providers: app.providers, events: app.events });
    gatewayUrl = `http://localhost:${gateway.port}`;

    await built;
    // The deploy step: the page's documents, by id.
    expect(await registerDocuments({ gatewayUrl, apiKey })).toBeGreaterThan(0);
    backendServer.on('request', createBackend({ gatewayUrl, apiKey, staticDir: outDir, ttlSeconds: 300, onMint: (session) => minted.push(session) }));

    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      // localhost is the demo workspace's hostname; both servers listen on 127.0.0.1.
      args: ['--no-sandbox', '--host-resolver-rules=MAP localhost 127.0.0.1'],
    });
    context = await browser.newContext();
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${pageOrigin}/`) || url.startsWith(`${gatewayUrl}/`)) return route.continue();
      foreign.push(url);
      return route.abort('blockedbyclient');
    });
    page = await context.newPage();
    // The page's timers run on a clock the test can move, to reach the refresh without waiting for it.
    await page.clock.install();

    // A conversation for the lists, sent by the channel before the agent signs in.
    expect((await rest('POST', '/messages', { to: { name: 'Ada Lovelace', email: 'ada@example.com' }, message: 'Your order has shipped' })).status).toBe(202);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    backendServer?.closeAllConnections();
    await new Promise((resolve) => (backendServer ? backendServer.close(resolve) : resolve(undefined)));
    await gateway?.close();
    await app?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  const messageTexts = () => page.getByTestId('messages').getByTestId('message').allInnerTexts();
  const liveTexts = () => page.getByTestId('live').getByTestId('live-message').allInnerTexts();

  it('signs the agent in through the backend and lists the conversations and contacts over the WebSocket', async () => {
    await page.goto(pageOrigin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByTestId('connection').getAttribute('data-state')).toBe('connected');
    await poll(() => page.locator('#app').getAttribute('data-ready')).toBe('true');
    expect(await page.getByTestId('connection').getAttribute('data-connections')).toBe('1');
    expect(await page.getByTestId('agent').innerText()).toBe(`Demo Agent <${AGENT}>`);
    expect(await page.getByTestId('conversations').innerText()).toContain('Ada Lovelace (open)');
    expect(await page.getByTestId('contacts').innerText()).toContain('Ada Lovelace ada@example.com');

    // One session, for the agent, usable from the page's origin only, and the token never in the page's markup.
    expect(minted).toHaveLength(1);
    const listed = await rest('GET', `/sessions?user=${AGENT}`);
    expect(listed.body!.data).toEqual([expect.objectContaining({ id: minted[0]!.id, scopes: ['read', 'send'], origins: [pageOrigin] })]);
    expect(await page.content()).not.toMatch(/cst_|cak_/);
  });

  it('sends a reply as the agent: the gateway records the agent as its sender', async () => {
    await page.getByRole('button', { name: 'Ada Lovelace (open)' }).click();
    await poll(messageTexts).toEqual([expect.stringContaining('Your order has shipped')]);
    await page.getByPlaceholder('Write a reply…').fill('Thanks for waiting, Ada');
    await page.getByRole('button', { name: 'Send' }).click();

    // The page shows its own message as it arrives on the subscription.
    await poll(messageTexts).toEqual([expect.stringContaining('Your order has shipped'), expect.stringContaining('Thanks for waiting, Ada')]);
    const shown = page.getByTestId('messages').getByTestId('message').last();
    expect(await shown.getAttribute('data-sender-type')).toBe('user');
    expect(await shown.innerText()).toContain('Demo Agent');

    const id = await shown.getAttribute('data-id');
    const stored = ((await rest('GET', '/messages?limit=100')).body!.data as { id: string }[]).find((message) => message.id === id);
    expect(stored).toMatchObject({ body: 'Thanks for waiting, Ada', direction: 'outbound', sender: { type: 'user', name: 'Demo Agent' } });
    expect(await page.getByTestId('send-error').innerText()).toBe('');
  });

  it('shows a message sent elsewhere as it arrives', async () => {
    const sent = await rest('POST', '/messages', { to: { email: 'ada@example.com' }, message: 'A note from the warehouse' });
    expect(sent.status).toBe(202);
    await poll(liveTexts).toContain('Demo channel → Ada Lovelace: A note from the warehouse');
    await poll(messageTexts).toContainEqual(expect.stringContaining('A note from the warehouse'));
  });

  it('refreshes the session before it expires and keeps the stream on the new token', async () => {
    // The 5-minute session is refreshed a minute before it expires.
    expect(await page.getByTestId('expiry').getAttribute('data-refreshes')).toBe('0');
    await page.clock.fastForward('04:01');
    await poll(() => page.getByTestId('expiry').getAttribute('data-refreshes')).toBe('1');
    expect(minted).toHaveLength(2);
    // A second socket, opened with the new token (connection_init), replaced the first.
    await poll(() => page.getByTestId('connection').getAttribute('data-connections')).toBe('2');
    expect(await page.getByTestId('connection').getAttribute('data-state')).toBe('connected');

    // The first session is no longer in use: revoking it leaves the page's new socket alone.
    expect((await rest('DELETE', `/sessions/${minted[0]!.id}`)).status).toBe(204);
    // A message after the reconnection arrives over the socket the new token opened (the client
    // resubscribes once the socket is acknowledged; the gateway listens a moment after that).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await rest('POST', '/messages', { to: { email: 'ada@example.com' }, message: 'After the refresh' })).status).toBe(202);
    await poll(liveTexts).toContain('Demo channel → Ada Lovelace: After the refresh');
    expect(await page.getByTestId('connection').getAttribute('data-state')).toBe('connected');
  });

  it('shows that the session was revoked: the stream ends and nothing more arrives', async () => {
    const revoked = await rest('DELETE', `/sessions?user=${AGENT}`);
    expect(revoked.body!.data).toEqual({ revoked: 1 });
    await poll(() => page.getByTestId('connection').getAttribute('data-state')).toBe('revoked');
    expect(await page.getByTestId('ended').innerText()).toContain('Session revoked: The gateway ended this session.');
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);

    expect((await rest('POST', '/messages', { to: { email: 'ada@example.com' }, message: 'After the revocation' })).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await liveTexts()).not.toContain('Demo channel → Ada Lovelace: After the revocation');
    // No silent reconnection with the revoked token.
    expect(await page.getByTestId('connection').getAttribute('data-state')).toBe('revoked');
    expect(minted).toHaveLength(2);
    expect(foreign).toEqual([]);
  });
});
