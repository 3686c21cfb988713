import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { edgeSetup } from '../helpers/edges.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const setup = () => edgeSetup(app);

describe('the access log', () => {
  it('logs every request with method, path (no query string), status and duration, GraphQL POST included', async () => {
    const s = await setup();
    app.logs.length = 0;
    await s.api.get('/contacts?search=secret-term');
    await s.gql('{ viewer { workspace { id } } }');
    const lines = app.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');
    expect(lines).toEqual([
      expect.objectContaining({ method: 'GET', path: '/api/connect/contacts', status: 200, ms: expect.any(Number) }),
      expect.objectContaining({ method: 'POST', path: '/graphql', status: 200, ms: expect.any(Number) }),
    ]);
    expect(app.logs.join('')).not.toContain('secret-term');
  });
});
