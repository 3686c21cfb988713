import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';

const APP_ORIGIN = 'https://app.example.com';
const ADMIN_ORIGIN = 'https://admin.example.com';
const OTHER_ORIGIN = 'https://evil.example.net';

interface Setup {
  app: TestApp;
  host: string;
  apiKey: string;
}

async function setup(env: Record<string, string>): Promise<Setup> {
  const app = await createTestApp(env);
  const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
  return { app, host, apiKey };
}

/** Every kind of request a browser sends cross-origin, to REST and to GraphQL. */
function requests(s: Setup, origin: string): Record<string, () => Promise<Response>> {
  const auth = { ...bearer(s.apiKey), origin };
  const json = { ...auth, 'content-type': 'application/json' };
  const preflight = (path: string, method: string) =>
    s.app.fetch(s.host, path, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, x-channel-uuid, idempotency-key' },
    });
  return {
    'REST GET': () => s.app.fetch(s.host, '/api/connect/channels', { headers: auth }),
    'REST POST': () =>
      s.app.fetch(s.host, '/api/connect/contacts', { method: 'POST', headers: json, body: JSON.stringify({ name: 'Ann', email: `ann-${crypto.randomUUID()}@example.com` }) }),
    'REST preflight': () => preflight('/api/connect/contacts', 'POST'),
    'REST preflight for PATCH': () => preflight(`/api/connect/contacts/${crypto.randomUUID()}`, 'PATCH'),
    'GraphQL GET': () => s.app.fetch(s.host, '/graphql?query=%7Bviewer%7Bworkspace%7Bname%7D%7D%7D', { headers: auth }),
    'GraphQL POST': () => s.app.fetch(s.host, '/graphql', { method: 'POST', headers: json, body: JSON.stringify({ query: '{ viewer { workspace { name } } }' }) }),
    'GraphQL preflight': () => preflight('/graphql', 'POST'),
  };
}

function corsHeaders(response: Response): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
}

function expectServed(name: string, response: Response) {
  if (name.includes('preflight')) return;
  expect(response.status, name).toBeLessThan(300);
}

describe('CORS without CORS_ORIGINS', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({});
  });
  afterAll(() => s.app.close());

  it('sends no Access-Control-* header on any request, preflight included', async () => {
    for (const [name, send] of Object.entries(requests(s, APP_ORIGIN))) {
      const response = await send();
      expectServed(name, response);
      expect(corsHeaders(response), name).toEqual({});
    }
  });
});

describe('CORS with CORS_ORIGINS listing origins', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({ CORS_ORIGINS: `${APP_ORIGIN}, ${ADMIN_ORIGIN}/` });
  });
  afterAll(() => s.app.close());

  it('answers a preflight with the methods and headers the API takes', async () => {
    for (const [name, send] of Object.entries(requests(s, APP_ORIGIN)).filter(([n]) => n.includes('preflight'))) {
      const response = await send();
      expect(response.status, name).toBe(204);
      const methods = response.headers.get('access-control-allow-methods')!.split(/\s*,\s*/);
      expect(methods, name).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']));
      const headers = response.headers.get('access-control-allow-headers')!.toLowerCase().split(/\s*,\s*/);
      expect(headers, name).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-channel-uuid', 'idempotency-key']));
      expect(Number(response.headers.get('access-control-max-age')), name).toBeGreaterThan(0);
    }
  });

  it('lets a listed origin read the rate-limit and replay headers', async () => {
    const response = await requests(s, APP_ORIGIN)['REST GET']!();
    const exposed = response.headers.get('access-control-expose-headers')!.toLowerCase().split(/\s*,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'idempotent-replayed']));
  });

  it('allows the listed origins, without credentials, and no other origin', async () => {
    for (const origin of [APP_ORIGIN, ADMIN_ORIGIN]) {
      for (const [name, send] of Object.entries(requests(s, origin))) {
        const response = await send();
        expectServed(name, response);
        expect(response.headers.get('access-control-allow-origin'), name).toBe(origin);
        // The API uses no cookies: no answer, preflight or other, allows credentials.
        expect(response.headers.get('access-control-allow-credentials'), name).toBeNull();
        expect(response.headers.get('vary'), name).toMatch(/\bOrigin\b/i);
      }
    }
    for (const [name, send] of Object.entries(requests(s, OTHER_ORIGIN))) {
      const response = await send();
      expectServed(name, response);
      expect(corsHeaders(response), name).toEqual({});
    }
    // A sandboxed frame or a file: page sends the origin "null": never allowed.
    const nullOrigin = await requests(s, 'null')['REST GET']!();
    expect(corsHeaders(nullOrigin)).toEqual({});
    const sameOrigin = await s.app.fetch(s.host, '/api/connect/channels', { headers: bearer(s.apiKey) });
    expect(sameOrigin.status).toBe(200);
    expect(corsHeaders(sameOrigin)).toEqual({});
  });
});

describe('a refused origin', () => {
  it('is logged once per origin per minute, naming CORS_ORIGINS; listed and same-origin requests are not', async () => {
    const s = await setup({ CORS_ORIGINS: APP_ORIGIN });
    try {
      const refusals = (origin: string) =>
        s.app.logs.filter((line) => line.includes('browser request refused for its origin') && line.includes(`"origin":"${origin}"`));
      for (let i = 0; i < 3; i++) {
        for (const send of Object.values(requests(s, OTHER_ORIGIN))) await send();
        await requests(s, 'https://second.example.org')['GraphQL POST']!();
        for (const send of Object.values(requests(s, APP_ORIGIN))) await send();
        await s.app.fetch(s.host, '/api/connect/channels', { headers: { ...bearer(s.apiKey), origin: `http://${s.host}` } });
      }
      expect(refusals(OTHER_ORIGIN)).toHaveLength(1);
      expect(JSON.parse(refusals(OTHER_ORIGIN)[0]!)).toMatchObject({ level: 40, origin: OTHER_ORIGIN, setting: 'CORS_ORIGINS' });
      expect(refusals('https://second.example.org')).toHaveLength(1);
      expect(refusals(APP_ORIGIN)).toHaveLength(0);
      expect(refusals(`http://${s.host}`)).toHaveLength(0);
    } finally {
      await s.app.close();
    }
  });

  it('is logged without CORS_ORIGINS too', async () => {
    const s = await setup({});
    try {
      await requests(s, OTHER_ORIGIN)['REST GET']!();
      await requests(s, OTHER_ORIGIN)['GraphQL preflight']!();
      expect(s.app.logs.filter((line) => line.includes('browser request refused for its origin'))).toHaveLength(1);
    } finally {
      await s.app.close();
    }
  });
});

describe('CORS with a single listed origin', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({ CORS_ORIGINS: APP_ORIGIN });
  });
  afterAll(() => s.app.close());

  it('names no origin to a caller from another one', async () => {
    for (const [name, send] of Object.entries(requests(s, OTHER_ORIGIN))) {
      expect(corsHeaders(await send()), name).toEqual({});
    }
    const allowed = await requests(s, APP_ORIGIN)['GraphQL POST']!();
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });
});

describe('CORS with * in CORS_ORIGINS', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({ CORS_ORIGINS: `*,${APP_ORIGIN}` });
  });
  afterAll(() => s.app.close());

  it('allows any origin, and the listed one, without credentials', async () => {
    for (const [name, send] of Object.entries(requests(s, OTHER_ORIGIN))) {
      const response = await send();
      expectServed(name, response);
      expect(['*', OTHER_ORIGIN], name).toContain(response.headers.get('access-control-allow-origin'));
      expect(response.headers.get('access-control-allow-credentials'), name).toBeNull();
    }
    const listed = await requests(s, APP_ORIGIN)['REST GET']!();
    expect(listed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(listed.headers.get('access-control-allow-credentials')).toBeNull();
  });
});
