import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.js';
import { createTestApp, onPostgres } from '../../helpers/app.js';
import { appWithFailingInsert } from '../../helpers/fresh-database.js';
import { databaseThroughProxy } from '../../helpers/proxied-app.js';
import { requestOnPort as request, serveOnPort, type ServedApp } from '../../helpers/real-port.js';
import { signedHeaders, textMessage, webhookBody, whatsappWorkspace } from '../../helpers/whatsapp-fake.js';

/**
 * Webhooks on a real port, through yoga's node adapter and the route table: the same answers,
 * checks, metrics, logs and outage behaviour as through the app in process.
 */

const count = (metrics: string, route: string, method: string, status: number) => {
  const line = metrics.split('\n').find((l) => l.startsWith(`connect_http_requests_total{route="${route}",method="${method}",status="${status}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
};

describe('webhooks on a real port', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let served: ServedApp;
  let ws: Awaited<ReturnType<typeof whatsappWorkspace>>;

  beforeAll(async () => {
    app = await createTestApp();
    served = await serveOnPort(app.db, app.env, { providers: app.providers });
    ws = await whatsappWorkspace(app.db.prisma);
  });
  afterAll(async () => {
    await served.close();
    await app.close();
  });

  const path = () => `/webhooks/whatsapp/${ws.channel.id}`;
  const stored = async () =>
    (await app.db.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM inbound_events WHERE channel_id = ${ws.channel.id}::uuid`)[0]!.n;

  it('store a signed webhook raw with its delivery and answer 200 OK, as the app does', async () => {
    const body = webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, messages: [textMessage('+31612345678', 'secret words')] }] as never);
    const before = await stored();
    const onPort = await request(served.port, ws.host, 'POST', path(), signedHeaders(body, ws.settings.appSecret), body);
    expect(onPort).toMatchObject({ status: 200, body: 'OK' });
    expect(onPort.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(onPort.headers['content-length']).toBe('2');
    expect(await stored()).toBe(before + 1);
    const [row] = await app.db.prisma.$queryRaw<{ body: Buffer; headers: unknown; deliveries: number }[]>`
      SELECT e.body, e.headers, (SELECT count(*)::int FROM deliveries d WHERE d.inbound_event_id = e.id) AS deliveries
        FROM inbound_events e WHERE channel_id = ${ws.channel.id}::uuid ORDER BY e.id DESC LIMIT 1`;
    expect(Buffer.from(row!.body).toString()).toBe(body);
    expect(row!.headers).toEqual({ 'content-type': 'application/json' });
    expect(row!.deliveries).toBe(1);
    // The access line names the request, never its body.
    const line = served.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === 'request');
    expect(line).toMatchObject({ method: 'POST', path: path(), status: 200 });
    expect(served.logs.join('')).not.toContain('secret words');

    // Kept alive: the answer ends where its length says, and the connection serves the next one.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const answers = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<number>((resolve, reject) => {
            const sent = http.request({ port: served.port, host: '127.0.0.1', method: 'POST', path: path(), agent, headers: { host: ws.host, ...signedHeaders(body, ws.settings.appSecret) } }, (r) => {
              r.resume();
              r.on('end', () => resolve(r.statusCode!));
            });
            sent.on('error', reject);
            sent.end(body);
          }),
      ),
    );
    agent.destroy();
    expect(answers).toEqual([200, 200]);
  });

  it('refuse in the contract’s order with the same answers as the app gives, storing nothing', async () => {
    const body = webhookBody([{ phoneNumberId: ws.settings.phoneNumberId, messages: [textMessage('+31612345678', 'hi')] }] as never);
    const signed = signedHeaders(body, ws.settings.appSecret);
    const big = `{"x":"${'a'.repeat(1024 * 1024)}"}`;
    const cases: [string, string, string, Record<string, string>, string | undefined, boolean?][] = [
      ['unknown channel', 'POST', '/webhooks/whatsapp/00000000-0000-4000-8000-000000000000', signed, body],
      ['not a uuid', 'POST', '/webhooks/whatsapp/nope', signed, body],
      ['no signature', 'POST', path(), { 'content-type': 'application/json' }, body],
      ['wrong signature', 'POST', path(), signedHeaders(body, 'another secret'), body],
      ['declared over 1 MiB', 'POST', path(), signedHeaders(big, ws.settings.appSecret), big],
      ['chunked over 1 MiB', 'POST', path(), signedHeaders(big, ws.settings.appSecret), big, true],
      ['not an object', 'POST', path(), signedHeaders('[1]', ws.settings.appSecret), '[1]'],
      ['no route', 'POST', '/webhooks/nothing', {}, ''],
      ['verify token', 'GET', `${path()}?hub.mode=subscribe&hub.verify_token=${ws.settings.verifyToken}&hub.challenge=c-123`, {}, undefined],
      ['wrong verify token', 'GET', `${path()}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=c-123`, {}, undefined],
      ['twilio, unknown channel', 'POST', '/webhooks/twilio/00000000-0000-4000-8000-000000000000/status', {}, ''],
    ];
    const before = await stored();
    for (const [label, method, target, headers, sent, chunked] of cases) {
      const onPort = await request(served.port, ws.host, method, target, headers, sent, chunked);
      const inProcess = await app.fetch(ws.host, target, { method, headers, ...(sent === undefined ? {} : { body: sent }) });
      expect({ status: onPort.status, type: onPort.headers['content-type'], body: onPort.body }, label).toEqual({
        status: inProcess.status,
        type: inProcess.headers.get('content-type'),
        body: await inProcess.text(),
      });
    }
    expect(await stored()).toBe(before);
    const statuses = cases.map(([, method, target, headers, sent, chunked]) => [method, target, headers, sent, chunked] as const);
    expect(statuses.length).toBe(11);
    // The refusals' statuses, in order.
    const seen = [];
    for (const [method, target, headers, sent, chunked] of statuses) seen.push((await request(served.port, ws.host, method, target, headers, sent, chunked)).status);
    expect(seen).toEqual([404, 404, 401, 401, 413, 413, 400, 404, 200, 403, 404]);
  });

  it('answer other methods with 405, and requests with an Origin as any other', async () => {
    const put = await request(served.port, ws.host, 'PUT', path(), {}, '');
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD, POST');
    const body = '{}';
    const withOrigin = await request(served.port, ws.host, 'POST', path(), { ...signedHeaders(body, ws.settings.appSecret), origin: 'https://example.com' }, body);
    expect(withOrigin.status).toBe(200);
    // A path that normalises out of /webhooks/ is routed as what it names.
    expect((await request(served.port, ws.host, 'GET', '/webhooks/../healthz')).status).toBe(200);
  });

  it('are counted in the request metrics by route, method and status', async () => {
    const metrics = async () => (await request(served.port, ws.host, 'GET', '/metrics')).body;
    const route = 'POST /webhooks/whatsapp/{channelId}';
    const before = await metrics();
    const body = '{"object":"whatsapp_business_account","entry":[]}';
    await request(served.port, ws.host, 'POST', path(), signedHeaders(body, ws.settings.appSecret), body);
    await request(served.port, ws.host, 'POST', path(), signedHeaders(body, 'wrong'), body);
    await request(served.port, ws.host, 'POST', '/webhooks/whatsapp/00000000-0000-4000-8000-000000000000', {}, body);
    const after = await metrics();
    expect(count(after, route, 'POST', 200) - count(before, route, 'POST', 200)).toBe(1);
    expect(count(after, route, 'POST', 401) - count(before, route, 'POST', 401)).toBe(1);
    // An unknown channel is counted under the route's own label: the label never holds the path.
    expect(count(after, route, 'POST', 404) - count(before, route, 'POST', 404)).toBe(1);
    expect(after).toMatch(/connect_http_request_duration_seconds_count\{route="POST \/webhooks\/whatsapp\/\{channelId\}",method="POST",status="200"\} \d+/);
  });
});

describe('webhooks on a real port, when the database fails', () => {
  it('answer 500 when the statement fails, and store nothing', async () => {
    const app = await appWithFailingInsert('inbound_events', 'true', 'inbound events refused');
    const served = await serveOnPort(app.db, app.env, { providers: app.providers });
    try {
      const ws = await whatsappWorkspace(app.db.prisma);
      const body = '{"object":"whatsapp_business_account","entry":[]}';
      const answer = await request(served.port, ws.host, 'POST', `/webhooks/whatsapp/${ws.channel.id}`, signedHeaders(body, ws.settings.appSecret), body);
      expect(answer).toMatchObject({ status: 500, body: JSON.stringify({ status: 'error', message: 'Internal server error' }) });
      const [row] = await app.db.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM inbound_events`;
      expect(row!.n).toBe(0);
      expect(served.logs.some((l) => l.includes('unexpected failure'))).toBe(true);
      expect(served.logs.join('')).not.toContain('whatsapp_business_account');
    } finally {
      await served.close();
      await app.drop();
    }
  });

  it.runIf(onPostgres)('answer 503 within 2 s while PostgreSQL is unreachable, and accept again once it is back', async () => {
    const { proxy, url } = await databaseThroughProxy();
    const app = await createTestApp({}, await openDatabase({ databaseUrl: url, poolSize: 4 }));
    const served = await serveOnPort(app.db, app.env, { providers: app.providers });
    try {
      const ws = await whatsappWorkspace(app.db.prisma);
      const body = '{"object":"whatsapp_business_account","entry":[]}';
      const post = () => request(served.port, ws.host, 'POST', `/webhooks/whatsapp/${ws.channel.id}`, signedHeaders(body, ws.settings.appSecret), body);
      expect((await post()).status).toBe(200);
      proxy.silence();
      const started = Date.now();
      const down = await post();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(down).toMatchObject({ status: 503, body: JSON.stringify({ status: 'error', message: 'Service unavailable' }) });
      expect(down.headers['retry-after']).toBe('1');
      await proxy.restore();
      const deadline = Date.now() + 10_000;
      let status = 0;
      while (Date.now() < deadline && (status = (await post()).status) !== 200) await new Promise((r) => setTimeout(r, 100));
      expect(status).toBe(200);
    } finally {
      await proxy.restore();
      await served.close();
      await app.close();
      await proxy.stop();
    }
  });
});
