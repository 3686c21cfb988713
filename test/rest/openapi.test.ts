import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_ROUTES } from '../../src/app.js';
import { routeFailures } from '../../src/rest/openapi.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
import { checkAgainstDocument, document } from '../helpers/openapi.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
});
afterAll(() => app.close());

const HOST = 'openapi.test';

describe('GET /api/connect/openapi.json', () => {
  it('answers the document without credentials, whatever the host, and is never rate limited', async () => {
    for (let i = 0; i < 4; i++) {
      const response = await app.fetch(i % 2 ? HOST : 'unknown.example', '/api/connect/openapi.json');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.has('ratelimit-limit')).toBe(false);
      expect(await response.json()).toEqual(JSON.parse(JSON.stringify(document)));
    }
    const head = await app.fetch(HOST, '/api/connect/openapi.json', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const response = await app.fetch(HOST, '/api/connect/openapi.json');
    const validator = new Validator();
    const result = await validator.validate(await response.json());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });
});

describe('the document covers the API', () => {
  const routes = DOCUMENTED_ROUTES.rest;
  const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  );

  it('has exactly the routes the server serves, each with a unique operationId', () => {
    expect(documented.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
      [
        ...routes.map((route) => `${route.method} /api/connect${route.path}`),
        ...DOCUMENTED_ROUTES.webhooks.map((route) => `${route.method} ${route.path}`),
      ]
        .map((route) => route.replace(/:(\w+)/g, '{$1}'))
        .sort(),
    );
    const ids = documented.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists for each operation its success and every failure it can answer, with a body schema for each', () => {
    for (const route of routes) {
      const operation = document.paths[`/api/connect${route.path.replace(/:(\w+)/g, '{$1}')}`]![route.method.toLowerCase()]!;
      const statuses = Object.keys(operation.responses).map(Number);
      expect(statuses, route.operationId).toEqual(
        [...Object.keys(route.responses).map(Number), ...routeFailures(route)].sort((a, b) => a - b),
      );
      for (const status of [401, 429, 500, 503]) expect(statuses, `${route.operationId} ${status}`).toContain(status);
      if (route.body) for (const status of [400, 413, 422]) expect(statuses, `${route.operationId} ${status}`).toContain(status);
      if (route.path.includes(':')) expect(statuses, `${route.operationId} 404`).toContain(404);
    }
    expect(Object.keys(document.components.responses)).toEqual(expect.arrayContaining(['MethodNotAllowed', 'NotFound']));
  });

  it('describes request bodies field by field, as the schemas that parse them accept them', () => {
    const body = (path: string, method: string) =>
      (document.paths[path]![method] as unknown as { requestBody: { content: { 'application/json': { schema: any } } } }).requestBody.content[
        'application/json'
      ].schema;
    const update = body('/api/connect/contacts/{contact}', 'patch');
    expect(Object.keys(update.properties)).toEqual(['name', 'email', 'phone']);
    expect(update.properties.name).toMatchObject({ type: 'string', minLength: 2, maxLength: 255 });
    expect(update.properties.email.anyOf).toEqual(expect.arrayContaining([{ type: 'null' }, expect.objectContaining({ format: 'email' })]));
    const send = body('/api/connect/messages', 'post');
    expect(Object.keys(send.properties)).toEqual(
      expect.arrayContaining(['to', 'contact', 'sender', 'from', 'type', 'message', 'is_encrypted', 'silent', 'template', 'media_urls']),
    );
    expect(JSON.stringify(send.properties.to)).toContain('"format":"uuid"');
    expect(body('/api/connect/contacts', 'post').required).toEqual(['name']);
  });
});

describe('every REST answer of the suite is checked against the document', () => {
  const url = (path: string) => new URL(`http://${HOST}/api/connect${path}`);
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  const contact = {
    id: '0190a3c2-1b2c-7d3e-8f40-123456789abc',
    name: 'Ada',
    email: null,
    phoneNumber: '+31612345678',
    isGroup: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    optOuts: [],
  };

  it('accepts an answer as documented', async () => {
    await expect(checkAgainstDocument('GET', url(`/contacts/${contact.id}`), answer(200, { data: { contact } }))).resolves.toBeUndefined();
  });

  it('refuses a body that drifted, a status not listed, a missing documented header, and unknown paths answered otherwise than 404', async () => {
    const { isGroup: _, ...withoutIsGroup } = contact;
    await expect(checkAgainstDocument('GET', url(`/contacts/${contact.id}`), answer(200, { data: { contact: withoutIsGroup } }))).rejects.toThrow(
      /isGroup/,
    );
    await expect(checkAgainstDocument('GET', url(`/contacts/${contact.id}`), answer(200, { data: { contact: { ...contact, extra: 1 } } }))).rejects.toThrow(
      /additional/,
    );
    await expect(checkAgainstDocument('GET', url('/contacts'), answer(409, { status: 'error', message: 'x' }))).rejects.toThrow(/does not list/);
    await expect(checkAgainstDocument('GET', url('/channels'), answer(401, { status: 'error', message: 'Unauthenticated.' }))).rejects.toThrow(
      /WWW-Authenticate/,
    );
    await expect(checkAgainstDocument('GET', url('/nowhere'), answer(200, {}))).rejects.toThrow(/unknown path/);
    await expect(checkAgainstDocument('DELETE', url('/contacts'), answer(404, { status: 'error', message: 'x' }))).rejects.toThrow(/not 405/);
    await expect(checkAgainstDocument('POST', url('/openapi.json'), answer(404, { status: 'error', message: 'x' }))).rejects.toThrow(/not 405/);
  });

  it('finds the operation the router serves: decoded paths, a literal path without the method, empty segments', async () => {
    const notFound = answer(404, { status: 'error', message: 'Contact not found.' });
    // PATCH /contacts/find is updateContact on the id "find".
    await expect(checkAgainstDocument('patch', url('/contacts/find'), notFound.clone())).resolves.toBeUndefined();
    // %66ind is "find": the findContact route, whose 422 getContact does not list.
    const refused = answer(422, { message: 'm', errors: { email: ['m'] } });
    await expect(checkAgainstDocument('GET', url('/contacts/%66ind'), refused)).resolves.toBeUndefined();
    await expect(checkAgainstDocument('GET', url('/conversations//close'), answer(405, { status: 'error', message: 'Method not allowed.' }, { allow: 'POST' }))).resolves.toBeUndefined();
  });

  it('holds real answers, failures included, through the test app', async () => {
    const { apiKey, host } = await workspaceWithChannel(app.db.prisma);
    const get = (path: string, init: RequestInit = {}) => app.fetch(host, `/api/connect${path}`, { ...init, headers: { ...bearer(apiKey), ...init.headers } });
    expect((await get('/contacts?limit=0')).status).toBe(422);
    expect((await get('/contacts', { method: 'DELETE' })).status).toBe(405);
    expect((await get('/contacts/not-a-uuid')).status).toBe(404);
    expect((await app.fetch(host, '/api/connect/nowhere')).status).toBe(404);
    expect((await app.fetch(host, '/api/connect/openapi.json', { method: 'POST' })).headers.get('allow')).toBe('GET, HEAD');
    expect((await app.fetch(host, '/api/connect/openapi.json/')).status).toBe(200);
    expect((await get('/channels')).status).toBe(429);
  });
});
