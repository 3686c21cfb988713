import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, onPostgres, type TestApp } from '../helpers/app.js';
import { startServer, waitFor } from '../helpers/server-process.js';

/** A GET with an explicit Host header, as a browser sends it for http://localhost:PORT. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('GraphiQL page', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({ NODE_ENV: 'development' });
  });
  afterAll(() => app.close());

  it('is self-contained: no script or stylesheet from another server', async () => {
    const response = await app.fetch('localhost', '/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('YogaGraphiQL.renderYogaGraphiQL');
    expect(html).not.toMatch(/<(script|link)\b[^>]*\b(src|href)=["']?(https?:)?\/\//i);
    expect(html).not.toContain('unpkg.com');
  });

  it('opens on the example operation with an empty Authorization placeholder', async () => {
    const html = await (await app.fetch('localhost', '/graphql', { headers: { accept: 'text/html' } })).text();
    expect(html).toContain('query Example');
    expect(html).toContain(JSON.stringify(JSON.stringify({ Authorization: 'Bearer ' }, null, 2)));
    expect(html).toContain('"shouldPersistHeaders":false');
  });
});

// The first start of the embedded database is where a demo key exists: run the real entry point.
describe.skipIf(onPostgres)('GraphiQL after the first start of the embedded database', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphiql-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('never carries the demo key (or any cak_ token) that the banner printed', async () => {
    const server = startServer({ PGLITE_DIR: path.join(dir, 'pglite') });
    try {
      const base = await server.listening;
      await waitFor(server, /Bearer cak_[\w-]+/);
      const apiKey = /Bearer (cak_[\w-]+)/.exec(server.output())![1]!;
      const page = await get(`${base}/graphql`, { accept: 'text/html', host: `localhost:${new URL(base).port}` });
      expect(page.status).toBe(200);
      expect(page.body).toContain('query Example');
      expect(page.body).not.toContain(apiKey);
      expect(page.body).not.toContain('cak_');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 120_000);
});
