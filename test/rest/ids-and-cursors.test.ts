import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { edgeSetup } from '../helpers/edges.js';
import { bearer } from '../helpers/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const setup = () => edgeSetup(app);

describe('path ids of any length', () => {
  const long = 'a'.repeat(150);
  it('are 401 without credentials and the resource 404 with them', async () => {
    const s = await setup();
    for (const [method, path, message] of [
      ['PATCH', `/contacts/${long}`, 'Contact not found.'],
      ['GET', `/contacts/${long}`, 'Contact not found.'],
      ['GET', `/conversations/${long}`, 'Conversation not found.'],
      ['POST', `/conversations/${long}/close`, 'Conversation not found.'],
      ['GET', `/contacts/${'b'.repeat(5000)}`, 'Contact not found.'],
    ] as const) {
      const init = method === 'PATCH' ? { body: JSON.stringify({ name: 'Ann' }), headers: { 'content-type': 'application/json' } } : {};
      const anonymous = await app.fetch(s.host, `/api/connect${path}`, { method, ...init });
      expect(anonymous.status, `${method} ${path.slice(0, 30)}`).toBe(401);
      const result = await app.fetch(s.host, `/api/connect${path}`, { method, ...init, headers: { ...init.headers, ...bearer(s.apiKey) } });
      expect(result.status).toBe(404);
      expect(await result.json()).toEqual({ status: 'error', message });
    }
  });
});

describe('cursors', () => {
  it('a forged cursor with a date PostgreSQL cannot hold is a 422 on cursor (GraphQL: BAD_USER_INPUT), never a 500', async () => {
    const s = await setup();
    for (const at of ['-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '1969-12-31T23:59:59.999Z']) {
      const cursor = Buffer.from(`${at}|00000000-0000-4000-8000-000000000000`).toString('base64url');
      for (const path of ['/contacts', '/messages', '/conversations', '/templates']) {
        const result = await s.api.get(`${path}?cursor=${cursor}`);
        expect(result.status, `${path} ${at}`).toBe(422);
        expect(result.body.errors).toEqual({ cursor: ['The cursor is invalid.'] });
      }
      const gql = await s.gql('query($after: String) { contacts(after: $after) { edges { node { id } } } }', { after: cursor });
      expect(gql.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });
});
