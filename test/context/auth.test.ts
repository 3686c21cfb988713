import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addChannel, bearer, createConnection, issueChannelKey, uniqueHost, workspaceWithChannel } from '../helpers/factories.js';
import { revokeToken } from '../../src/modules/credentials/credentials.service.js';
import { deactivateChannel } from '../../src/modules/channels/channels.service.js';
import { hashToken } from '../../src/lib/tokens.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const UNAUTHENTICATED = { status: 'error', message: 'Unauthenticated.' };

async function channels(host: string, headers: Record<string, string>) {
  const response = await app.fetch(host, '/api/connect/channels', { headers });
  return { status: response.status, body: await response.json(), response };
}

async function viewerChannel(host: string, headers: Record<string, string>) {
  const response = await app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ viewer { channel { id } } }' }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function expect401(host: string, headers: Record<string, string>, expected: object = UNAUTHENTICATED) {
  const { status, body, response } = await channels(host, headers);
  expect(status).toBe(401);
  expect(body).toEqual(expected);
  expect(response.headers.get('www-authenticate')).toBe('Bearer');
}

/** An expired credential says so, so that a client knows to refresh it (docs/browser-apps.md). */
const TOKEN_EXPIRED = { ...UNAUTHENTICATED, code: 'token_expired' };

describe('channel API keys', () => {
  it('authenticates a valid key for its workspace host and lists its channel', async () => {
    const { host, apiKey, channel } = await workspaceWithChannel(app.db.prisma);
    const { status, body } = await channels(host, bearer(apiKey));
    expect(status).toBe(200);
    expect(body.data).toEqual([{ id: channel.id, name: 'Main channel', type: 'whatsapp', status: 'active' }]);
  });

  it('treats the Host header case-insensitively and ignores its port', async () => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    expect((await channels(`${host.toUpperCase()}:8080`, bearer(apiKey))).status).toBe(200);
  });

  it('rejects a missing Authorization header', async () => {
    const { host } = await workspaceWithChannel(app.db.prisma);
    await expect401(host, {});
  });

  it.each([
    ['another scheme', (key: string) => `Token ${key}`],
    ['no token', () => 'Bearer'],
    ['two tokens', (key: string) => `Bearer ${key} ${key}`],
    ['a token without scheme', (key: string) => key],
  ])('rejects a malformed header: %s', async (_label, header) => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    await expect401(host, { authorization: header(apiKey) });
  });

  it('rejects an unknown token', async () => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    await expect401(host, bearer(`${apiKey.slice(0, -4)}AAAA`));
  });

  it('rejects an expired key and accepts one that has not expired yet', async () => {
    const { host, channel } = await workspaceWithChannel(app.db.prisma);
    const live = await issueChannelKey(app.db.prisma, channel, 3600);
    const expired = await issueChannelKey(app.db.prisma, channel, 3600);
    await app.db.prisma.accessToken.update({
      where: { tokenHash: hashToken(expired.token) },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await channels(host, bearer(live.token))).status).toBe(200);
    await expect401(host, bearer(expired.token), TOKEN_EXPIRED);
  });

  it('rejects a revoked key, while other keys of the channel keep working', async () => {
    const { host, channel, apiKey } = await workspaceWithChannel(app.db.prisma);
    const second = await issueChannelKey(app.db.prisma, channel);
    await revokeToken(app.db.prisma, apiKey);
    await expect401(host, bearer(apiKey));
    expect((await channels(host, bearer(second.token))).status).toBe(200);
  });

  it('rejects the key of a deactivated channel', async () => {
    const { host, channel, apiKey } = await workspaceWithChannel(app.db.prisma);
    await deactivateChannel(app.db.prisma, channel.id);
    await expect401(host, bearer(apiKey));
  });

  it("rejects a key sent to another workspace's host", async () => {
    const first = await workspaceWithChannel(app.db.prisma);
    const second = await workspaceWithChannel(app.db.prisma);
    await expect401(second.host, bearer(first.apiKey));
  });

  it('rejects an unknown host the same way as a bad token', async () => {
    const { apiKey } = await workspaceWithChannel(app.db.prisma);
    await expect401(uniqueHost('unknown'), bearer(apiKey));
  });

  it('accepts X-Channel-Uuid naming its own channel and rejects any other value', async () => {
    const { host, channel, apiKey, workspace } = await workspaceWithChannel(app.db.prisma);
    const other = await addChannel(app.db.prisma, workspace.id, 'Other');
    expect((await viewerChannel(host, { ...bearer(apiKey), 'x-channel-uuid': channel.id.toUpperCase() })).body.data).toEqual({
      viewer: { channel: { id: channel.id } },
    });
    await expect401(host, { ...bearer(apiKey), 'x-channel-uuid': other.channel.id });
    await expect401(host, { ...bearer(apiKey), 'x-channel-uuid': 'not-a-uuid' });
  });
});

describe('connection tokens', () => {
  async function connectionOver(count: number) {
    const base = await workspaceWithChannel(app.db.prisma, 'Channel 1');
    const channelIds = [base.channel.id];
    for (let i = 2; i <= count; i++) channelIds.push((await addChannel(app.db.prisma, base.workspace.id, `Channel ${i}`)).channel.id);
    const connection = await createConnection(app.db.prisma, { workspaceId: base.workspace.id, name: 'CRM', channelIds });
    return { ...base, channelIds, token: connection.token };
  }

  it('rejects a connection with no active channel', async () => {
    const { host, token, channelIds } = await connectionOver(1);
    await deactivateChannel(app.db.prisma, channelIds[0]!);
    await expect401(host, bearer(token));
  });

  it('rejects a connection that was never linked to a channel', async () => {
    const { host, workspace } = await workspaceWithChannel(app.db.prisma);
    const { token } = await createConnection(app.db.prisma, { workspaceId: workspace.id, name: 'Empty', channelIds: [] });
    await expect401(host, bearer(token));
  });

  it('acts as its only channel without X-Channel-Uuid', async () => {
    const { host, token, channelIds } = await connectionOver(1);
    const { status, body } = await viewerChannel(host, bearer(token));
    expect(status).toBe(200);
    expect(body.data.viewer.channel.id).toBe(channelIds[0]);
  });

  it('with one channel, accepts its UUID in X-Channel-Uuid and rejects another', async () => {
    const { host, token, channelIds, workspace } = await connectionOver(1);
    const unlinked = await addChannel(app.db.prisma, workspace.id, 'Unlinked');
    expect((await viewerChannel(host, { ...bearer(token), 'x-channel-uuid': channelIds[0]! })).status).toBe(200);
    await expect401(host, { ...bearer(token), 'x-channel-uuid': unlinked.channel.id });
  });

  it('with several channels, needs X-Channel-Uuid to act: a GraphQL error naming the header', async () => {
    const { host, token } = await connectionOver(3);
    const { status, body } = await viewerChannel(host, bearer(token));
    // A field error: the GraphQL response itself is well-formed, so HTTP 200.
    expect(status).toBe(200);
    expect(body.data).toEqual({ viewer: null });
    expect(body.errors[0].extensions.code).toBe('CHANNEL_REQUIRED');
    expect(body.errors[0].message).toContain('X-Channel-Uuid');
  });

  it('with several channels, acts as the channel named in X-Channel-Uuid', async () => {
    const { host, token, channelIds } = await connectionOver(3);
    const { status, body } = await viewerChannel(host, { ...bearer(token), 'x-channel-uuid': channelIds[1]! });
    expect(status).toBe(200);
    expect(body.data.viewer.channel.id).toBe(channelIds[1]);
  });

  it('with several channels, rejects an X-Channel-Uuid naming a channel outside the connection or inactive', async () => {
    const { host, token, channelIds, workspace } = await connectionOver(3);
    const unlinked = await addChannel(app.db.prisma, workspace.id, 'Unlinked');
    await deactivateChannel(app.db.prisma, channelIds[2]!);
    await expect401(host, { ...bearer(token), 'x-channel-uuid': unlinked.channel.id });
    await expect401(host, { ...bearer(token), 'x-channel-uuid': channelIds[2]! });
    await expect401(host, { ...bearer(token), 'x-channel-uuid': '' });
  });

  it('lists every active channel on GET /channels without X-Channel-Uuid', async () => {
    const { host, token, channelIds } = await connectionOver(3);
    await deactivateChannel(app.db.prisma, channelIds[1]!);
    const { status, body } = await channels(host, bearer(token));
    expect(status).toBe(200);
    // Newest first, like every collection.
    expect(body.data.map((c: { id: string }) => c.id)).toEqual([channelIds[2], channelIds[0]]);
    expect(body.meta).toEqual({ per_page: 25, next_cursor: null, has_more: false });
  });

  it('rejects an expired or revoked connection token', async () => {
    const { host, workspace, channel } = await workspaceWithChannel(app.db.prisma);
    const expiring = await createConnection(app.db.prisma, {
      workspaceId: workspace.id,
      name: 'Expiring',
      channelIds: [channel.id],
      expiresInSeconds: 60,
    });
    await app.db.prisma.accessToken.update({
      where: { tokenHash: hashToken(expiring.token) },
      data: { expiresAt: new Date(Date.now() - 1) },
    });
    await expect401(host, bearer(expiring.token), TOKEN_EXPIRED);
    const revoked = await createConnection(app.db.prisma, { workspaceId: workspace.id, name: 'Revoked', channelIds: [channel.id] });
    await revokeToken(app.db.prisma, revoked.token);
    await expect401(host, bearer(revoked.token));
  });
});

describe('GraphQL authentication', () => {
  it('answers HTTP 401 with extensions.code UNAUTHENTICATED', async () => {
    const { host } = await workspaceWithChannel(app.db.prisma);
    const response = await app.fetch(host, '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer cak_nope' },
      body: JSON.stringify({ query: '{ viewer { workspace { id } } }' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    const body = (await response.json()) as any;
    expect(body.errors).toEqual([{ message: 'Unauthenticated.', extensions: { code: 'UNAUTHENTICATED' } }]);
    expect(body.data).toBeUndefined();
  });
});

describe('secrets', () => {
  it('never writes a token to the logs', async () => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    await channels(host, bearer(apiKey));
    await channels(host, bearer(`${apiKey}x`));
    await viewerChannel(host, bearer(apiKey));
    const logs = app.logs.join('');
    expect(logs).toContain('/api/connect/channels');
    expect(logs).not.toContain(apiKey);
    expect(logs).not.toContain(apiKey.slice(4));
  });
});
