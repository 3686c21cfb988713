import { readFileSync } from 'node:fs';
import { beforeAll, expect } from 'vitest';
import type { TestApp } from './app.js';
import { runAdminOn } from './admin.js';
import type { ServedApp } from './real-port.js';
import { servedAppPerFile } from './served-app.js';
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
  // fetch sends the URL's host: the workspace is named by X-Forwarded-Host, which the server trusts here.
  const port = servedAppPerFile({ TRUST_PROXY: '1' });
  const live = {
    manifest: JSON.parse(readFileSync(manifestUrl, 'utf8')) as Record<string, string>,
    get app() {
      return port.app;
    },
    get served() {
      return port.served;
    },
  } as RecipeServer;
  beforeAll(async () => {
    live.s = await sessionSetup(live.app);
    const registered = await live.s.api.post('/graphql/documents', live.manifest);
    expect(registered.body).toEqual({ data: { stored: Object.keys(live.manifest).length } });
    expect((await runAdminOn(live.app.db, ['workspace:configure', '--hostname', live.s.host, '--trusted-documents-only', 'on'])).code).toBe(0);
  });
  return live;
}
