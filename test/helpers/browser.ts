import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { seedDemo } from '../../src/modules/demo/demo.seed.js';
import { loadEnv } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { onPostgres, openTestDatabase } from './app.js';

// Debian's chromium, driven by playwright-core: nothing is downloaded for these tests.
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const inCI = Boolean(process.env.CI);

/**
 * Whether to skip a browser suite, and its title. A page is the same whatever the database: one
 * project is enough. Without chromium the suite is skipped on a workstation, but CI must run it
 * (.ci/run installs chromium).
 */
export function browserSuite(name: string): { skip: boolean; title: string } {
  return {
    skip: onPostgres || (!hasChromium && !inCI),
    title: hasChromium || inCI ? name : `${name} (skipped: ${CHROMIUM} is missing; apt-get install chromium)`,
  };
}

export interface DemoInBrowser {
  /** `http://localhost:<port>`: the demo workspace's hostname, pinned to the server's address. */
  origin: string;
  /** The demo channel's key, as the first start's banner prints it. */
  apiKey: string;
  browser: Browser;
  /** A fresh browser context and page; every request it sends anywhere but the server is aborted and recorded. */
  openPage(): Promise<{ context: BrowserContext; page: Page; foreign: string[] }>;
  close(): Promise<void>;
}

/** The app on a first-started demo workspace, on a real port, and chromium to look at it. */
export async function demoInBrowser(nodeEnv: 'development' | 'production'): Promise<DemoInBrowser> {
  if (!hasChromium) throw new Error(`${CHROMIUM} is missing: CI must install chromium (apt-get install -y chromium)`);
  const db: Database = await openTestDatabase();
  const demo = await seedDemo(db.prisma);
  if (!demo || !('apiKey' in demo)) throw new Error('the demo workspace existed already');
  const env = loadEnv({ NODE_ENV: nodeEnv, LOG_LEVEL: 'silent' });
  const yoga = createApp({ db, env, logger: createLogger(env) });
  const server = http.createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // localhost is the demo workspace's hostname and a secure context; pin it to the server's address.
    args: ['--no-sandbox', '--host-resolver-rules=MAP localhost 127.0.0.1'],
  });
  return {
    origin,
    apiKey: demo.apiKey,
    browser,
    async openPage() {
      const foreign: string[] = [];
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`)) return route.continue();
        foreign.push(url);
        return route.abort('blockedbyclient');
      });
      return { context, page: await context.newPage(), foreign };
    },
    async close() {
      await browser.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await yoga.dispose();
      await db.close();
    },
  };
}
