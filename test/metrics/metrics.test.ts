import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OPERATION_NAMES } from '../../src/metrics/metrics.js';
import { testWorker } from '../helpers/worker.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { restClient } from '../helpers/rest.js';

// A database of its own: the worker below claims every due delivery, and the queue
// depth counts them, so other files' deliveries must not be here.
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
beforeAll(async () => {
  app = await appOnOwnDatabase();
});
afterAll(() => app.drop());

async function scrape(target: TestApp = app): Promise<string> {
  const response = await target.fetch('metrics.test', '/metrics');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of the one sample of `name` whose labels include every `labels` pair. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const found = text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => wanted.every((pair) => line.slice(0, line.lastIndexOf('}') + 1).match(new RegExp(`[{,]${escape(pair)}[,}]`))));
  if (found.length === 0) return undefined;
  expect(found, `${name} ${wanted.join(',')}`).toHaveLength(1);
  return Number(found[0]!.slice(found[0]!.lastIndexOf(' ') + 1));
}
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function graphql(host: string, apiKey: string, query: string, operationName?: string) {
  const response = await app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...bearer(apiKey), 'content-type': 'application/json' },
    body: JSON.stringify({ query, operationName }),
  });
  await response.text();
  return response.status;
}

describe('GET /metrics', () => {
  it('labels requests by route pattern and operation name, never by anything the caller sent', async () => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    const api = restClient(app, host, apiKey);
    const email = 'metrics.person@example.com';
    const created = await api.post('/contacts', { name: 'Metrics Person', email });
    expect(created.status).toBe(201);
    const contactId = created.body.data.contact.id as string;
    expect((await api.patch(`/contacts/${contactId}?note=secret-query-value`, { name: 'Renamed' })).status).toBe(200);
    expect((await api.get(`/contacts/${contactId}?email=${encodeURIComponent(email)}`)).status).toBe(200);
    const missing = '00000000-0000-4000-8000-0000000000ab';
    expect((await api.get(`/contacts/${missing}`)).status).toBe(404);
    expect((await app.fetch(host, `/api/connect/nowhere/${contactId}?token=${apiKey}`, { headers: bearer(apiKey) })).status).toBe(404);
    expect((await app.fetch(host, `/no/such/${missing}`)).status).toBe(404);
    expect(await graphql(host, apiKey, 'query ViewerName { viewer { workspace { name } } }')).toBe(200);
    expect(await graphql(host, apiKey, '{ viewer { workspace { id } } }')).toBe(200);
    const longName = `Q${'x'.repeat(70)}`;
    expect(await graphql(host, apiKey, `query ${longName} { viewer { workspace { id } } }`)).toBe(200);
    expect(await graphql(host, 'not-a-key', 'query Refused { viewer { workspace { id } } }')).toBe(401);

    const text = await scrape();
    for (const secret of [contactId, missing, email, apiKey, host, 'secret-query-value', longName, 'Refused', 'nowhere', '/no/such']) {
      expect(text, secret).not.toContain(secret);
    }
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
    expect(text).not.toMatch(/route="[^"]*\?/);
    expect(text).not.toMatch(/@/);

    const count = (route: string, method: string, status: string) => sample(text, 'connect_http_requests_total', { route, method, status });
    expect(count('POST /contacts', 'POST', '201')).toBe(1);
    expect(count('PATCH /contacts/:contact', 'PATCH', '200')).toBe(1);
    expect(count('GET /contacts/:contact', 'GET', '200')).toBe(1);
    expect(count('GET /contacts/:contact', 'GET', '404')).toBe(1);
    expect(count('unmatched', 'GET', '404')).toBe(2);
    expect(count('graphql ViewerName', 'POST', '200')).toBe(1);
    expect(count('graphql anonymous', 'POST', '200')).toBe(1);
    expect(count('graphql other', 'POST', '200')).toBe(1);
    // Refused before its document was read: counted, without the name the caller chose.
    expect(count('graphql', 'POST', '401')).toBe(1);

    const histogram = 'connect_http_request_duration_seconds';
    const route = { route: 'PATCH /contacts/:contact', method: 'PATCH', status: '200' };
    expect(sample(text, `${histogram}_bucket`, { ...route, le: '0.005' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, `${histogram}_bucket`, { ...route, le: '10' })).toBe(1);
    expect(sample(text, `${histogram}_bucket`, { ...route, le: '+Inf' })).toBe(1);
    expect(sample(text, `${histogram}_count`, route)).toBe(1);
    expect(sample(text, `${histogram}_sum`, route)).toBeGreaterThan(0);
    expect(sample(text, `${histogram}_count`, { route: 'graphql ViewerName' })).toBe(1);

  });

  it('gives at most a bounded number of operation names a label of their own', async () => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    for (let i = 0; i < MAX_OPERATION_NAMES + 5; i++) {
      expect(await graphql(host, apiKey, `query Op${i} { viewer { workspace { id } } }`)).toBe(200);
    }
    const text = await scrape();
    const routes = new Set(text.split('\n').flatMap((line) => (line.startsWith('connect_http_requests_total{') ? [/route="([^"]*)"/.exec(line)![1]!] : [])));
    expect([...routes].filter((r) => r.startsWith('graphql ') && !['graphql anonymous', 'graphql other'].includes(r)).length).toBe(MAX_OPERATION_NAMES);
    expect(text).not.toContain(`route="graphql Op${MAX_OPERATION_NAMES + 4}"`);
    // Names already known keep their label once the cap is reached.
    expect(await graphql(host, apiKey, 'query ViewerName { viewer { workspace { id } } }')).toBe(200);
    expect(sample(await scrape(), 'connect_http_requests_total', { route: 'graphql ViewerName', status: '200' })).toBe(2);
  });

  it('reports the delivery queue, delivery outcomes, the database pool and the process', async () => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    const api = restClient(app, host, apiKey);
    for (let i = 0; i < 2; i++) expect((await api.post('/messages', { to: { phone: '+31612345678' }, message: `Hello ${i}` })).status).toBe(202);

    const before = await scrape();
    expect(sample(before, 'connect_delivery_queue_depth', { kind: 'message' })).toBe(2);
    expect(sample(before, 'connect_delivery_queue_depth', { kind: 'event' })).toBeGreaterThanOrEqual(0);
    const delivered = sample(before, 'connect_delivery_attempts_total', { kind: 'message', outcome: 'delivered' }) ?? 0;

    const worker = testWorker(app.db);
    try {
      await worker.runOnce();
    } finally {
      await worker.stop();
    }

    const after = await scrape();
    expect(sample(after, 'connect_delivery_queue_depth', { kind: 'message' })).toBe(0);
    expect(sample(after, 'connect_delivery_attempts_total', { kind: 'message', outcome: 'delivered' })).toBe(delivered + 2);

    const inUse = sample(after, 'connect_db_pool_connections', { state: 'in_use' });
    const idle = sample(after, 'connect_db_pool_connections', { state: 'idle' });
    expect(inUse).toBeGreaterThanOrEqual(0);
    expect(idle).toBeGreaterThanOrEqual(0);
    expect(inUse! + idle!).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'connect_db_pool_waiting')).toBe(0);

    expect(sample(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(after).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(after).toMatch(/^# TYPE connect_http_request_duration_seconds histogram$/m);
  });

  it('keeps the request counts of each app apart', async () => {
    const other = await createTestApp();
    try {
      expect((await other.fetch('x.test', '/healthz')).status).toBe(200);
      const text = await scrape(other);
      expect(sample(text, 'connect_http_requests_total', { route: 'GET /healthz', method: 'GET', status: '200' })).toBe(1);
      expect(text).not.toContain('PATCH /contacts/:contact');
    } finally {
      await other.close();
    }
  });
});
