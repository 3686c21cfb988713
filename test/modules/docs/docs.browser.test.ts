import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { browserSuite, demoInBrowser, type DemoInBrowser } from '../../helpers/browser.js';

// Where screenshots go when set, to look at what the browser saw.
const SCREENSHOTS = process.env.DOCS_SCREENSHOTS;

const suite = browserSuite('the /docs reference page in a real browser');

describe.skipIf(suite.skip)(suite.title, () => {
  let demo: DemoInBrowser;
  let origin: string;
  let apiKey: string;
  /** Operations in the OpenAPI document the server serves: every one is rendered. */
  let operations: number;
  let context: BrowserContext;
  let page: Page;
  /** Requests the page tried to send anywhere but the local server. */
  let foreign: string[];
  /** Console errors, uncaught exceptions and content-security-policy violations. */
  let errors: string[];

  beforeAll(async () => {
    // Unlike GraphiQL, the reference page stays on in production.
    demo = await demoInBrowser('production');
    ({ origin, apiKey } = demo);
    const document = (await (await fetch(`${origin}/api/connect/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
    operations = Object.values(document.paths).flatMap((item) => Object.keys(item).filter((key) => methods.has(key))).length;
    expect(operations, "the spec's 14 operations at least").toBeGreaterThanOrEqual(14);
  });

  afterAll(() => demo?.close());

  beforeEach(async () => {
    errors = [];
    ({ context, page, foreign } = await demo.openPage());
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
    // Reported by the browser as a console error too; listened to as well so that the message is explicit.
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
    });
  });

  afterEach(async (test) => {
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/${test.task.name.replace(/\W+/g, '-')}.png`, fullPage: true });
    await context.close();
    expect(foreign, 'the page loads nothing from outside the server').toEqual([]);
    expect(errors, 'the page logs no error').toEqual([]);
  });

  /** The block Swagger UI renders for one operation (ids are `operations-<tag>-<operationId>`). */
  const operation = (tag: string, operationId: string) => page.locator(`#operations-${tag}-${operationId}`);

  it('renders every operation of the OpenAPI document, and one expands to its parameters and responses', { timeout: 60_000 }, async () => {
    await page.goto(`${origin}/docs`);
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 15_000 }).toBe(operations);
    expect(await page.locator('.information-container .title').innerText()).toContain('Connect API');

    const update = operation('Contacts', 'updateContact');
    expect(await update.locator('.opblock-summary-method').innerText()).toBe('PATCH');
    expect(await update.locator('.opblock-summary-path').innerText()).toBe('/api/connect/contacts/{contact}');
    expect(await update.locator('.opblock-summary-description').innerText()).toBe('Update a contact');
    const send = operation('Messages', 'sendMessage');
    expect(await send.locator('.opblock-summary-path').innerText()).toBe('/api/connect/messages');
    expect(await send.locator('.opblock-summary-description').innerText()).toBe('Send a message');

    await update.locator('.opblock-summary-control').click();
    const body = update.locator('.opblock-body');
    await expect.poll(() => body.isVisible(), { timeout: 5_000 }).toBe(true);
    // The body is shown before its content is rendered into it.
    await expect.poll(() => body.innerText(), { timeout: 5_000 }).toContain('Request body');
    expect(await body.innerText()).toContain('contact');
    for (const status of ['200', '404', '422']) expect(await body.locator(`.responses-table tr[data-code="${status}"]`).count(), status).toBe(1);
    // Deep links name the operation, so that an expanded operation can be shared.
    expect(new URL(page.url()).hash).toBe('#/Contacts/updateContact');
  });

  it('opens from /docs/ and from a deep link to an operation', { timeout: 60_000 }, async () => {
    await page.goto(`${origin}/docs/#/Messages/sendMessage`);
    const send = operation('Messages', 'sendMessage');
    await expect.poll(() => send.locator('.opblock-body').isVisible(), { timeout: 15_000 }).toBe(true);
    // The body is shown before its content is rendered into it.
    await expect.poll(() => send.locator('.opblock-body').innerText(), { timeout: 5_000 }).toContain('Idempotency-Key');
  });

  it('sends a request with a key entered in Authorize, and keeps the key nowhere in the browser', { timeout: 60_000 }, async () => {
    await page.goto(`${origin}/docs`);
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 15_000 }).toBe(operations);
    expect((await page.content()).includes(apiKey), 'the page carries no key').toBe(false);

    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.modal-ux input[type="text"], .modal-ux input[type="password"]').first().fill(apiKey);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .btn-done').click();

    const channels = operation('Channels', 'listChannels');
    await channels.locator('.opblock-summary-control').click();
    await channels.locator('.try-out__btn').click();
    await channels.locator('.execute').click();
    const live = channels.locator('.live-responses-table .response');
    await expect.poll(() => live.locator('.response-col_status').first().innerText(), { timeout: 15_000 }).toBe('200');
    expect(await live.locator('.response-col_description').first().innerText()).toContain('Demo channel');

    // Nothing written to the browser's storage holds the key, and a reload forgets it.
    const stored = () => page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie }));
    expect(await stored()).not.toContain(apiKey);
    await page.reload();
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 15_000 }).toBe(operations);
    expect(await stored()).not.toContain(apiKey);
    await page.locator('.auth-wrapper .authorize').click();
    expect(await page.locator('.modal-ux').innerText()).not.toContain('Authorized');
    await page.locator('.modal-ux .btn-done, .modal-ux .close-modal').first().click();
  });
});
