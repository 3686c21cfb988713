import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { PROBE_APPLICATION_NAME, openDatabase, type Database } from '../../src/db/database.js';
import { PROBE_INTERVAL_MS, PROBE_TIMEOUT_MS } from '../../src/db/health.js';
import { loadEnv } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { onPostgres, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { appThroughProxy, databaseThroughProxy } from '../helpers/proxied-app.js';
import { createTestApp } from '../helpers/app.js';
import { whatsappWorkspace } from '../helpers/whatsapp-fake.js';
import { testProviders } from '../helpers/worker.js';
import { receiveMessage } from '../../src/modules/inbound/inbound.service.js';

// The embedded database lives in the process and cannot become unreachable.
describe.runIf(onPostgres)('while PostgreSQL is unreachable', () => {
  let setup: Awaited<ReturnType<typeof appThroughProxy>>;
  let proxy: TcpProxy;
  let app: TestApp;
  let ws: Awaited<ReturnType<typeof workspaceWithChannel>>;

  beforeAll(async () => {
    setup = await appThroughProxy();
    ({ proxy, app, ws } = setup);
  });
  afterAll(() => setup.close());

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

describe.runIf(onPostgres)('an outage in the log', () => {
  it('is logged once when the database goes away and once when it returns', async () => {
    const { proxy, url: viaProxy } = await databaseThroughProxy();
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    // The logger the server builds, as openDatabase receives it in src/main.ts.
    const logger = createLogger(loadEnv({ NODE_ENV: 'test' }), sink);
    const db = await openDatabase({ databaseUrl: viaProxy, poolSize: 2, logger, connectTimeoutS: 5 });
    const messages = () => lines.map((l) => l.msg);
    const until = async (predicate: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(predicate(), messages().join(' | ')).toBe(true);
    };
    try {
      const unavailable = 'database unavailable: answering 503 until it returns';
      await proxy.refuse();
      await until(() => messages().includes(unavailable));
      // Several more failed probes change nothing in the log.
      await new Promise((r) => setTimeout(r, PROBE_INTERVAL_MS * 4));
      await proxy.restore();
      await until(() => messages().includes('database available again'));
      await new Promise((r) => setTimeout(r, PROBE_INTERVAL_MS * 3));
      expect(messages()).toEqual([unavailable, 'database available again']);
      expect(lines.map((l) => l.level)).toEqual([50, 30]);
    } finally {
      await db.close();
      await proxy.stop();
    }
  });
});

describe.runIf(onPostgres)('while every pooled connection is busy', () => {
  it('the database is not taken for unreachable', async () => {
    const db = await openDatabase({ databaseUrl: inject('databaseUrl'), poolSize: 1 });
    try {
      // The only pooled connection is held for several probe timeouts; requests would queue for it.
      const held = db.withSession((session) => session.query('SELECT pg_sleep(2.5)'));
      const queued = db.prisma.$queryRawUnsafe('SELECT 1');
      await new Promise((r) => setTimeout(r, 2000));
      expect(db.health.isDown).toBe(false);
      expect(await db.health.check()).toBe(true);
      await Promise.all([held, queued]);
    } finally {
      await db.close();
    }
  });
});

// A backend stopped by a signal stands for one starved of CPU: it holds its connection and answers nothing.
describe.runIf(onPostgres)('while the probe waits on a stalled backend', () => {
  /** The server processes of the probe's connections to the test database. */
  const probeBackends = async (db: Database) =>
    (await db.prisma.$queryRaw<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = ${PROBE_APPLICATION_NAME} AND datname = current_database()`).map((row) => row.pid);

  it('the database is not taken for unreachable as long as it answers statements, and the probe reconnects', async () => {
    const db = await openDatabase({ databaseUrl: inject('databaseUrl'), poolSize: 2 });
    let stalled: number | undefined;
    try {
      let deadline = Date.now() + 5000;
      while (!(await probeBackends(db)).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      [stalled] = await probeBackends(db);
      expect(stalled).toBeDefined();
      process.kill(stalled!, 'SIGSTOP');

      // Statements keep being answered for three probe timeouts: the slow probe is load, not an outage.
      let wentDown = false;
      deadline = Date.now() + 3 * PROBE_TIMEOUT_MS;
      while (Date.now() < deadline) {
        await db.prisma.$queryRawUnsafe('SELECT 1');
        wentDown ||= db.health.isDown;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(wentDown).toBe(false);
      // The probe gave its stalled connection up and answers on a new one.
      expect(await db.health.check()).toBe(true);
      // (The stalled backend itself stays listed until it runs again and sees its client gone; the
      // probes of apps that other test files open on the same database are listed too.)
      expect((await probeBackends(db)).filter((pid) => pid !== stalled).length).toBeGreaterThanOrEqual(1);
    } finally {
      if (stalled) process.kill(stalled, 'SIGCONT');
      await db.close();
    }
  });

  it('a probe unanswered while nothing else is answered still counts as failed', async () => {
    const db = await openDatabase({ databaseUrl: inject('databaseUrl'), poolSize: 2 });
    let stalled: number | undefined;
    try {
      expect(await db.health.check()).toBe(true);
      [stalled] = await probeBackends(db);
      process.kill(stalled!, 'SIGSTOP');
      const started = Date.now();
      expect(await db.health.check()).toBe(false);
      expect(Date.now() - started).toBeLessThan(PROBE_TIMEOUT_MS + 500);
    } finally {
      if (stalled) process.kill(stalled, 'SIGCONT');
      await db.close();
    }
  });
});

describe.runIf(onPostgres)('a connection lost while the probe waits on it', () => {
  it('is an outage like any other, not a crash', async () => {
    const { proxy, url: viaProxy } = await databaseThroughProxy();
    const db = await openDatabase({ databaseUrl: viaProxy, poolSize: 2, connectTimeoutS: 5 });
    try {
      expect(await db.health.check()).toBe(true);
      // A probe started within PROBE_INTERVAL_MS of the silence waits PROBE_TIMEOUT_MS for its answer:
      // 700 ms in, one is waiting on its connection when every connection is dropped.
      proxy.silence();
      await new Promise((r) => setTimeout(r, 700));
      await proxy.refuse();
      const deadline = Date.now() + 3000;
      while (!db.health.isDown && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(db.health.isDown).toBe(true);
      await proxy.restore();
      const back = Date.now() + 5000;
      while (db.health.isDown && Date.now() < back) await new Promise((r) => setTimeout(r, 50));
      expect(db.health.isDown).toBe(false);
    } finally {
      await db.close();
      await proxy.stop();
    }
  });
});

describe.runIf(onPostgres)('an answer that comes after its 503', () => {
  it('has its body let go of: a provider file streamed late is not left open', async () => {
    // A Graph API stand-in whose file download answers only when told, then streams 8 MiB.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let fileClosedAt = 0;
    let fileFinished = false;
    const media = http.createServer((req, res) => {
      const base = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
      if (req.url === '/v21.0/media-late') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: `${base}/bytes`, mime_type: 'application/pdf' }));
      res.on('close', () => (fileClosedAt = Date.now()));
      res.on('finish', () => (fileFinished = true));
      void released.then(() => {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        let sent = 0;
        const next = () => {
          while (sent < 128) {
            sent++;
            if (!res.write(Buffer.alloc(65_536))) return void res.once('drain', next);
          }
          res.end();
        };
        next();
      });
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    const { proxy, url } = await databaseThroughProxy();
    const providers = testProviders({ timeoutMs: 15_000, settings: { WHATSAPP_API_URL: `http://127.0.0.1:${(media.address() as AddressInfo).port}` } });
    const app = await createTestApp({}, await openDatabase({ databaseUrl: url, poolSize: 4 }), { providers });
    try {
      const ws = await whatsappWorkspace(app.db.prisma);
      const ctx = { prisma: app.db.prisma, logger: app.logger };
      const message = { kind: 'message', providerId: 'wamid.late', from: { phone: '+31612345750' }, at: new Date(), body: '', media: [{ ref: 'media-late', contentType: 'application/pdf', filename: null }] } as const;
      await receiveMessage(ctx, ws.channel, { ...message, media: [...message.media] });
      const stored = await app.db.prisma.message.findFirstOrThrow({ where: { channelId: ws.channel.id } });
      const answer = app.fetch(ws.host, `/api/connect/messages/${stored.id}/media/0`, { headers: bearer(ws.apiKey) });
      // The file's head is awaited; the database goes away meanwhile: 503.
      await new Promise((r) => setTimeout(r, 300));
      await proxy.refuse();
      const refused = await answer;
      expect(refused.status).toBe(503);
      // Now the provider answers: the late answer's body is cancelled, so its download ends at once.
      const releasedAt = Date.now();
      release();
      const deadline = Date.now() + 5000;
      while (!fileClosedAt && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(fileClosedAt).toBeGreaterThan(0);
      expect(fileClosedAt - releasedAt).toBeLessThan(2000);
      expect(fileFinished).toBe(false);
    } finally {
      await proxy.restore();
      await app.close();
      await proxy.stop();
      media.closeAllConnections();
      await new Promise((resolve) => media.close(resolve));
    }
  }, 30_000);
});
