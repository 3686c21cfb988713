import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import type { Database } from '../src/db/database.js';
import { seedDemo } from '../src/db/seed.js';
import { loadEnv } from '../src/env.js';
import { createLogger } from '../src/logger.js';
import { onPostgres, openTestDatabase } from './helpers/app.js';

// Debian's chromium, driven by playwright-core: nothing is downloaded for this test.
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const inCI = Boolean(process.env.CI);
// Where screenshots go when set, to look at what the browser saw.
const SCREENSHOTS = process.env.GRAPHIQL_SCREENSHOTS;

// The page is the same whatever the database: one project is enough. Without chromium
// the suite is skipped on a workstation, but CI must run it (.ci/run installs chromium).
const title = hasChromium || inCI ? 'GraphiQL in a real browser' : `GraphiQL in a real browser (skipped: ${CHROMIUM} is missing; apt-get install chromium)`;

describe.skipIf(onPostgres || (!hasChromium && !inCI))(title, () => {
  let db: Database;
  let server: http.Server;
  let dispose: () => Promise<void>;
  let origin: string;
  let apiKey: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Requests the page tried to send anywhere but the local server. */
  let foreign: string[];

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`${CHROMIUM} is missing: CI must install chromium (apt-get install -y chromium)`);
    db = await openTestDatabase();
    // The first start of an empty embedded database: the demo workspace on hostname localhost.
    const demo = await seedDemo(db.prisma);
    if (!demo || !('apiKey' in demo)) throw new Error('the demo workspace existed already');
    apiKey = demo.apiKey;
    const env = loadEnv({ NODE_ENV: 'development', LOG_LEVEL: 'silent' });
    const yoga = createApp({ db, env, logger: createLogger(env) });
    dispose = async () => {
      await yoga.dispose();
    };
    server = http.createServer(yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://localhost:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // localhost is the demo workspace's hostname and a secure context; pin it to the server's address.
      args: ['--no-sandbox', '--host-resolver-rules=MAP localhost 127.0.0.1'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await dispose?.();
    await db?.close();
  });

  beforeEach(async () => {
    foreign = [];
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`)) return route.continue();
      foreign.push(url);
      return route.abort('blockedbyclient');
    });
    page = await context.newPage();
  });

  afterEach(async (test) => {
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/${test.task.name.replace(/\W+/g, '-')}.png` });
    await context.close();
    expect(foreign, 'the page loads nothing from outside the server').toEqual([]);
  });

  /** The visible text of one of GraphiQL's editors (Monaco renders spaces as no-break spaces). */
  async function editorText(selector: string): Promise<string> {
    return (await page.locator(`${selector} .view-lines`).filter({ visible: true }).first().innerText()).replace(/\u00a0/g, ' ');
  }

  it('opens on the example operation, and Run executes it with a key pasted into the Headers tab', { timeout: 120_000 }, async () => {
    await page.goto(`${origin}/graphql`);
    await expect.poll(() => editorText('.graphiql-query-editor'), { timeout: 15_000 }).toContain('query Example {');
    expect(await editorText('.graphiql-query-editor')).toContain('viewer {');

    await page.getByRole('button', { name: 'Headers', exact: true }).click();
    await expect.poll(() => editorText('.graphiql-editor-tool'), { timeout: 5_000 }).toContain('"Authorization": "Bearer "');
    expect(await page.content()).not.toContain('cak_');

    await page.locator('.graphiql-editor-tool .view-lines').filter({ visible: true }).click();
    // What a person does: put the cursor after "Bearer " (line 2, before the closing quote) and paste.
    await page.keyboard.press('ControlOrMeta+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.insertText(apiKey);
    expect(await editorText('.graphiql-editor-tool')).toContain(`"Authorization": "Bearer ${apiKey}"`);

    await page.getByRole('button', { name: /execute query/i }).click();
    await expect.poll(() => editorText('.graphiql-response'), { timeout: 15_000 }).toContain('"Demo workspace"');
    const result = await editorText('.graphiql-response');
    expect(result).toContain('"viewer"');
    expect(result).not.toContain('"errors"');

    // Introspection needs the key as well: with it pasted, re-fetching the schema fills the docs.
    await page.getByRole('button', { name: /re-fetch graphql schema/i }).click();
    await page.getByRole('button', { name: /show documentation explorer/i }).click();
    await expect.poll(() => page.locator('.graphiql-doc-explorer').innerText(), { timeout: 10_000 }).toContain('ContactConnection');

    // The key is not kept in the browser's storage (GraphiQL writes it there after a short
    // debounce, hence the wait): after a reload the example is back with an empty placeholder.
    await page.waitForTimeout(1_000);
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain('cak_');
    await page.reload();
    await expect.poll(() => editorText('.graphiql-query-editor'), { timeout: 15_000 }).toContain('query Example {');
    await expect.poll(() => editorText('.graphiql-editor-tool'), { timeout: 5_000 }).toContain('"Authorization": "Bearer "');
    expect(await page.locator('.graphiql-tab').count()).toBe(1);
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain('cak_');
  });
});
