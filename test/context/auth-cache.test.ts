import { parse } from 'graphql';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../src/cli/run-admin.js';
import type { Database } from '../../src/db/database.js';
import { loadEnv } from '../../src/env.js';
import { createCredentialCache } from '../../src/context/credential-cache.js';
import { revokeToken } from '../../src/modules/credentials/credentials.service.js';
import type { ResolvedCredential } from '../../src/context/types.js';
import { BACKEND_SCOPES } from '../../src/context/scopes.js';
import { createTestApp, openTestDatabase, type TestApp } from '../helpers/app.js';
import { addChannel, bearer, createConnection, issueChannelKey, workspaceWithChannel } from '../helpers/factories.js';
import { subscribeSse } from '../helpers/sse.js';
import { TEST_SECRETS_KEY } from '../helpers/secrets.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Statements the database of the apps below ran, in order. */
let statements: string[] = [];
let db: Database;
beforeAll(async () => {
  db = await openTestDatabase({ onQuery: (sql) => statements.push(sql) });
});
afterAll(() => db.close());

/** Apps on the file's database, closed after the file (the database once, after them). */
const apps: TestApp[] = [];
async function appWith(env: Record<string, string>) {
  const app = await createTestApp(env, { ...db, close: async () => {} });
  apps.push(app);
  return app;
}
afterAll(async () => {
  for (const app of apps) await app.close();
});

async function viewer(app: TestApp, host: string, token: string, channel?: string) {
  const response = await app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', ...(channel ? { 'x-channel-uuid': channel } : {}) },
    body: JSON.stringify({ query: '{ viewer { workspace { id } channel { id } } }' }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function channelIds(app: TestApp, host: string, token: string) {
  const response = await app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ channels { id } }' }),
  });
  return { status: response.status, ids: (((await response.json()) as any).data?.channels ?? []).map((c: { id: string }) => c.id) };
}

/** The statements `work` runs on the database. */
async function counted(work: () => Promise<unknown>): Promise<string[]> {
  statements = [];
  await work();
  return statements;
}

/** Runs an admin command in this process, the way `npm run admin` does, on the file's database. */
async function admin(env: Record<string, string>, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, loadEnv({ NODE_ENV: 'test', SECRETS_KEY: TEST_SECRETS_KEY, ...env }), { stdout: (line) => out.push(line), stderr: (line) => err.push(line) }, async () => ({
    ...db,
    close: async () => {},
  }));
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** How long until `check` holds, polling; fails after `ms`. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
}

/** Authenticates until the app serves `token` from its cache: an app on Redis keeps credentials once it listens there. */
async function cached(app: TestApp, host: string, token: string) {
  await within(3000, async () => (await counted(async () => expect((await viewer(app, host, token)).status).toBe(200))).length === 0);
}

async function connectionOver(count: number) {
  const base = await workspaceWithChannel(db.prisma, 'Channel 1');
  const ids = [base.channel.id];
  for (let i = 2; i <= count; i++) ids.push((await addChannel(db.prisma, base.workspace.id, `Channel ${i}`)).channel.id);
  const connection = await createConnection(db.prisma, { workspaceId: base.workspace.id, name: 'CRM', channelIds: ids });
  return { ...base, channelIds: ids, connection };
}

describe('authentication statements', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await appWith({});
  });

  it('costs one statement when the credential is not cached, none when it is', async () => {
    const s = await workspaceWithChannel(db.prisma);
    const miss = await counted(async () => expect((await viewer(app, s.host, s.apiKey)).body.data.viewer.channel.id).toBe(s.channel.id));
    expect(miss).toHaveLength(1);
    const hit = await counted(async () => expect((await viewer(app, s.host, s.apiKey)).body.data.viewer.channel.id).toBe(s.channel.id));
    expect(hit).toEqual([]);
  });

  it('REST: the cached credential saves exactly the authentication statement', async () => {
    const s = await workspaceWithChannel(db.prisma);
    const get = async () => expect((await app.fetch(s.host, '/api/connect/channels', { headers: bearer(s.apiKey) })).status).toBe(200);
    const miss = await counted(get);
    const hit = await counted(get);
    expect(miss.filter((sql) => /access_tokens/.test(sql))).toHaveLength(1);
    expect(hit.filter((sql) => /access_tokens/.test(sql))).toEqual([]);
    expect(hit).toHaveLength(miss.length - 1);
  });

  it('a connection token over several channels: one statement, then X-Channel-Uuid is still checked on every hit', async () => {
    const s = await connectionOver(3);
    const unlinked = await addChannel(db.prisma, s.workspace.id, 'Unlinked');
    const token = s.connection.token;
    expect(await counted(async () => expect((await channelIds(app, s.host, token)).ids).toEqual(s.channelIds))).toHaveLength(1);
    const hits = await counted(async () => {
      expect((await viewer(app, s.host, token, s.channelIds[1])).body.data.viewer.channel.id).toBe(s.channelIds[1]);
      expect((await viewer(app, s.host, token, s.channelIds[2]!.toUpperCase())).body.data.viewer.channel.id).toBe(s.channelIds[2]);
      expect((await viewer(app, s.host, token, unlinked.channel.id)).status).toBe(401);
      expect((await viewer(app, s.host, token, 'not-a-uuid')).status).toBe(401);
      expect((await viewer(app, s.host, token)).body.errors[0].extensions.code).toBe('CHANNEL_REQUIRED');
    });
    expect(hits).toEqual([]);
  });

  it('is per host: the same token at another host is not served from the cache', async () => {
    const first = await workspaceWithChannel(db.prisma);
    const second = await workspaceWithChannel(db.prisma);
    expect((await viewer(app, first.host, first.apiKey)).status).toBe(200);
    expect((await viewer(app, second.host, first.apiKey)).status).toBe(401);
  });

  it('refusals are not cached: each costs its statement, and a credential that becomes valid is accepted at once', async () => {
    const s = await workspaceWithChannel(db.prisma);
    const key = await issueChannelKey(db.prisma, s.channel);
    await db.prisma.channel.update({ where: { id: s.channel.id }, data: { status: 'inactive' } });
    for (let i = 0; i < 2; i++) {
      expect(await counted(async () => expect((await viewer(app, s.host, key.token)).status).toBe(401))).toHaveLength(1);
    }
    await db.prisma.channel.update({ where: { id: s.channel.id }, data: { status: 'active' } });
    expect((await viewer(app, s.host, key.token)).status).toBe(200);
  });

  it('AUTH_CACHE_MS=0 turns the cache off: one statement on every request', async () => {
    const uncached = await appWith({ AUTH_CACHE_MS: '0' });
    const s = await workspaceWithChannel(db.prisma);
    for (let i = 0; i < 3; i++) {
      expect(await counted(async () => expect((await viewer(uncached, s.host, s.apiKey)).status).toBe(200))).toHaveLength(1);
    }
  });
});

describe('a cached credential lapses', () => {
  it('never past its expiry, however long the cache would keep it', async () => {
    const app = await appWith({ AUTH_CACHE_MS: '60000' });
    const s = await workspaceWithChannel(db.prisma);
    const key = await issueChannelKey(db.prisma, s.channel, 1);
    expect((await viewer(app, s.host, key.token)).status).toBe(200);
    expect(await counted(async () => expect((await viewer(app, s.host, key.token)).status).toBe(200))).toEqual([]);
    await sleep(key.expiresAt!.getTime() - Date.now() + 5);
    expect((await viewer(app, s.host, key.token)).status).toBe(401);
  });

  it('without Redis, a revocation made elsewhere is refused after at most AUTH_CACHE_MS', async () => {
    const ttl = 1000;
    const app = await appWith({ AUTH_CACHE_MS: String(ttl) });
    const s = await workspaceWithChannel(db.prisma);
    expect((await viewer(app, s.host, s.apiKey)).status).toBe(200);
    const revokedAt = Date.now();
    expect((await admin({}, 'token:revoke', '--token', s.apiKey)).code).toBe(0);
    await within(ttl + 500, async () => (await viewer(app, s.host, s.apiKey)).status === 401);
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(ttl + 500);
  });

  it('a GraphQL subscription is never opened on a cached credential: it is refused once revoked', async () => {
    const app = await appWith({ AUTH_CACHE_MS: '60000' });
    const s = await workspaceWithChannel(db.prisma);
    expect((await viewer(app, s.host, s.apiKey)).status).toBe(200);
    await revokeToken(db.prisma, s.apiKey);
    const subscribe = () =>
      subscribeSse((path, init) => app.fetch(s.host, path, init), bearer(s.apiKey), parse('subscription { conversationUpdated { id } }'), {});
    await expect(subscribe()).rejects.toThrow(/HTTP 401/);
    // Whatever the client accepts: yoga streams a subscription for `*/*` or no Accept at all.
    for (const accept of ['*/*', null]) {
      const response = await app.fetch(s.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(s.apiKey), 'content-type': 'application/json', ...(accept ? { accept } : {}) },
        body: JSON.stringify({ query: 'subscription { conversationUpdated { id } }' }),
      });
      const text = await response.text();
      expect(response.status, `Accept ${accept}: ${text}`).toBe(401);
      expect(text).toContain('UNAUTHENTICATED');
    }
  });
});

describe('revocation through the admin commands with Redis', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    // A cache far longer than the bounds below: only the announcement can explain a prompt refusal.
    first = await appWith({ REDIS_URL, AUTH_CACHE_MS: '60000' });
    second = await appWith({ REDIS_URL, AUTH_CACHE_MS: '60000' });
  });

  it('token:revoke reaches every server sharing the database within a moment', async () => {
    const s = await workspaceWithChannel(db.prisma);
    for (const app of [first, second]) await cached(app, s.host, s.apiKey);
    const result = await admin({ REDIS_URL }, 'token:revoke', '--token', s.apiKey);
    expect(result).toEqual({ code: 0, stdout: '{"revoked":true}', stderr: '' });
    for (const app of [first, second]) expect(await within(1000, async () => (await viewer(app, s.host, s.apiKey)).status === 401)).toBeLessThan(1000);
  });

  it('channel:deactivate drops the channel from every cached credential that could act as it', async () => {
    const s = await connectionOver(2);
    const [kept, deactivated] = s.channelIds as [string, string];
    const key = await issueChannelKey(db.prisma, { id: deactivated, workspaceId: s.workspace.id });
    for (const app of [first, second]) {
      await cached(app, s.host, key.token);
      await cached(app, s.host, s.connection.token);
      expect((await channelIds(app, s.host, s.connection.token)).ids).toEqual([kept, deactivated]);
    }
    expect((await admin({ REDIS_URL }, 'channel:deactivate', '--channel', deactivated)).code).toBe(0);
    for (const app of [first, second]) {
      await within(1000, async () => (await viewer(app, s.host, key.token)).status === 401);
      await within(1000, async () => (await viewer(app, s.host, s.connection.token, deactivated)).status === 401);
      expect((await channelIds(app, s.host, s.connection.token)).ids).toEqual([kept]);
      expect((await viewer(app, s.host, s.connection.token)).body.data.viewer.channel.id).toBe(kept);
    }
  });
});

describe('the cache itself', () => {
  const logger = pino({ level: 'silent' });
  const credential = (id: string, expiresAt: Date | null = null): ResolvedCredential => ({
    workspace: { id: 'w', hostname: 'h', name: 'n', trustedDocumentsOnly: false, createdAt: new Date(), updatedAt: new Date() },
    credential: { id, kind: 'channel_key', scopes: BACKEND_SCOPES, user: null, origins: [], mintedById: null },
    channels: [],
    connectionId: null,
    expiresAt,
    mintedByExpiresAt: null,
  });
  const hash = (n: number) => n.toString(16).padStart(64, '0');

  it('holds at most maxEntries credentials, dropping the least recently used', async () => {
    const cache = createCredentialCache({ ttlMs: 60_000, logger, maxEntries: 3 })!;
    let loads = 0;
    const resolve = (n: number) => cache.resolve('h', hash(n), async () => (loads++, credential(String(n))));
    for (let n = 0; n < 3; n++) await resolve(n);
    await resolve(0); // used again: 1 is now the least recently used
    for (let n = 3; n < 1000; n++) await resolve(n);
    expect(cache.size).toBe(3);
    loads = 0;
    await resolve(999);
    expect(loads).toBe(0);
    await resolve(1);
    expect(loads).toBe(1);
    await cache.dispose();
  });

  it('keeps no refusal', async () => {
    const cache = createCredentialCache({ ttlMs: 60_000, logger })!;
    for (let n = 0; n < 100; n++) expect(await cache.resolve('h', hash(n), async () => null)).toBeNull();
    expect(cache.size).toBe(0);
    await cache.dispose();
  });

  it('never keeps a credential past its expiry, nor longer than the TTL', async () => {
    let now = 1_000_000;
    const cache = createCredentialCache({ ttlMs: 5000, logger, now: () => now })!;
    let loads = 0;
    const resolve = (expiresAt: Date | null) => cache.resolve('h', hash(expiresAt ? 1 : 2), async () => (loads++, credential('c', expiresAt)));
    const expiring = new Date(now + 1000);
    await resolve(expiring);
    await resolve(null);
    now += 999;
    await resolve(expiring);
    await resolve(null);
    expect(loads).toBe(2);
    now += 1;
    await resolve(expiring);
    expect(loads).toBe(3);
    now += 4000;
    await resolve(null);
    expect(loads).toBe(4);
    await cache.dispose();
  });

  it('does not keep what a resolution read before a change announced while it ran', async () => {
    const cache = createCredentialCache({ ttlMs: 60_000, logger })!;
    let release!: () => void;
    const slow = cache.resolve('h', hash(1), () => new Promise<ResolvedCredential>((resolve) => (release = () => resolve(credential('c')))));
    cache.invalidate({ tokenHash: hash(1) });
    release();
    expect(await slow).not.toBeNull();
    expect(cache.size).toBe(0);
    await cache.dispose();
  });

  it('shares one resolution between concurrent misses of one credential', async () => {
    const cache = createCredentialCache({ ttlMs: 60_000, logger })!;
    let loads = 0;
    const load = async () => (loads++, credential('c'));
    await Promise.all(Array.from({ length: 10 }, () => cache.resolve('h', hash(1), load)));
    expect(loads).toBe(1);
    await cache.dispose();
  });
});
