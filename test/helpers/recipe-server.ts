import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from './app.js';
import { runAdminOn } from './admin.js';
import { serveOnPort, type ServedApp } from './real-port.js';
import { sessionSetup } from './sessions.js';

export interface RecipeServer {
  app: TestApp;
  served: ServedApp;
  /** A browser session of the workspace, with its backend's client. */
  s: Awaited<ReturnType<typeof sessionSetup>>;
  /** The recipe's registered documents, by id. */
  manifest: Record<string, string>;
}

/**
 * For a client recipe's test file: a live server on a real port whose workspace runs only
 * registered documents for sessions, and a session of it. The recipe's manifest (`manifestUrl`, the
 * documents its compiler wrote) is posted as a deploy step posts it. Made before the file's tests,
 * closed after them; the fields are set once the tests run.
 */
export function recipeServer(manifestUrl: URL): RecipeServer {
  const live = { manifest: JSON.parse(readFileSync(manifestUrl, 'utf8')) as Record<string, string> } as RecipeServer;
  beforeAll(async () => {
    // fetch sends the URL's host: the workspace is named by X-Forwarded-Host, which the server trusts here.
    live.app = await createTestApp({ TRUST_PROXY: '1' });
    live.served = await serveOnPort(live.app.db, live.app.env, { providers: live.app.providers, events: live.app.events });
    live.s = await sessionSetup(live.app);
    const registered = await live.s.api.post('/graphql/documents', live.manifest);
    expect(registered.body).toEqual({ data: { stored: Object.keys(live.manifest).length } });
    expect((await runAdminOn(live.app.db, ['workspace:configure', '--hostname', live.s.host, '--trusted-documents-only', 'on'])).code).toBe(0);
  });
  afterAll(async () => {
    await live.served?.close();
    await live.app?.close();
  });
  return live;
}
