import { inject } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createTestApp, type TestApp } from './app.js';
import { workspaceWithChannel } from './factories.js';
import { TcpProxy } from './tcp-proxy.js';

/** A TCP proxy in front of the run's PostgreSQL database, and the database's URL through it. */
export async function databaseThroughProxy(): Promise<{ proxy: TcpProxy; url: string }> {
  const direct = new URL(inject('databaseUrl'));
  const proxy = await new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) }).start();
  const viaProxy = new URL(direct);
  viaProxy.port = String(proxy.port);
  return { proxy, url: viaProxy.toString() };
}

/**
 * The app on the run's PostgreSQL database reached through a TCP proxy, so a test
 * can cut the database away and bring it back; with a workspace and channel key.
 */
export async function appThroughProxy() {
  const { proxy, url } = await databaseThroughProxy();
  const app: TestApp = await createTestApp({}, await openDatabase({ databaseUrl: url, poolSize: 4 }));
  const ws = await workspaceWithChannel(app.db.prisma);
  return {
    proxy,
    app,
    ws,
    async close() {
      await proxy.restore();
      await app.close();
      await proxy.stop();
    },
  };
}
