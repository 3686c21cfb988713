import { afterAll, beforeAll } from 'vitest';
import { createTestApp, type TestApp } from './app.js';
import { serveOnPort, type ServedApp } from './real-port.js';

export interface ServedAppPerFile {
  app: TestApp;
  /** The same app's database and bus, served on a real port. */
  served: ServedApp;
}

/**
 * For a test file that talks to a real port: a test app (with `env` over the tests' settings) and
 * the same app served on a port, made before the file's tests (set once they run) and closed after them.
 */
export function servedAppPerFile(env: Record<string, string> = {}): ServedAppPerFile {
  const made = {} as ServedAppPerFile;
  beforeAll(async () => {
    made.app = await createTestApp(env);
    made.served = await serveOnPort(made.app.db, made.app.env, { providers: made.app.providers, events: made.app.events });
  });
  afterAll(async () => {
    await made.served?.close();
    await made.app?.close();
  });
  return made;
}
