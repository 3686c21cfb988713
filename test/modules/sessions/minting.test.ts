import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { addChannel, bearer, createConnection, issueChannelKey } from '../../helpers/factories.js';
import { executeOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';
import { mintSession } from '../../helpers/sessions.js';
import { graphql } from '../../gql/index.js';
import { hashToken, isWellFormedToken } from '../../../src/lib/tokens.js';

/* docs/browser-apps.md: minting a session over REST and GraphQL, by a backend credential only. */

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const CreateSession = graphql(`
  mutation CreateSession($input: CreateSessionInput!) {
    createSession(input: $input) {
      session { id token user { id name email } scopes channelIds origins expiresAt createdAt }
      userErrors { field message code }
    }
  }
`);

describe('POST /api/connect/sessions', () => {
  it('mints a session for a user by email: 201 with exactly the view and the token, the defaults filled in, the token stored as a hash', async () => {
    const s = await messagingSetup(app);
    const before = Date.now();
    const minted = await s.api.post('/sessions', { user: 'agent@EXAMPLE.com' });
    expect(minted.status).toBe(201);
    expect(Object.keys(minted.body)).toEqual(['data']);
    expect(Object.keys(minted.body.data)).toEqual(['session']);
    const session = minted.body.data.session;
    expect(Object.keys(session)).toEqual(['id', 'token', 'user', 'scopes', 'channels', 'origins', 'expiresAt', 'createdAt']);
    expect(session).toEqual({
      id: expect.stringMatching(UUID),
      token: expect.stringMatching(/^cst_[0-9A-Za-z]{46}$/),
      user: { id: s.user.id, name: 'Agent Smith', email: 'Agent@Example.com' },
      scopes: ['read', 'send', 'contacts', 'conversations'],
      channels: [s.channel.id],
      origins: [],
      expiresAt: expect.stringMatching(ISO),
      createdAt: expect.stringMatching(ISO),
    });
    expect(isWellFormedToken(session.token)).toBe(true);
    const ttl = Date.parse(session.expiresAt) - Date.parse(session.createdAt);
    expect(ttl).toBe(3600_000);
    expect(Date.parse(session.createdAt)).toBeGreaterThanOrEqual(before - 5);
    const stored = await app.db.prisma.accessToken.findUniqueOrThrow({ where: { id: session.id } });
    expect(stored).toMatchObject({ kind: 'session', tokenHash: hashToken(session.token), userId: s.user.id, workspaceId: s.workspace.id });
    expect(JSON.stringify(stored)).not.toContain(session.token);
    // The token works at once, and acts as its user's channel.
    const browser = restClient(app, s.host, session.token);
    expect((await browser.get('/channels')).body.data.map((c: { id: string }) => c.id)).toEqual([s.channel.id]);
  });

  it('takes the user by id, a TTL from 60 s to 24 h, a subset of scopes, channels and origins (kept as browsers send them)', async () => {
    const s = await messagingSetup(app);
    const session = await mintSession(s.api, {
      user: s.user.id,
      ttl_seconds: 60,
      scopes: ['send', 'read', 'send'],
      channels: [s.channel.id.toUpperCase()],
      origins: ['https://App.Example.com/', 'http://localhost:5173', 'https://app.example.com:443'],
    });
    expect(session).toMatchObject({ scopes: ['read', 'send'], channels: [s.channel.id], origins: ['https://app.example.com', 'http://localhost:5173'] });
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(60_000);
    const day = await mintSession(s.api, { user: s.user.id, ttl_seconds: 86_400, scopes: null, channels: null, origins: null });
    expect(Date.parse(day.expiresAt) - Date.parse(day.createdAt)).toBe(86_400_000);
    expect(day.scopes).toEqual(['read', 'send', 'contacts', 'conversations']);
  });

  it('refuses an unknown user, a TTL out of range, an unknown scope, a channel outside the credential and a bad origin: 422 on that field, nothing stored', async () => {
    const s = await messagingSetup(app);
    const sibling = await addChannel(app.db.prisma, s.workspace.id, 'Sibling');
    const other = await messagingSetup(app);
    const cases: [Record<string, unknown>, string][] = [
      [{ user: 'nobody@example.com' }, 'user'],
      [{ user: other.user.id }, 'user'],
      [{}, 'user'],
      [{ user: s.user.id, ttl_seconds: 59 }, 'ttl_seconds'],
      [{ user: s.user.id, ttl_seconds: 86_401 }, 'ttl_seconds'],
      [{ user: s.user.id, ttl_seconds: 90.5 }, 'ttl_seconds'],
      [{ user: s.user.id, ttl_seconds: '3600' }, 'ttl_seconds'],
      [{ user: s.user.id, scopes: ['read', 'admin'] }, 'scopes'],
      [{ user: s.user.id, scopes: [] }, 'scopes'],
      [{ user: s.user.id, scopes: 'read' }, 'scopes'],
      [{ user: s.user.id, channels: [sibling.channel.id] }, 'channels'],
      [{ user: s.user.id, channels: ['not-a-channel'] }, 'channels'],
      [{ user: s.user.id, channels: [] }, 'channels'],
      [{ user: s.user.id, origins: ['https://app.example.com/path'] }, 'origins'],
      [{ user: s.user.id, origins: ['ftp://app.example.com'] }, 'origins'],
      [{ user: s.user.id, origins: ['*'] }, 'origins'],
    ];
    for (const [body, field] of cases) {
      const refused = await s.api.post('/sessions', body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(refused.body.errors), JSON.stringify(body)).toEqual([field]);
      expect(refused.body.message).toBe(refused.body.errors[field][0]);
    }
    expect((await s.api.post('/sessions', { user: s.user.id, scopes: ['read', 'admin'] })).body.errors.scopes[0]).toContain('"admin"');
    expect(await app.db.prisma.accessToken.count({ where: { workspaceId: s.workspace.id, kind: 'session' } })).toBe(0);
  });

  it('a connection token over several channels mints without X-Channel-Uuid, for all of them or some', async () => {
    const s = await messagingSetup(app);
    const second = await addChannel(app.db.prisma, s.workspace.id, 'Second');
    const connection = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Backend', channelIds: [s.channel.id, second.channel.id] });
    const backend = restClient(app, s.host, connection.token);
    const all = await mintSession(backend, { user: s.user.email });
    expect(all.channels).toEqual([s.channel.id, second.channel.id]);
    const one = await mintSession(backend, { user: s.user.email, channels: [second.channel.id] });
    expect(one.channels).toEqual([second.channel.id]);
  });

  it('never outlives the credential that minted it: expiresAt is at most the minting key’s expiry', async () => {
    const s = await messagingSetup(app);
    const key = await issueChannelKey(app.db.prisma, s.channel, 120);
    const session = await mintSession(restClient(app, s.host, key.token), { user: s.user.id, ttl_seconds: 3600 });
    expect(Date.parse(session.expiresAt)).toBe(key.expiresAt!.getTime());
  });

  it('a session cannot mint: 403, nothing stored', async () => {
    const s = await messagingSetup(app);
    const session = await mintSession(s.api, { user: s.user.id });
    const refused = await restClient(app, s.host, session.token).post('/sessions', { user: s.user.id });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ status: 'error', message: expect.stringContaining('backend credential') });
    expect(await app.db.prisma.accessToken.count({ where: { workspaceId: s.workspace.id, kind: 'session' } })).toBe(1);
  });
});

describe('createSession (GraphQL)', () => {
  it('mints the same session as REST, with channelIds, and userErrors on the input paths', async () => {
    const s = await messagingSetup(app);
    const result = await executeOperation(app, s.host, bearer(s.apiKey), CreateSession, {
      input: { user: s.user.email, ttlSeconds: 120, scopes: ['read', 'send'], channelIds: [s.channel.id], origins: ['https://app.example.com'] },
    });
    expect(result.errors).toBeUndefined();
    const session = result.data!.createSession!.session!;
    expect(session).toEqual({
      id: expect.stringMatching(UUID),
      token: expect.stringMatching(/^cst_/),
      user: { id: s.user.id, name: 'Agent Smith', email: 'Agent@Example.com' },
      scopes: ['read', 'send'],
      channelIds: [s.channel.id],
      origins: ['https://app.example.com'],
      expiresAt: expect.stringMatching(ISO),
      createdAt: expect.stringMatching(ISO),
    });
    expect(result.data!.createSession!.userErrors).toEqual([]);
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(120_000);

    const sibling = await addChannel(app.db.prisma, s.workspace.id, 'Sibling');
    const cases: { input: { user: string; ttlSeconds?: number; channelIds?: string[]; origins?: string[] }; rest: Record<string, unknown>; field: string }[] = [
      { input: { user: 'nobody@example.com' }, rest: { user: 'nobody@example.com' }, field: 'user' },
      { input: { user: s.user.id, ttlSeconds: 30 }, rest: { user: s.user.id, ttl_seconds: 30 }, field: 'ttlSeconds' },
      { input: { user: s.user.id, channelIds: [sibling.channel.id] }, rest: { user: s.user.id, channels: [sibling.channel.id] }, field: 'channelIds' },
      { input: { user: s.user.id, origins: ['not an origin'] }, rest: { user: s.user.id, origins: ['not an origin'] }, field: 'origins' },
    ];
    for (const { input, rest, field } of cases) {
      const refused = await executeOperation(app, s.host, bearer(s.apiKey), CreateSession, { input });
      const expected = Object.values((await s.api.post('/sessions', rest)).body.errors as Record<string, string[]>)[0]![0];
      expect(refused.data!.createSession).toEqual({ session: null, userErrors: [{ field: ['input', field], message: expected, code: 'INVALID' }] });
    }
    expect(await app.db.prisma.accessToken.count({ where: { workspaceId: s.workspace.id, kind: 'session' } })).toBe(1);
  });

  it('a session is refused: FORBIDDEN, the field null, nothing written', async () => {
    const s = await messagingSetup(app);
    const session = await mintSession(s.api, { user: s.user.id });
    const refused = await executeOperation(app, s.host, bearer(session.token), CreateSession, { input: { user: s.user.id } });
    expect(refused.status).toBe(200);
    expect(refused.data).toEqual({ createSession: null });
    expect(refused.errors).toEqual([expect.objectContaining({ path: ['createSession'], extensions: { code: 'FORBIDDEN' } })]);
    expect(await app.db.prisma.accessToken.count({ where: { workspaceId: s.workspace.id, kind: 'session' } })).toBe(1);
  });
});
