import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { messagingSetup } from './helpers/messaging.js';
import { requestOnPort, serveOnPort, type PortAnswer, type ServedApp } from './helpers/real-port.js';

/**
 * GraphQL on a real port: a POST with a JSON body asking for JSON, from no browser, is read,
 * authenticated and — when the app's yoga has already validated and run its text — answered by
 * node:http directly (src/graphql/direct.ts); anything else is handed over to yoga with what was
 * read. Either way the answers are the app's, and nothing is read, counted or run twice.
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

/** A GraphQL request on the port, and the number of requests yoga took through its own pipeline meanwhile. */
async function onPort(body: unknown, headers: Record<string, string> = auth(), port = served.port, logs = served.logs): Promise<PortAnswer & { throughYoga: number }> {
  const before = logs.length;
  const answer = await requestOnPort(port, s.host, 'POST', '/graphql', headers, typeof body === 'string' ? body : JSON.stringify(body));
  const throughYoga = logs.slice(before).filter((line) => line.includes('"detail":"Processing GraphQL Parameters"')).length;
  return { ...answer, throughYoga };
}

/** The same request through the in-process app (yoga's fetch). */
async function inProcess(body: unknown, headers: Record<string, string> = auth()) {
  const response = await app.fetch(s.host, '/graphql', { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

const shown = (answer: PortAnswer) => ({ status: answer.status, type: answer.headers['content-type'] ?? null, body: answer.body });

const PAGE = 'query DirectPage($first: Int) { contacts(first: $first) { edges { cursor node { id email createdAt } } pageInfo { hasNextPage endCursor } } }';

describe('GraphQL on a real port', () => {
  it('answers a query yoga has run from its compiled code, with the answer yoga gives and its length', async () => {
    const body = { query: PAGE, variables: { first: 2 }, operationName: 'DirectPage' };
    const first = await onPort(body);
    expect(first.throughYoga).toBe(1);
    const again = await onPort(body);
    expect(again.throughYoga).toBe(0);
    expect(shown(again)).toEqual(shown(first));
    expect(shown(again)).toEqual(await inProcess(body));
    expect(again.headers['content-length']).toBe(String(Buffer.byteLength(again.body)));
    expect(again.headers['ratelimit-limit']).toBe(first.headers['ratelimit-limit']);
    expect(JSON.parse(again.body).data.contacts.edges).toHaveLength(2);
    const line = served.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === 'request');
    expect(line).toMatchObject({ method: 'POST', path: '/graphql', status: 200 });
  });

  it('runs a mutation once, whether yoga or node:http answers it', async () => {
    const c = await s.contact({ email: 'renamed-on-port@example.com' });
    const rename = (name: string) => ({ query: 'mutation DirectRename($id: ID!, $name: String) { updateContact(id: $id, input: { name: $name }) { contact { id name } userErrors { message } } }', variables: { id: c.id, name } });
    const first = await onPort(rename('First name'));
    expect(first.throughYoga).toBe(1);
    const second = await onPort(rename('Second name'));
    expect(second.throughYoga).toBe(0);
    expect(JSON.parse(second.body)).toEqual({ data: { updateContact: { contact: { id: c.id, name: 'Second name' }, userErrors: [] } } });
    const events = await app.db.prisma.delivery.count({ where: { eventType: 'contact.updated', payload: { path: ['data', 'id'], equals: c.id } } });
    const refused = await onPort(rename('x'));
    expect(refused.throughYoga).toBe(0);
    expect(JSON.parse(refused.body).data.updateContact.contact).toBeNull();
    expect(await app.db.prisma.delivery.count({ where: { eventType: 'contact.updated', payload: { path: ['data', 'id'], equals: c.id } } })).toBe(events);
    expect((await s.api.get(`/contacts/${c.id}`)).body.data.contact.name).toBe('Second name');
  });

  it('hands a result with errors to yoga, which answers it as the app does, the operation run once', async () => {
    const find = { query: 'query DirectFind($email: String) { findContact(email: $email) { id } }', variables: { email: 'one@example.com' } };
    expect((await onPort(find)).status).toBe(200);
    const blank = { ...find, variables: { email: ' ' } };
    const handed = await onPort(blank);
    // Yoga parses and answers it, from the result the compiled run already came to.
    expect(handed.throughYoga).toBe(1);
    expect(shown(handed)).toEqual(await inProcess(blank));
    expect(JSON.parse(handed.body).errors).toHaveLength(1);
  });

  it('gives the app’s answer to what it hands over or refuses: unknown texts, bad JSON, no credential, a body over the limit', async () => {
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

  it('leaves event streams and other bodies to yoga', async () => {
    const body = { query: PAGE, variables: { first: 1 } };
    expect((await onPort(body)).status).toBe(200);
    expect((await onPort(body)).throughYoga).toBe(0);
    const stream = await onPort(body, { ...auth(), accept: 'text/event-stream' });
    expect(stream.throughYoga).toBe(1);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    // Yoga refuses a body it has no parser for, before any GraphQL processing.
    const asText = await onPort(JSON.stringify(body), { ...auth(), 'content-type': 'text/plain' });
    expect(shown(asText)).toEqual(await inProcess(JSON.stringify(body), { ...auth(), 'content-type': 'text/plain' }));
  });

  it('leaves browsers to yoga, which answers with CORS', async () => {
    const cors = await serveOnPort(app.db, { ...app.env, CORS_ORIGINS: ['https://app.example'] }, { providers: app.providers });
    try {
      const body = { query: PAGE, variables: { first: 1 } };
      for (let i = 0; i < 2; i++) {
        const answer = await onPort(body, { ...auth(), origin: 'https://app.example' }, cors.port, cors.logs);
        expect(answer.status).toBe(200);
        expect(answer.headers['access-control-allow-origin']).toBe('https://app.example');
        expect(answer.headers.vary).toMatch(/Origin/);
      }
      // Without an Origin, answered here: still marked as varying by Origin while CORS is on.
      const direct = await onPort(body, auth(), cors.port, cors.logs);
      expect(direct.throughYoga).toBe(0);
      expect(direct.headers.vary).toBe('Origin');
      expect(direct.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await cors.close();
    }
  });

  it('counts each request once against its budget, answered here or handed over', async () => {
    const limited = await serveOnPort(app.db, { ...app.env, RATE_LIMIT_PER_MINUTE: 3 }, { providers: app.providers });
    try {
      const body = { query: PAGE, variables: { first: 1 } };
      const answers: (PortAnswer & { throughYoga: number })[] = [];
      for (let i = 0; i < 4; i++) answers.push(await onPort(body, auth(), limited.port, limited.logs));
      expect(answers.map((a) => a.throughYoga)).toEqual([1, 0, 0, 0]);
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
