import http from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, onPostgres, type TestApp } from '../helpers/app.js';
import { bearer, issueChannelKey, workspaceWithChannel } from '../helpers/factories.js';
import { restClient } from '../helpers/rest.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

const BUDGET = 5;
let app: TestApp;
beforeAll(async () => {
  app = await createTestApp({ RATE_LIMIT_PER_MINUTE: String(BUDGET) });
});
afterAll(() => app.close());

const graphql = (a: TestApp, host: string, token: string, query = '{ viewer { workspace { id } } }') =>
  a.fetch(host, '/graphql', { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ query }) });

const limits = (headers: Headers) => ({
  limit: headers.get('ratelimit-limit'),
  remaining: headers.get('ratelimit-remaining'),
  reset: Number(headers.get('ratelimit-reset')),
});

describe('rate limits per credential', () => {
  it('every authenticated REST and GraphQL answer carries RateLimit-Limit, -Remaining and -Reset, 4xx included', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    const answers = [
      (await api.get('/channels')).headers,
      (await graphql(app, ws.host, ws.apiKey)).headers,
      (await api.post('/contacts', { name: 'x' })).headers, // a 422
      (await api.get('/contacts/00000000-0000-4000-8000-000000000000')).headers, // a 404
    ];
    expect(answers.map((h) => limits(h).remaining)).toEqual(['4', '3', '2', '1']);
    for (const headers of answers) {
      expect(headers.get('ratelimit-limit')).toBe(String(BUDGET));
      expect(limits(headers).reset).toBeGreaterThanOrEqual(1);
      expect(limits(headers).reset).toBeLessThanOrEqual(60);
      expect(headers.get('retry-after')).toBeNull();
    }
  });

  it('over the budget: REST 429 with Retry-After; GraphQL 429 with RATE_LIMITED; nothing runs', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    for (let i = 0; i < BUDGET; i++) expect((await api.get('/channels')).status).toBe(200);
    const refused = await api.post('/contacts', { name: 'Late', email: 'late@example.com' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ status: 'error', message: 'Too many requests.' });
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('retry-after')).toBe(refused.headers.get('ratelimit-reset'));
    expect(await app.db.prisma.contact.count({ where: { workspaceId: ws.workspace.id } })).toBe(0);

    const gql = await graphql(app, ws.host, ws.apiKey);
    expect(gql.status).toBe(429);
    const body = await gql.json();
    expect(body.errors[0]).toMatchObject({ message: 'Too many requests.', extensions: { code: 'RATE_LIMITED' } });
    expect(gql.headers.get('ratelimit-limit')).toBe(String(BUDGET));
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('is per credential, and an unauthenticated answer carries no budget', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    for (let i = 0; i <= BUDGET; i++) await api.get('/channels');
    expect((await api.get('/channels')).status).toBe(429);
    const { token } = await issueChannelKey(app.db.prisma, ws.channel);
    const other = await restClient(app, ws.host, token).get('/channels');
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe(String(BUDGET - 1));
    const anonymous = await app.fetch(ws.host, '/api/connect/channels');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ratelimit-limit')).toBeNull();
  });

  it('RATE_LIMIT_PER_MINUTE=0 turns it off', async () => {
    const off = await createTestApp({ RATE_LIMIT_PER_MINUTE: '0' }, app.db);
    const ws = await workspaceWithChannel(app.db.prisma);
    for (let i = 0; i < BUDGET + 2; i++) {
      const result = await off.fetch(ws.host, '/api/connect/channels', { headers: bearer(ws.apiKey) });
      expect(result.status).toBe(200);
      expect(result.headers.get('ratelimit-limit')).toBeNull();
    }
  });
});

describe.skipIf(!onPostgres)('one budget for every process through Redis', () => {
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
  });

  it('two server processes on one Redis share one budget', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    const env = {
      DATABASE_URL: inject('databaseUrl'),
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      RATE_LIMIT_PER_MINUTE: '6',
      SEED_DEMO: '0',
    };
    servers.push(startServer(env), startServer(env));
    const urls = await Promise.all(servers.map((server) => server.listening));
    // fetch cannot set Host, which names the workspace.
    const call = (url: string) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
        http
          .get(`${url}/api/connect/channels`, { headers: { ...bearer(ws.apiKey), host: ws.host } }, (res) => {
            res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
          })
          .on('error', reject);
      });
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const result = await call(urls[i % 2]!);
      expect(result.status).toBe(200);
      remaining.push(String(result.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    for (const url of urls) expect((await call(url)).status).toBe(429);
  });
});
