import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { createTestApp, onPostgres, type TestApp } from './helpers/app.js';
import { bearer, workspaceWithChannel } from './helpers/factories.js';
import { TcpProxy } from './helpers/tcp-proxy.js';

// The embedded database lives in the process and cannot become unreachable.
describe.runIf(onPostgres)('while PostgreSQL is unreachable', () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let ws: Awaited<ReturnType<typeof workspaceWithChannel>>;

  beforeAll(async () => {
    const direct = new URL(inject('databaseUrl'));
    proxy = await new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) }).start();
    const viaProxy = new URL(direct);
    viaProxy.port = String(proxy.port);
    app = await createTestApp({}, await openDatabase({ databaseUrl: viaProxy.toString(), poolSize: 4 }));
    ws = await workspaceWithChannel(app.db.prisma);
  });
  afterAll(async () => {
    await proxy.restore();
    await app.close();
    await proxy.stop();
  });

  const rest = (path: string) => app.fetch(ws.host, `/api/connect${path}`, { headers: bearer(ws.apiKey) });
  const graphql = () =>
    app.fetch(ws.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(ws.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { workspace { id } } }' }),
    });

  async function timed(request: () => Promise<Response>) {
    const started = Date.now();
    const response = await request();
    return { response, ms: Date.now() - started, body: await response.json() };
  }

  async function expectUnavailable() {
    for (const [label, request] of [
      ['GET /contacts', () => rest('/contacts')],
      ['POST /messages', () => app.fetch(ws.host, '/api/connect/messages', { method: 'POST', headers: { ...bearer(ws.apiKey), 'content-type': 'application/json' }, body: '{"to":{"phone":"+31612345678"},"message":"hi"}' })],
      ['/readyz', () => app.fetch(ws.host, '/readyz')],
    ] as const) {
      const { response, ms, body } = await timed(request);
      expect(response.status, label).toBe(503);
      expect(ms, label).toBeLessThan(2000);
      expect(body, label).toEqual({ status: 'error', message: 'Service unavailable' });
    }
    const { response, ms, body } = await timed(graphql);
    expect(response.status).toBe(503);
    expect(ms).toBeLessThan(2000);
    expect(body.errors[0]).toMatchObject({ message: 'Service unavailable', extensions: { code: 'SERVICE_UNAVAILABLE' } });
  }

  async function expectResumed() {
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline && (status = (await rest('/channels')).status) !== 200) await new Promise((r) => setTimeout(r, 100));
    expect(status).toBe(200);
    expect((await app.fetch(ws.host, '/readyz')).status).toBe(200);
    expect((await graphql()).status).toBe(200);
  }

  it('serves normally through the proxy', async () => {
    expect((await rest('/channels')).status).toBe(200);
  });

  it('answers 503 within 2 s when the server refuses connections, and resumes by itself', async () => {
    await proxy.refuse();
    await expectUnavailable();
    await proxy.restore();
    await expectResumed();
  });

  it('answers 503 within 2 s when the network goes silent, and resumes by itself', async () => {
    proxy.silence();
    await expectUnavailable();
    await proxy.restore();
    await expectResumed();
  });
});
