import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayPrefix, generateToken, hashToken, isWellFormedToken } from '../../src/lib/tokens.js';
import { createTestApp, openTestDatabase, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';

let app: TestApp;
const statements: string[] = [];
beforeAll(async () => {
  app = await createTestApp({}, await openTestDatabase({ onQuery: (sql) => statements.push(sql) }));
});
afterAll(() => app.close());

/** Changes one character of the random part, as a typo would. */
function mistype(token: string): string {
  const i = 10;
  return token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
}

describe('tokens carry a checksum', () => {
  it('are a prefix, 40 random base62 characters and a 6-character checksum', () => {
    const tokens = Array.from({ length: 200 }, () => generateToken('cak_'));
    for (const token of tokens) {
      expect(token).toMatch(/^cak_[0-9A-Za-z]{46}$/);
      expect(isWellFormedToken(token)).toBe(true);
      expect(isWellFormedToken(mistype(token))).toBe(false);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(isWellFormedToken(generateToken('cct_'))).toBe(true);
    for (const malformed of ['cak_', 'cak_short', 'xyz_' + generateToken('cak_').slice(4), generateToken('cak_') + 'x', 'Bearer']) {
      expect(isWellFormedToken(malformed), malformed).toBe(false);
    }
  });

  it('a mistyped or malformed token is refused with 401 without a database query', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    expect((await app.fetch(ws.host, '/api/connect/channels', { headers: bearer(ws.apiKey) })).status).toBe(200);
    for (const token of [mistype(ws.apiKey), 'cak_nope', `${ws.apiKey}0`]) {
      statements.length = 0;
      const rest = await app.fetch(ws.host, '/api/connect/channels', { headers: bearer(token) });
      expect(rest.status).toBe(401);
      const graphql = await app.fetch(ws.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ channels { id } }' }),
      });
      expect(graphql.status).toBe(401);
      expect(statements).toEqual([]);
    }
  });

  it('tokens issued before checksums keep working', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    const earlier = `cak_${randomBytes(32).toString('base64url')}`;
    await app.db.prisma.accessToken.create({
      data: { workspaceId: ws.workspace.id, kind: 'channel_key', channelId: ws.channel.id, tokenHash: hashToken(earlier), prefix: displayPrefix(earlier) },
    });
    const result = await app.fetch(ws.host, '/api/connect/channels', { headers: bearer(earlier) });
    expect(result.status).toBe(200);
  });
});
