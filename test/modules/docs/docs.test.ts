import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

const packageDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const IMMUTABLE = 'public, max-age=31536000, immutable';

let app: TestApp;
beforeAll(async () => {
  // Production: unlike GraphiQL, the reference page is served there too.
  app = await createTestApp({ NODE_ENV: 'production' });
});
afterAll(() => app.close());

/** Any host will do: the page belongs to no workspace and needs no credential. */
const get = (path: string, init?: RequestInit) => app.fetch('anything.test', path, init);

/** The local URLs the page loads, from its <link> and <script> elements. */
function pageAssets(html: string): { stylesheets: string[]; icons: string[]; scripts: string[] } {
  const attr = (pattern: RegExp) => [...html.matchAll(pattern)].map((m) => m[1]!);
  return {
    stylesheets: attr(/<link rel="stylesheet" href="([^"]+)">/g),
    icons: attr(/<link rel="icon"[^>]* href="([^"]+)">/g),
    scripts: attr(/<script src="([^"]+)"><\/script>/g),
  };
}

async function expectNotFound(target: string) {
  const response = await get(target);
  expect(response.status, target).toBe(404);
  expect(response.headers.get('content-type'), target).toBe('application/json; charset=utf-8');
  expect(await response.json(), target).toEqual({ status: 'error', message: 'Route not found.' });
}

describe('GET /docs', () => {
  it('serves the reference page without credentials, at /docs and /docs/', async () => {
    for (const target of ['/docs', '/docs/']) {
      const response = await get(target);
      expect(response.status, target).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const html = await response.text();
      expect(html).toContain('<title>Connect API reference</title>');
      expect(html).toContain('<div id="swagger-ui"></div>');
    }
  });

  it('loads only its own files, by paths from the root, and runs no inline script', async () => {
    const response = await get('/docs');
    const policy = response.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(policy).toContain(directive);
    const html = await response.text();
    const { stylesheets, icons, scripts } = pageAssets(html);
    expect(stylesheets.map((u) => u.split('?')[0])).toEqual(['/docs/swagger-ui.css', '/docs/docs.css']);
    expect(icons.map((u) => u.split('?')[0])).toEqual(['/docs/favicon-32x32.png', '/docs/favicon-16x16.png']);
    expect(scripts.map((u) => u.split('?')[0])).toEqual(['/docs/swagger-ui-bundle.js', '/docs/docs.js']);
    // Every script element has a src: nothing inline for the policy to allow.
    expect(html.match(/<script/g)).toHaveLength(scripts.length);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('points Swagger UI at the OpenAPI document on this server, with no validator and nothing persisted', async () => {
    const { scripts } = pageAssets(await (await get('/docs')).text());
    const init = await (await get(scripts[1]!)).text();
    expect(init).toContain('url: "/api/connect/openapi.json"');
    expect(init).toContain('validatorUrl: "none"');
    expect(init).toContain('persistAuthorization: false');
    expect(init).toContain('queryConfigEnabled: false');
    expect(init).not.toMatch(/https?:/);
    // The document it names is served, without credentials, from the same server.
    const document = await get('/api/connect/openapi.json');
    expect(document.status).toBe(200);
    expect((await document.json()) as { openapi: string }).toMatchObject({ openapi: expect.stringMatching(/^3\.1\./) });
  });

  it("serves the page's assets from swagger-ui-dist with their content types, immutable at the page's URLs", async () => {
    const html = await (await get('/docs')).text();
    const { stylesheets, icons, scripts } = pageAssets(html);
    const expected: Record<string, string> = {
      '/docs/swagger-ui.css': 'text/css; charset=utf-8',
      '/docs/docs.css': 'text/css; charset=utf-8',
      '/docs/favicon-32x32.png': 'image/png',
      '/docs/favicon-16x16.png': 'image/png',
      '/docs/swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
      '/docs/docs.js': 'text/javascript; charset=utf-8',
    };
    for (const url of [...stylesheets, ...icons, ...scripts]) {
      const response = await get(url);
      const name = url.split('?')[0]!;
      expect(response.status, url).toBe(200);
      expect(response.headers.get('content-type'), url).toBe(expected[name]);
      expect(response.headers.get('cache-control'), url).toBe(IMMUTABLE);
      expect(response.headers.get('x-content-type-options'), url).toBe('nosniff');
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.headers.get('content-length'), url).toBe(String(body.byteLength));
      if (!name.startsWith('/docs/docs.')) expect(body.equals(readFileSync(path.join(packageDir, path.basename(name)))), url).toBe(true);
    }
  });

  it('serves an asset at a URL without the current version, but not for keeps', async () => {
    for (const url of ['/docs/swagger-ui-bundle.js', '/docs/swagger-ui-bundle.js?v=0000000000000000']) {
      const response = await get(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('cache-control'), url).toBe('no-cache');
      await response.arrayBuffer();
    }
  });

  it('answers HEAD like GET, without a body', async () => {
    const { scripts } = pageAssets(await (await get('/docs')).text());
    for (const url of ['/docs', '/docs/', scripts[0]!, '/docs/swagger-ui.css']) {
      const [whole, head] = [await get(url), await get(url, { method: 'HEAD' })];
      expect(head.status, url).toBe(200);
      for (const name of ['content-type', 'content-length', 'cache-control', 'content-security-policy']) {
        expect(head.headers.get(name), `${url} ${name}`).toBe(whole.headers.get(name));
      }
      expect(Number(head.headers.get('content-length')), url).toBe((await whole.arrayBuffer()).byteLength);
      expect((await head.arrayBuffer()).byteLength, url).toBe(0);
    }
  });

  it("answers 404 for every other file, the package's own included, and 405 for another method", async () => {
    for (const name of ['index.html', 'swagger-initializer.js', 'swagger-ui.js', 'swagger-ui-bundle.js.map', 'swagger-ui-standalone-preset.js', 'oauth2-redirect.html', 'package.json', 'LICENSE', 'nope', 'SWAGGER-UI.CSS', 'swagger-ui.css/', 'swagger-ui.css.']) {
      await expectNotFound(`/docs/${name}`);
    }
    await expectNotFound('/docs.js');
    await expectNotFound('/docsx');
    // The page is a known path: another method is the one rule's 405.
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const response = await get('/docs', { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow'), method).toBe('GET, HEAD');
    }
  });

  it('answers 404 to path traversal, encoded or not', async () => {
    for (const target of [
      '/docs/../package.json',
      '/docs/%2e%2e/package.json',
      '/docs/..%2fpackage.json',
      '/docs/..%2F..%2F..%2Fpackage.json',
      '/docs/%2e%2e%2f%2e%2e%2fpackage.json',
      '/docs/..%5cpackage.json',
      '/docs/swagger-ui.css/../../package.json',
      '/docs//etc/passwd',
      '/docs/%2fetc%2fpasswd',
      '/docs/swagger-ui.css%00',
      '/docs/swagger-ui.css%00.png',
    ]) {
      await expectNotFound(target);
    }
  });

  it('answers HEAD without a body, and 404 to traversal in the raw request line, on a real socket', async () => {
    // fetch normalises "..": a raw HTTP request sends the path exactly as written.
    const yoga = createApp({ db: app.db, env: app.env, logger: pino({ level: 'silent' }) });
    const server = http.createServer(yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const raw = (target: string, method = 'GET') =>
      new Promise<{ status: number; length: string | undefined; body: string }>((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port, method, path: target, headers: { host: 'anything.test' } }, (response) => {
          let body = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, length: response.headers['content-length'], body }));
        });
        request.on('error', reject).end();
      });
    try {
      const css = await raw('/docs/swagger-ui.css');
      expect(css.status).toBe(200);
      expect(await raw('/docs/swagger-ui.css', 'HEAD')).toEqual({ status: 200, length: css.length, body: '' });
      for (const target of ['/docs/../package.json', '/docs/../../../../etc/passwd', '/docs/..\\package.json', '/docs/%2e%2e/%2e%2e/package.json']) {
        const { status, body } = await raw(target);
        expect(status, target).toBe(404);
        expect(body, target).toBe('{"status":"error","message":"Route not found."}');
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await yoga.dispose();
    }
  });

  it('is counted in /metrics under fixed route labels, never the requested path', async () => {
    await get('/docs/');
    await get('/docs/docs.css?v=whatever');
    await get('/docs/%2e%2e/package.json');
    const text = await (await get('/metrics')).text();
    const routes = new Set(text.split('\n').flatMap((line) => (line.startsWith('connect_http_requests_total{') ? [/route="([^"]*)"/.exec(line)![1]!] : [])));
    expect([...routes].filter((route) => /docs|%2e|\.\./i.test(route)).sort()).toEqual(['GET /docs', 'GET /docs/{asset}']);
  });
});
