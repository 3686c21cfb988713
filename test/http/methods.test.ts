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

describe('405', () => {
  it('carries an Allow header with the methods of the path', async () => {
    const s = await setup();
    const cases: [string, string, string][] = [
      ['DELETE', '/contacts', 'GET, HEAD, POST'],
      ['PUT', '/contacts/00000000-0000-4000-8000-000000000000', 'GET, HEAD, PATCH'],
      ['GET', '/conversations/00000000-0000-4000-8000-000000000000/close', 'POST'],
      ['HEAD', '/conversations/00000000-0000-4000-8000-000000000000/close', 'POST'],
      ['DELETE', '/messages', 'GET, HEAD, POST'],
    ];
    for (const [method, path, allow] of cases) {
      const result = await app.fetch(s.host, `/api/connect${path}`, { method, headers: bearer(s.apiKey) });
      expect(result.status, `${method} ${path}`).toBe(405);
      expect(result.headers.get('allow')).toBe(allow);
    }
  });
});

describe('HEAD', () => {
  it('answers a GET route as GET does, without a body', async () => {
    const s = await setup();
    const get = await app.fetch(s.host, '/api/connect/contacts', { headers: bearer(s.apiKey) });
    const head = await app.fetch(s.host, '/api/connect/contacts', { method: 'HEAD', headers: bearer(s.apiKey) });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
    expect((await app.fetch(s.host, '/api/connect/contacts', { method: 'HEAD' })).status).toBe(401);
  });
});
