import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';
import { requestOnPort, serveOnPort, type PortAnswer, type ServedApp } from '../helpers/real-port.js';

/**
 * GraphQL on a real port, through yoga's own node adapter: the answers are the ones the app gives
 * in process, and nothing is read, counted or run twice.
 */

let app: TestApp;
let served: ServedApp;
let s: Awaited<ReturnType<typeof messagingSetup>>;

beforeAll(async () => {
  app = await createTestApp();
  served = await serveOnPort(app.db, app.env, { providers: app.providers });
  s = await messagingSetup(app);
  for (const email of ['one@example.com', 'two@example.com']) await s.contact({ email });
});
afterAll(async () => {
  await served.close();
  await app.close();
});

const JSON_HEADERS = { 'content-type': 'application/json' };
const auth = () => ({ authorization: `Bearer ${s.apiKey}`, ...JSON_HEADERS });

/** A GraphQL request on the port. */
function onPort(body: unknown, headers: Record<string, string> = auth(), port = served.port): Promise<PortAnswer> {
  return requestOnPort(port, s.host, 'POST', '/graphql', headers, typeof body === 'string' ? body : JSON.stringify(body));
}

/** The same request through the in-process app (yoga's fetch). */
async function inProcess(body: unknown, headers: Record<string, string> = auth()) {
  const response = await app.fetch(s.host, '/graphql', { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

const shown = (answer: PortAnswer) => ({ status: answer.status, type: answer.headers['content-type'] ?? null, body: answer.body });

const PAGE = 'query DirectPage($first: Int) { contacts(first: $first) { edges { cursor node { id email createdAt } } pageInfo { hasNextPage endCursor } } }';

describe('GraphQL on a real port', () => {
  it('answers a query again and again with the answer the app gives in process, and its length', async () => {
    const body = { query: PAGE, variables: { first: 2 }, operationName: 'DirectPage' };
    const first = await onPort(body);
    const again = await onPort(body);
    expect(shown(again)).toEqual(shown(first));
    expect(shown(again)).toEqual(await inProcess(body));
    expect(again.headers['content-length']).toBe(String(Buffer.byteLength(again.body)));
    expect(again.headers['ratelimit-limit']).toBe(first.headers['ratelimit-limit']);
    expect(JSON.parse(again.body).data.contacts.edges).toHaveLength(2);
    const line = served.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === 'request');
    expect(line).toMatchObject({ method: 'POST', path: '/graphql', status: 200 });
  });

  it('runs a mutation once per request', async () => {
    const c = await s.contact({ email: 'renamed-on-port@example.com' });
    const rename = (name: string) => ({ query: 'mutation DirectRename($id: ID!, $name: String) { updateContact(id: $id, input: { name: $name }) { contact { id name } userErrors { message } } }', variables: { id: c.id, name } });
    await onPort(rename('First name'));
    const second = await onPort(rename('Second name'));
    expect(JSON.parse(second.body)).toEqual({ data: { updateContact: { contact: { id: c.id, name: 'Second name' }, userErrors: [] } } });
    const events = await app.db.prisma.delivery.count({ where: { eventType: 'contact.updated', payload: { path: ['data', 'id'], equals: c.id } } });
    const refused = await onPort(rename('x'));
    expect(JSON.parse(refused.body).data.updateContact.contact).toBeNull();
    expect(await app.db.prisma.delivery.count({ where: { eventType: 'contact.updated', payload: { path: ['data', 'id'], equals: c.id } } })).toBe(events);
    expect((await s.api.get(`/contacts/${c.id}`)).body.data.contact.name).toBe('Second name');
  });

  it('answers a result with errors as the app does', async () => {
    const find = { query: 'query DirectFind($email: String) { findContact(email: $email) { id } }', variables: { email: 'one@example.com' } };
    expect((await onPort(find)).status).toBe(200);
    const blank = { ...find, variables: { email: ' ' } };
    const handed = await onPort(blank);
    expect(shown(handed)).toEqual(await inProcess(blank));
    expect(JSON.parse(handed.body).errors).toHaveLength(1);
  });

  it('gives the app’s answer to what it refuses: bad JSON, unknown fields, no credential, a body over the limit', async () => {
    const cases: [string, unknown, Record<string, string>][] = [
      ['a text not seen yet', { query: `${PAGE} `, variables: { first: 1 } }, auth()],
      ['malformed JSON', '{"query":', auth()],
      ['a document yoga refuses', { query: '{ nope }' }, auth()],
      ['no credential', { query: PAGE, variables: { first: 1 } }, JSON_HEADERS],
      ['a bad token', { query: PAGE, variables: { first: 1 } }, { ...JSON_HEADERS, authorization: 'Bearer cak_nope' }],
      ['a body over the limit', `{"query":"${'x'.repeat(app.env.BODY_LIMIT_BYTES)}"}`, auth()],
    ];
    for (const [label, body, headers] of cases) {
      const answer = await onPort(body, headers);
      expect({ label, ...shown(answer) }).toEqual({ label, ...(await inProcess(body, headers)) });
      if (answer.status === 401) expect(answer.headers['www-authenticate'], label).toBe('Bearer');
    }
  });

  it('answers an event stream when asked, and refuses a body it has no parser for', async () => {
    const body = { query: PAGE, variables: { first: 1 } };
    expect((await onPort(body)).status).toBe(200);
    const stream = await onPort(body, { ...auth(), accept: 'text/event-stream' });
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    // Yoga refuses a body it has no parser for, before any GraphQL processing.
    const asText = await onPort(JSON.stringify(body), { ...auth(), 'content-type': 'text/plain' });
    expect(shown(asText)).toEqual(await inProcess(JSON.stringify(body), { ...auth(), 'content-type': 'text/plain' }));
  });

  it('answers browsers with CORS, and marks every answer as varying by Origin', async () => {
    const cors = await serveOnPort(app.db, { ...app.env, CORS_ORIGINS: ['https://app.example'] }, { providers: app.providers });
    try {
      const body = { query: PAGE, variables: { first: 1 } };
      for (let i = 0; i < 2; i++) {
        const answer = await onPort(body, { ...auth(), origin: 'https://app.example' }, cors.port);
        expect(answer.status).toBe(200);
        expect(answer.headers['access-control-allow-origin']).toBe('https://app.example');
        expect(answer.headers.vary).toMatch(/Origin/);
      }
      // Without an Origin: still marked as varying by Origin while CORS is on.
      const direct = await onPort(body, auth(), cors.port);
      expect(direct.headers.vary).toBe('Origin');
      expect(direct.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await cors.close();
    }
  });

  it('counts each request once against its budget', async () => {
    const limited = await serveOnPort(app.db, { ...app.env, RATE_LIMIT_PER_MINUTE: 3 }, { providers: app.providers });
    try {
      const body = { query: PAGE, variables: { first: 1 } };
      const answers: PortAnswer[] = [];
      for (let i = 0; i < 4; i++) answers.push(await onPort(body, auth(), limited.port));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
      expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
      const refused = answers[3]!;
      expect(refused.headers['retry-after']).toBeDefined();
      expect(JSON.parse(refused.body).errors[0].extensions.code).toBe('RATE_LIMITED');
    } finally {
      await limited.close();
    }
  });

  it('counts its answers in the request metrics by operation, and keeps connections alive', async () => {
    const metrics = async () => (await requestOnPort(served.port, s.host, 'GET', '/metrics')).body;
    const count = (text: string) => Number(/connect_http_requests_total\{route="graphql DirectPage",method="POST",status="200"\} (\d+)/.exec(text)?.[1] ?? 0);
    const before = count(await metrics());
    const body = JSON.stringify({ query: PAGE, variables: { first: 1 }, operationName: 'DirectPage' });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const statuses = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<number>((resolve, reject) => {
            const sent = http.request({ port: served.port, host: '127.0.0.1', method: 'POST', path: '/graphql', agent, headers: { host: s.host, ...auth() } }, (r) => {
              r.resume();
              r.on('end', () => resolve(r.statusCode!));
            });
            sent.on('error', reject);
            sent.end(body);
          }),
      ),
    );
    agent.destroy();
    expect(statuses).toEqual([200, 200, 200]);
    expect(count(await metrics()) - before).toBe(3);
  });
});
