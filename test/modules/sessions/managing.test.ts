import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { runAdminOn } from '../../helpers/admin.js';
import { addChannel, bearer, createConnection, issueChannelKey } from '../../helpers/factories.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';
import { mintSession } from '../../helpers/sessions.js';
import { createUser } from '../../../src/modules/users/users.service.js';
import { hashToken } from '../../../src/lib/tokens.js';

/* docs/browser-apps.md: listing and revoking sessions over REST and with the admin commands. */

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const UNAUTHENTICATED = { status: 'error', message: 'Unauthenticated.' };

describe('GET /api/connect/sessions', () => {
  it('lists the live sessions whose channels the credential can all act as, newest first, never a token; by user; page by page', async () => {
    const s = await messagingSetup(app);
    const second = await addChannel(app.db.prisma, s.workspace.id, 'Second');
    const colleague = await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: 'Colleague', email: 'colleague@example.com' });
    const connection = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Backend', channelIds: [s.channel.id, second.channel.id] });
    const backend = restClient(app, s.host, connection.token);
    const first = await mintSession(s.api, { user: s.user.id });
    const both = await mintSession(backend, { user: colleague.id });
    const onSecond = await mintSession(backend, { user: s.user.id, channels: [second.channel.id] });
    const revoked = await mintSession(s.api, { user: s.user.id });
    expect((await s.api.delete(`/sessions/${revoked.id}`)).status).toBe(204);

    const all = await backend.get('/sessions');
    expect(all.status).toBe(200);
    expect(all.body.data.map((x: { id: string }) => x.id)).toEqual([onSecond.id, both.id, first.id]);
    expect(all.body.meta).toEqual({ per_page: 25, next_cursor: null, has_more: false });
    const { token: _, ...view } = first;
    expect(all.body.data[2]).toEqual(view);
    expect(JSON.stringify(all.body)).not.toMatch(/cst_/);
    // The channel key sees only the sessions over its one channel.
    expect((await s.api.get('/sessions')).body.data.map((x: { id: string }) => x.id)).toEqual([first.id]);
    // By user, by id or email.
    expect((await backend.get(`/sessions?user=${encodeURIComponent('AGENT@example.com')}`)).body.data.map((x: { id: string }) => x.id)).toEqual([onSecond.id, first.id]);
    expect((await backend.get(`/sessions?user=${colleague.id}`)).body.data.map((x: { id: string }) => x.id)).toEqual([both.id]);
    // Page by page.
    const page1 = await backend.get('/sessions?limit=2');
    expect(page1.body.meta.has_more).toBe(true);
    const page2 = await backend.get(`/sessions?limit=2&cursor=${page1.body.meta.next_cursor}`);
    expect([...page1.body.data, ...page2.body.data].map((x: { id: string }) => x.id)).toEqual([onSecond.id, both.id, first.id]);
    expect((await backend.get('/sessions?user=nobody@example.com')).status).toBe(422);
    expect((await backend.get('/sessions?limit=0')).body.errors).toHaveProperty('limit');
  });

  it('leaves out expired sessions and those of a revoked or expired minting credential', async () => {
    const s = await messagingSetup(app);
    const key = await issueChannelKey(app.db.prisma, s.channel);
    const expiringKey = await issueChannelKey(app.db.prisma, s.channel, 3600);
    const live = await mintSession(s.api, { user: s.user.id });
    const expired = await mintSession(s.api, { user: s.user.id });
    await app.db.prisma.accessToken.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await mintSession(restClient(app, s.host, key.token), { user: s.user.id });
    const ofExpiredKey = await mintSession(restClient(app, s.host, expiringKey.token), { user: s.user.id });
    expect((await runAdminOn(app.db, ['token:revoke', '--token', key.token])).json).toEqual({ revoked: true });
    await app.db.prisma.accessToken.update({ where: { tokenHash: hashToken(expiringKey.token) }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await s.api.get('/sessions')).body.data.map((x: { id: string }) => x.id)).toEqual([live.id]);
    // A session of an expired minting credential is revoked with it: no longer usable, and not "expired" itself.
    const refused = await restClient(app, s.host, ofExpiredKey.token).get('/channels');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(UNAUTHENTICATED);
  });

  it('is refused to a session: 403', async () => {
    const s = await messagingSetup(app);
    const session = await mintSession(s.api, { user: s.user.id });
    const browser = restClient(app, s.host, session.token);
    for (const refused of [await browser.get('/sessions'), await browser.delete(`/sessions/${session.id}`), await browser.delete(`/sessions?user=${s.user.id}`)]) {
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ status: 'error', message: expect.any(String) });
    }
    expect((await browser.get('/channels')).status).toBe(200);
  });
});

describe('DELETE /api/connect/sessions', () => {
  it('/{id}: 204, and the token is refused at once; a second time, an unknown or malformed id, or another credential’s session: 404', async () => {
    const s = await messagingSetup(app);
    const session = await mintSession(s.api, { user: s.user.id });
    const browser = restClient(app, s.host, session.token);
    expect((await browser.get('/channels')).status).toBe(200);
    const revoked = await s.api.delete(`/sessions/${session.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.body).toBeUndefined();
    const refused = await browser.get('/channels');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(UNAUTHENTICATED);
    const notFound = { status: 'error', message: 'Session not found.' };
    expect(await s.api.delete(`/sessions/${session.id}`)).toMatchObject({ status: 404, body: notFound });
    expect(await s.api.delete('/sessions/0193a2b4-0000-7000-8000-000000000000')).toMatchObject({ status: 404, body: notFound });
    expect(await s.api.delete('/sessions/not-a-uuid')).toMatchObject({ status: 404, body: notFound });
    const sibling = await addChannel(app.db.prisma, s.workspace.id, 'Sibling');
    const other = await mintSession(restClient(app, s.host, sibling.apiKey), { user: s.user.id });
    expect((await s.api.delete(`/sessions/${other.id}`)).status).toBe(404);
    const elsewhere = await messagingSetup(app);
    const foreign = await mintSession(elsewhere.api, { user: elsewhere.user.id });
    expect((await s.api.delete(`/sessions/${foreign.id}`)).status).toBe(404);
    expect((await restClient(app, elsewhere.host, foreign.token).get('/channels')).status).toBe(200);
  });

  it('?user=: 200 {"data":{"revoked":N}} over the sessions the credential sees; 422 without or with an unknown user', async () => {
    const s = await messagingSetup(app);
    const sessions = [await mintSession(s.api, { user: s.user.id }), await mintSession(s.api, { user: s.user.email })];
    const sibling = await addChannel(app.db.prisma, s.workspace.id, 'Sibling');
    const kept = await mintSession(restClient(app, s.host, sibling.apiKey), { user: s.user.id });
    const revoked = await s.api.delete(`/sessions?user=${encodeURIComponent(s.user.email)}`);
    expect(revoked).toMatchObject({ status: 200, body: { data: { revoked: 2 } } });
    expect(Object.keys(revoked.body)).toEqual(['data']);
    for (const session of sessions) expect((await restClient(app, s.host, session.token).get('/channels')).status).toBe(401);
    expect((await restClient(app, s.host, kept.token).get('/channels')).status).toBe(200);
    expect((await s.api.delete(`/sessions?user=${s.user.id}`)).body).toEqual({ data: { revoked: 0 } });
    const missing = await s.api.delete('/sessions');
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors)).toEqual(['user']);
    const unknown = await s.api.delete('/sessions?user=nobody@example.com');
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.errors)).toEqual(['user']);
  });
});

describe('admin commands', () => {
  it('session:list --hostname lists the workspace’s live sessions without tokens; session:revoke --id and --user revoke them', async () => {
    const s = await messagingSetup(app);
    const sibling = await addChannel(app.db.prisma, s.workspace.id, 'Sibling');
    const a = await mintSession(s.api, { user: s.user.id });
    const b = await mintSession(restClient(app, s.host, sibling.apiKey), { user: s.user.id });
    const listed = await runAdminOn(app.db, ['session:list', '--hostname', s.host]);
    expect(listed.code).toBe(0);
    const { token: _a, ...viewA } = a;
    const { token: _b, ...viewB } = b;
    expect(listed.json).toEqual({ sessions: [viewB, viewA] });
    expect(listed.stdout).not.toContain('cst_');

    expect(await runAdminOn(app.db, ['session:revoke', '--id', a.id])).toMatchObject({ code: 0, json: { revoked: 1 } });
    expect((await restClient(app, s.host, a.token).get('/channels')).status).toBe(401);
    const again = await runAdminOn(app.db, ['session:revoke', '--id', a.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: No live session has id/);

    expect(await runAdminOn(app.db, ['session:revoke', '--user', s.user.email, '--hostname', s.host])).toMatchObject({ code: 0, json: { revoked: 1 } });
    expect((await restClient(app, s.host, b.token).get('/channels')).status).toBe(401);
    expect((await runAdminOn(app.db, ['session:list', '--hostname', s.host])).json).toEqual({ sessions: [] });

    expect((await runAdminOn(app.db, ['session:revoke'])).code).toBe(2);
    expect((await runAdminOn(app.db, ['session:revoke', '--id', a.id, '--user', s.user.id])).code).toBe(2);
    expect((await runAdminOn(app.db, ['session:revoke', '--user', 'nobody@example.com'])).code).toBe(1);
  });

  it('token:revoke revokes the sessions the token minted', async () => {
    const s = await messagingSetup(app);
    const key = await issueChannelKey(app.db.prisma, s.channel);
    const session = await mintSession(restClient(app, s.host, key.token), { user: s.user.id });
    const browser = restClient(app, s.host, session.token);
    expect((await browser.get('/channels')).status).toBe(200);
    expect((await runAdminOn(app.db, ['token:revoke', '--token', key.token])).json).toEqual({ revoked: true });
    // Without Redis the app hears nothing of the command: its copy of the session lapses within AUTH_CACHE_MS.
    const deadline = Date.now() + app.env.AUTH_CACHE_MS + 1000;
    while ((await browser.get('/channels')).status !== 401) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await app.db.prisma.accessToken.findUniqueOrThrow({ where: { id: session.id } })).toMatchObject({ revokedAt: expect.any(Date) });
    expect((await app.fetch(s.host, '/api/connect/channels', { headers: bearer(s.apiKey) })).status).toBe(200);
  });
});
