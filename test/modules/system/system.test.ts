import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createApp } from '../../../src/app.js';
import { openDatabase } from '../../../src/db/database.js';
import { loadEnv, seedDemoEnabled, tracingEnabled } from '../../../src/env.js';
import { createTestApp, dbKind, onPostgres, type TestApp } from '../../helpers/app.js';
import { bearer, workspaceWithChannel } from '../../helpers/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

describe('probes', () => {
  it('answers /healthz and /readyz without credentials', async () => {
    const health = await app.fetch('anything.test', '/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await app.fetch('anything.test', '/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', database: dbKind });
  });

  it.runIf(onPostgres)('answers /readyz 503 within 2 seconds while the database refuses or never answers', async () => {
    // A "database" that accepts connections and then says nothing: the slow way to be down.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      for (const url of ['postgres://postgres@127.0.0.1:1/nowhere', `postgres://postgres@127.0.0.1:${port}/silent`]) {
        const db = await openDatabase({ databaseUrl: url, poolSize: 1 });
        const yoga = createApp({ db, env: loadEnv({ NODE_ENV: 'test' }), logger: pino({ level: 'silent' }) });
        try {
          const started = Date.now();
          const response = await yoga.fetch('http://localhost/readyz');
          expect(Date.now() - started, url).toBeLessThan(2000);
          expect(response.status).toBe(503);
          expect(await response.json()).toEqual({ status: 'error', message: 'Service unavailable' });
        } finally {
          await yoga.dispose();
          await db.close();
        }
      }
    } finally {
      silent.close();
    }
  });
});

describe('routing', () => {
  it('answers unknown paths with a JSON 404', async () => {
    for (const path of ['/nope', '/api/connect', '/api/connect/nope', '/api/connect/channels/x/y']) {
      const response = await app.fetch('x.test', path);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toEqual({ status: 'error', message: 'Route not found.' });
    }
  });

  it('answers a known path with the wrong method with 405', async () => {
    const { host, apiKey } = await workspaceWithChannel(app.db.prisma);
    const response = await app.fetch(host, '/api/connect/channels', { method: 'DELETE', headers: bearer(apiKey) });
    expect(response.status).toBe(405);
    expect(await response.json()).toEqual({ status: 'error', message: 'Method not allowed.' });
  });
});

describe('GraphQL introspection', () => {
  const query = JSON.stringify({ query: '{ __schema { queryType { name } } }' });

  async function introspect(overrides: Record<string, string>) {
    const local = await createTestApp(overrides);
    try {
      const { host, apiKey } = await workspaceWithChannel(local.db.prisma);
      const response = await local.fetch(host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        body: query,
      });
      return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
    } finally {
      await local.close();
    }
  }

  it('is on outside production, off in production, and GRAPHQL_INTROSPECTION overrides both', async () => {
    expect((await introspect({})).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    const production = await introspect({ NODE_ENV: 'production' });
    expect(production.data).toBeUndefined();
    expect(production.errors?.[0]?.message).toMatch(/introspection/i);
    expect((await introspect({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: '1' })).data).toBeDefined();
    expect((await introspect({ GRAPHQL_INTROSPECTION: '0' })).data).toBeUndefined();
    // Four apps, each on a database of its own.
  }, 120_000);
});

describe('configuration', () => {
  it('reports every invalid variable with a clear message, on one line', () => {
    const load = () => loadEnv({ PORT: 'abc', DATABASE_URL: 'mysql://x', MIGRATE_ON_START: 'maybe', LOG_LEVEL: 'loud' });
    expect(load).toThrow(
      'invalid configuration: DATABASE_URL: expected a postgres:// or postgresql:// URL; PORT: expected a port number from 0 to 65535; ' +
        'MIGRATE_ON_START: expected 1 or 0 (true/false, yes/no, on/off); LOG_LEVEL: expected fatal, error, warn, info, debug, trace or silent',
    );
  });

  // Each numeric setting with its bounds; every kind of bad value gets the message that states them.
  const numeric: [name: string, min: number, max: number, rule: string][] = [
    ['PORT', 0, 65535, 'a port number'],
    ['BODY_LIMIT_BYTES', 1, 1073741824, 'a whole number of bytes'],
    ['DB_CONNECT_TIMEOUT_S', 0, 3600, 'a whole number of seconds'],
    ['DB_POOL_SIZE', 1, 200, 'a whole number'],
    ['DB_STATEMENT_TIMEOUT_MS', 100, 3600000, 'a whole number of milliseconds'],
    ['DB_TRANSACTION_TIMEOUT_MS', 100, 3600000, 'a whole number of milliseconds'],
    ['DELIVERY_POLL_MS', 10, 3600000, 'a whole number of milliseconds'],
    ['DELIVERY_LEASE_MS', 100, 86400000, 'a whole number of milliseconds'],
    ['DELIVERY_BACKOFF_MS', 1, 86400000, 'a whole number of milliseconds'],
    ['DELIVERY_TIMEOUT_MS', 100, 600000, 'a whole number of milliseconds'],
  ];

  it.each(numeric)('states the bounds of %s in its message', (name, min, max, rule) => {
    const message = `invalid configuration: ${name}: expected ${rule} from ${min} to ${max}`;
    for (const bad of [String(max + 1), '1.5', 'many', '-1', '1e3', ...(min > 0 ? [String(min - 1)] : [])]) {
      expect(() => loadEnv({ [name]: bad }), `${name}=${bad}`).toThrow(message);
    }
    expect(loadEnv({ [name]: String(min) })).toHaveProperty(name, min);
    expect(loadEnv({ [name]: ` ${max} ` })).toHaveProperty(name, max);
  });

  it('seeds the demo by default on the embedded database only, and SEED_DEMO decides on both', () => {
    expect(seedDemoEnabled(loadEnv({}), 'pglite')).toBe(true);
    expect(seedDemoEnabled(loadEnv({}), 'postgres')).toBe(false);
    for (const kind of ['pglite', 'postgres'] as const) {
      expect(seedDemoEnabled(loadEnv({ SEED_DEMO: '0' }), kind)).toBe(false);
      expect(seedDemoEnabled(loadEnv({ SEED_DEMO: '1' }), kind)).toBe(true);
    }
  });

  it('traces only with an OTLP endpoint over HTTP, and not when the SDK is disabled', () => {
    expect(tracingEnabled(loadEnv({}))).toBe(false);
    expect(tracingEnabled(loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }))).toBe(true);
    expect(tracingEnabled(loadEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces' }))).toBe(true);
    expect(tracingEnabled(loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }))).toBe(false);
    expect(() => loadEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow('invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL: expected http/protobuf or http/json (OTLP over HTTP)');
    expect(() => loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow('OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL');
  });

  it('treats empty variables as unset', () => {
    expect(loadEnv({ DATABASE_URL: '', PORT: '' })).toMatchObject({ PORT: 4000, PGLITE_DIR: './.data/pglite' });
    expect(loadEnv({}).DATABASE_URL).toBeUndefined();
  });
});
