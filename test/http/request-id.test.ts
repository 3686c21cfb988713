import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { edgeSetup } from '../helpers/edges.js';
import { bearer } from '../helpers/factories.js';
import { serveOnPort, type ServedApp } from '../helpers/real-port.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const accessLines = () => app.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');

describe('X-Request-Id', () => {
  it('is on every answer: REST, GraphQL, probes, documents, GraphiQL, 404 and 405', async () => {
    const s = await edgeSetup(app);
    const answers = [
      await app.fetch(s.host, '/api/connect/contacts', { headers: bearer(s.apiKey) }),
      await app.fetch(s.host, '/api/connect/contacts'),
      await app.fetch(s.host, '/graphql', { method: 'POST', headers: { ...bearer(s.apiKey), 'content-type': 'application/json' }, body: '{"query":"{ viewer { scopes } }"}' }),
      await app.fetch(s.host, '/graphql', { headers: { accept: 'text/html' } }),
      await app.fetch(s.host, '/healthz'),
      await app.fetch(s.host, '/readyz'),
      await app.fetch(s.host, '/api/connect/openapi.json'),
      await app.fetch(s.host, '/docs'),
      await app.fetch(s.host, '/no/such/route'),
      await app.fetch(s.host, '/healthz', { method: 'DELETE' }),
    ];
    const ids = answers.map((answer) => answer.headers.get('x-request-id'));
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 200, 200, 200, 200, 200, 200, 404, 405]);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps a valid incoming id and replaces an invalid one', async () => {
    const kept = ['abc', 'req-1.2_3:4', 'A'.repeat(128)];
    for (const id of kept) expect((await app.fetch('localhost', '/healthz', { headers: { 'x-request-id': id } })).headers.get('x-request-id')).toBe(id);
    const replaced = ['A'.repeat(129), 'has space', 'quote"d', 'slash/', 'é', ''];
    for (const id of replaced) {
      const answer = await app.fetch('localhost', '/healthz', { headers: { 'x-request-id': id } });
      expect(answer.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('is on the request’s log lines, with the trace id of a valid traceparent', async () => {
    const s = await edgeSetup(app);
    app.logs.length = 0;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await app.fetch(s.host, '/api/connect/contacts', { headers: { ...bearer(s.apiKey), 'x-request-id': 'trace-me-1', traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    await app.fetch(s.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(s.apiKey), 'content-type': 'application/json', 'x-request-id': 'trace-me-2' },
      body: '{"query":"{ viewer { scopes } }"}',
    });
    // Invalid traceparents: version ff, an all-zero trace id, a version-00 header with a fifth field.
    for (const traceparent of [`ff-${traceId}-00f067aa0ba902b7-01`, `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, `00-${traceId}-00f067aa0ba902b7-01-x`]) {
      await app.fetch(s.host, '/healthz', { headers: { 'x-request-id': 'untraced', traceparent } });
    }
    const lines = accessLines();
    expect(lines).toEqual([
      expect.objectContaining({ requestId: 'trace-me-1', traceId, path: '/api/connect/contacts', status: 200 }),
      expect.objectContaining({ requestId: 'trace-me-2', path: '/graphql', status: 200 }),
      expect.objectContaining({ requestId: 'untraced' }),
      expect.objectContaining({ requestId: 'untraced' }),
      expect.objectContaining({ requestId: 'untraced' }),
    ]);
    expect(lines[1]).not.toHaveProperty('traceId');
    for (const line of lines.slice(2)) expect(line).not.toHaveProperty('traceId');
  });
});

describe('X-Request-Id on the node:http server', () => {
  let served: ServedApp;
  beforeAll(async () => {
    served = await serveOnPort(app.db, { ...app.env, CORS_ORIGINS: ['https://app.example'] });
  });
  afterAll(() => served.close());

  const raw = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(served.port, '127.0.0.1', () => socket.end(bytes));
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });

  it('names a refused head’s answer and its log line with a new id', async () => {
    const answer = await raw('GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n');
    const id = /x-request-id: (\S+)/i.exec(answer)?.[1];
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(id).toMatch(UUID);
    expect(served.logs.join('')).toContain(id);
  });

  it('lets a browser page send it and read it across origins', async () => {
    const base = `http://127.0.0.1:${served.port}`;
    const preflight = await fetch(`${base}/graphql`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-request-id, traceparent' },
    });
    expect(preflight.headers.get('x-request-id')).toMatch(UUID);
    expect(preflight.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('x-request-id');
    expect(preflight.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('traceparent');
    const answer = await fetch(`${base}/healthz`, { headers: { origin: 'https://app.example' } });
    expect(answer.headers.get('access-control-expose-headers')!.toLowerCase()).toContain('x-request-id');
  });

  it('answers an ordinary request with the id it sent', async () => {
    const answer = await fetch(`http://127.0.0.1:${served.port}/healthz`, { headers: { 'x-request-id': 'over-the-wire' } });
    expect(answer.headers.get('x-request-id')).toBe('over-the-wire');
  });
});
