import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_LINE_LIMIT } from '../../src/http/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { workspaceWithChannel } from '../helpers/factories.js';
import { rawExchange, serveOnPort, type RawExchange, type ServedApp } from '../helpers/real-port.js';

/**
 * Request heads as a client may send them, on the production node:http server and a real port:
 * however malformed, every one gets an HTTP answer below 500 without a stack trace.
 */

let app: TestApp;
let served: ServedApp;
let proxied: ServedApp;
let ws: Awaited<ReturnType<typeof workspaceWithChannel>>;

beforeAll(async () => {
  app = await createTestApp();
  served = await serveOnPort(app.db, app.env);
  proxied = await serveOnPort(app.db, { ...app.env, TRUST_PROXY: true });
  ws = await workspaceWithChannel(app.db.prisma);
});
afterAll(async () => {
  await served.close();
  await proxied.close();
  await app.close();
});

/** A stack frame, an install path or an error class name: what no answer may show. */
const LEAK = /\n\s+at |node_modules|\/work\/|TypeError|RangeError|SyntaxError: /;

function expectClean(result: RawExchange, what: string) {
  expect(result.status, `${what}: ${JSON.stringify(result.head.slice(0, 200))} (${result.ended})`).toBeDefined();
  expect(result.status!, what).toBeLessThan(500);
  expect(`${result.head}\n${result.body}`, what).not.toMatch(LEAK);
}

const get = (target: string, headers: string) => `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`;

/** Host values that are no valid host name (docs/conventions.md). */
const MALFORMED_HOSTS = ['a b', ':4000', ':', 'a,b', 'a, b', '[::1', '[::1', 'example.com:99999', 'example.com:abc', 'exa mple.com:80', 'a/b', 'user@host', 'ex%61mple.com', '[zz::1]', '..', 'a..b', '-a.example',
  // Of a host name's form, but refused by the URL parser: an IDNA label that decodes to nothing valid, a name read as a bad IPv4 address.
  'xn--pi-bma.edges.test', 'XN--PI-BMA.edges.test', '1.2.3.256', 'edges.test.123'];

describe('a Host that is no valid host name', () => {
  for (const host of MALFORMED_HOSTS) {
    it(`${JSON.stringify(host)}: 401 on the API, normal answers on probes, metrics and docs`, async () => {
      const auth = `Authorization: Bearer ${ws.apiKey}\r\n`;
      const api = await rawExchange(served.port, get('/api/connect/channels', `Host: ${host}\r\n${auth}`));
      expectClean(api, 'api');
      expect(api.status).toBe(401);
      expect(JSON.parse(api.body)).toEqual({ status: 'error', message: 'Unauthenticated.' });
      expect(api.head.toLowerCase()).toContain('www-authenticate: bearer');
      const query = '{"query":"{ viewer { workspace { id } } }"}';
      const graphql = await rawExchange(
        served.port,
        `POST /graphql HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nContent-Length: ${query.length}\r\nConnection: close\r\n\r\n${query}`,
      );
      expect(graphql.status).toBe(401);
      expect(graphql.body).toContain('UNAUTHENTICATED');
      for (const [target, status, contains] of [
        ['/healthz', 200, '"ok"'],
        ['/readyz', 200, '"ok"'],
        ['/metrics', 200, 'http_requests'],
        ['/docs', 200, '<html'],
        ['/api/connect/openapi.json', 200, '"openapi"'],
      ] as const) {
        const result = await rawExchange(served.port, get(target, `Host: ${host}\r\n`));
        expectClean(result, target);
        expect(result.status, target).toBe(status);
        expect(result.body, target).toContain(contains);
      }
    });
  }

  it('behind a trusted proxy, a malformed X-Forwarded-Host names no workspace either, whatever the Host', async () => {
    const auth = `Authorization: Bearer ${ws.apiKey}\r\n`;
    const good = await rawExchange(proxied.port, get('/api/connect/channels', `Host: 127.0.0.1\r\nX-Forwarded-Host: ${ws.host}\r\n${auth}`));
    expect(good.status).toBe(200);
    for (const forwarded of ['a b', ':443', `${ws.host}:99999`, `[${ws.host}`]) {
      const result = await rawExchange(proxied.port, get('/api/connect/channels', `Host: ${ws.host}\r\nX-Forwarded-Host: ${forwarded}\r\n${auth}`));
      expectClean(result, forwarded);
      expect(result.status, forwarded).toBe(401);
    }
  });

  it('a request target in absolute form names its host', async () => {
    const auth = `Authorization: Bearer ${ws.apiKey}\r\n`;
    const result = await rawExchange(served.port, get(`http://${ws.host}/api/connect/channels`, `Host: other.test\r\n${auth}`));
    expect(result.status, result.body).toBe(200);
    const refused = await rawExchange(served.port, get('http://a b/api/connect/channels', `Host: ${ws.host}\r\n${auth}`));
    expectClean(refused, 'absolute form with a bad host');
  });
});

describe('path ids up to the request-line limit', () => {
  const auth = () => `Host: ${ws.host}\r\nAuthorization: Bearer ${ws.apiKey}\r\n`;

  it('reach their route: a 404 for the resource, however long the id', async () => {
    for (const length of [36, 1000, 10_000, REQUEST_LINE_LIMIT - 100]) {
      const result = await rawExchange(served.port, get(`/api/connect/contacts/${'a'.repeat(length)}`, auth()));
      expect(result.status, `id of ${length}`).toBe(404);
      expect(JSON.parse(result.body)).toEqual({ status: 'error', message: 'Contact not found.' });
    }
  });

  it('beyond it: 414 and a closed connection, never a reset, every time', async () => {
    for (const length of [REQUEST_LINE_LIMIT + 10, 40_000, 60_000, 200_000]) {
      for (let round = 0; round < 5; round++) {
        const result = await rawExchange(served.port, get(`/api/connect/contacts/${'a'.repeat(length)}`, auth()));
        expect(result.ended, `id of ${length}`).toBe('closed');
        expect(result.status, `id of ${length}`).toBe(414);
        expect(JSON.parse(result.body)).toEqual({ status: 'error', message: 'Request line too long.' });
      }
    }
  });

  it('headers over the head limit: 431, read and answered', async () => {
    const result = await rawExchange(served.port, get('/healthz', `Host: ${ws.host}\r\nX-Big: ${'b'.repeat(80_000)}\r\n`));
    expect(result.ended).toBe('closed');
    expect(result.status).toBe(431);
  });
});

describe('a refused head pipelined behind a request still being answered', () => {
  it('is answered after that request’s answer, whole and in order, never in the middle of it', async () => {
    const first = `GET /api/connect/channels HTTP/1.1\r\nHost: ${ws.host}\r\nAuthorization: Bearer ${ws.apiKey}\r\n\r\n`;
    const refusedHeads: [string, number][] = [
      [`GET /healthz HTTP/1.1\r\nHost: ${ws.host}\r\nX-Big: ${'b'.repeat(80_000)}\r\n\r\n`, 431],
      ['GET /healthz HTTP/1.1\r\nBad Header\x01: x\r\n\r\n', 400],
      [`GET /${'a'.repeat(REQUEST_LINE_LIMIT + 10)} HTTP/1.1\r\nHost: ${ws.host}\r\n\r\n`, 414],
      [`GET /${'a'.repeat(60_000)} HTTP/1.1\r\nHost: ${ws.host}\r\n\r\n`, 414],
    ];
    for (const [refused, status] of refusedHeads) {
      for (let round = 0; round < 3; round++) {
        const result = await rawExchange(served.port, first + refused);
        const text = `${result.head}\r\n\r\n${result.body}`;
        const answers = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
        expect(answers, `${status}, round ${round}`).toEqual([200, status]);
        // The first answer is whole: its body, as long as its Content-Length says, comes before the refusal.
        const length = Number(/content-length: (\d+)/i.exec(result.head)?.[1]);
        const firstBody = result.body.slice(0, length);
        expect(JSON.parse(firstBody).data, `${status}, round ${round}`).toEqual(expect.any(Array));
        expect(result.body.slice(length)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(result.ended).toBe('closed');
      }
    }
  });
});

// ───────────────────────────── the fuzzer ─────────────────────────────

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });
/** Any byte a header may carry in practice, controls and bytes above ASCII included (no CR or LF). */
const headerByte = fc.integer({ min: 0, max: 255 }).filter((c) => c !== 10 && c !== 13).map((c) => String.fromCharCode(c));
const headerText = fc.string({ unit: headerByte, maxLength: 60 });
const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,16}$/);

const method = fc.oneof(fc.constantFrom('GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PRI'), token, printable);
const target = fc.oneof(
  fc.constantFrom('/api/connect/contacts', '/api/connect/channels', '/graphql', '/healthz', '/readyz', '/metrics', '/docs', '/docs/', '*', '/', '//', '/api/connect/../../etc/passwd'),
  fc.tuple(fc.constantFrom('/api/connect/contacts/', '/api/connect/conversations/', '/graphql?query=', '/docs/', '/'), printable).map(([a, b]) => a + b),
  fc.tuple(fc.constantFrom('http://', 'https://', 'ftp://', 'http://[', '//'), printable).map(([a, b]) => a + b),
  printable,
  fc.string({ unit: headerByte, maxLength: 30 }),
);
const host = fc.option(
  fc.oneof(
    fc.constantFrom('localhost', 'localhost:4000', '127.0.0.1', '[::1]:80', '', ' ', ...MALFORMED_HOSTS),
    printable,
    headerText,
    fc.tuple(fc.domain(), fc.integer({ min: 0, max: 999_999 })).map(([name, port]) => `${name}:${port}`),
  ),
  { nil: undefined },
);
/** Headers beside the Host; the body framing is written by the test, so that every request is complete. */
const headers = fc.array(
  fc.tuple(
    fc.oneof(
      token,
      printable,
      fc.constantFrom('Authorization', 'Content-Type', 'X-Channel-Uuid', 'X-Forwarded-Host', 'Accept', 'Idempotency-Key', 'Origin', 'Cookie', 'Expect', 'Upgrade', 'Connection'),
    ),
    fc.oneof(headerText, fc.constantFrom('Bearer cak_x', 'application/json', 'text/plain', '*/*', '100-continue', 'websocket', 'keep-alive', 'close')),
  ),
  { maxLength: 6 },
);
const version = fc.oneof(fc.constantFrom('HTTP/1.1', 'HTTP/1.0'), fc.constantFrom('HTTP/2.0', 'HTTP/1.9', 'HTTP/0.9', 'HTTP/x', ''), printable);
const body = fc.option(fc.oneof(printable, fc.constant('{"name":"Fuzzed"}')), { nil: undefined });

const FRAMING = /^(content-length|transfer-encoding)$/i;

describe('request heads of any shape', () => {
  it('always get an HTTP answer below 500, never a stack trace, and log no unexpected failure', async () => {
    await fc.assert(
      fc.asyncProperty(method, target, version, host, headers, body, async (m, t, v, h, hs, b) => {
        const lines = [`${m} ${t} ${v}`];
        if (h !== undefined) lines.push(`Host: ${h}`);
        for (const [name, value] of hs) if (!FRAMING.test(name.trim())) lines.push(`${name}: ${value}`);
        if (b !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(b, 'latin1')}`);
        lines.push('Connection: close');
        const request = Buffer.from(`${lines.join('\r\n')}\r\n\r\n${b ?? ''}`, 'latin1');
        const result = await rawExchange(served.port, request, { timeoutMs: 4000 });
        // A head the parser refuses at once may close before the client's bytes are all sent; it is still answered.
        expectClean(result, JSON.stringify(request.toString('latin1').slice(0, 300)));
      }),
      { numRuns: 500 },
    );
    expect(served.logs.filter((line) => line.includes('unexpected failure'))).toEqual([]);
  }, 120_000);
});
