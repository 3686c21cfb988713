import { spawn, type ChildProcess } from 'node:child_process';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite } from '../helpers/browser.js';

// `npm run demo:inbox` as a newcomer runs it: one command, the address it prints, a reply sent from
// the page whose ticks move as the WhatsApp stand-in reports it, the contact's answer arriving, and
// Ctrl-C stopping everything.

const suite = browserSuite('npm run demo:inbox in a real browser');
const poll = <T>(read: () => Promise<T>, timeout = 15_000) => expect.poll(read, { timeout });

describe.skipIf(suite.skip)(suite.title, () => {
  let child: ChildProcess | undefined;
  let output = '';
  let browser: Browser | undefined;
  let page: Page;
  let url: string;

  beforeAll(async () => {
    // What `npm run demo:inbox` runs, without npm between the test and the process it stops; any free ports.
    child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo-inbox.ts'], { env: { ...process.env, PORT: '0', INBOX_PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    for (const deadline = Date.now() + 90_000; !output.includes('Ctrl-C stops the demo') && child.exitCode === null && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
    url = /Open (http:\/\/localhost:\d+) and sign in/.exec(output)?.[1] ?? '';
    expect(url, output).not.toBe('');
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
  });

  it('prints the address of an inbox with the demo conversations; a reply there gets its ticks and an answer', async () => {
    await page.goto(url);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const grace = page.getByTestId('conversation').filter({ hasText: 'Grace Hopper' });
    await poll(() => grace.getByTestId('unread').allInnerTexts(), 30_000).toEqual(['1']);
    await grace.getByRole('button').click();
    await page.getByLabel('Reply').fill('Sure, which address?');
    await page.getByRole('button', { name: 'Send' }).click();
    const reply = page.getByTestId('message').filter({ hasText: 'Sure, which address?' });
    await poll(() => reply.getAttribute('data-status')).toBe('read');
    await poll(() => page.getByTestId('message').filter({ hasText: 'came back through a signed WhatsApp webhook' }).count()).toBe(1);
    await poll(() => grace.getByTestId('last-message').innerText()).toContain('Thanks!');
  });

  it('stops everything on Ctrl-C', async () => {
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child!.kill('SIGINT');
    expect(await exited, output).toBe(0);
  }, 20_000);
});
