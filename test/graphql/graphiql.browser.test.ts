import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { browserSuite, demoInBrowser, type DemoInBrowser } from '../helpers/browser.js';

// Where screenshots go when set, to look at what the browser saw.
const SCREENSHOTS = process.env.GRAPHIQL_SCREENSHOTS;

const suite = browserSuite('GraphiQL in a real browser');

describe.skipIf(suite.skip)(suite.title, () => {
  let demo: DemoInBrowser;
  let origin: string;
  let apiKey: string;
  let context: BrowserContext;
  let page: Page;
  /** Requests the page tried to send anywhere but the local server. */
  let foreign: string[];

  beforeAll(async () => {
    // The first start of an empty embedded database: the demo workspace on hostname localhost.
    demo = await demoInBrowser('development');
    ({ origin, apiKey } = demo);
  });

  afterAll(() => demo?.close());

  beforeEach(async () => {
    ({ context, page, foreign } = await demo.openPage());
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
    // The keys go to the editor only once it has the focus (on a busy machine, a moment after the click).
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('.graphiql-editor-tool') != null), { timeout: 5_000 }).toBe(true);
    // What a person does: put the cursor after "Bearer " (line 2, before the closing quote) and paste.
    await page.keyboard.press('ControlOrMeta+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.insertText(apiKey);
    await expect.poll(() => editorText('.graphiql-editor-tool'), { timeout: 5_000 }).toContain(`"Authorization": "Bearer ${apiKey}"`);

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
