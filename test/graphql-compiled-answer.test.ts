import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, openTestDatabase, type TestApp } from './helpers/app.js';
import { messagingSetup } from './helpers/messaging.js';
import { workspaceWithChannel } from './helpers/factories.js';
import { authenticateRequest, requestContext } from '../src/context/authenticate.js';
import { createCompiledAnswers } from '../src/graphql/compiled-answer.js';
import { createLogger } from '../src/logger.js';

let app: TestApp;
/** The app's answers from compiled queries, asked directly below as well as through the app. */
const answers = createCompiledAnswers();
/** Every statement the app sends. */
let statements: string[] = [];
beforeAll(async () => {
  app = await createTestApp({}, await openTestDatabase({ onQuery: (sql) => statements.push(sql) }), { compiledAnswers: answers });
});

/** The requests yoga took through its own pipeline while `run` ran: it logs each at debug. */
async function throughYoga(run: () => Promise<unknown>): Promise<number> {
  const before = app.logs.length;
  await run();
  return app.logs.slice(before).filter((line) => line.includes('"detail":"Processing GraphQL Parameters"')).length;
}
afterAll(() => app.close());

const PAGE = `query CompiledPage($first: Int, $after: String) {
  contacts(first: $first, after: $after) {
    edges { cursor node { id name email phoneNumber isGroup createdAt updatedAt } }
    pageInfo { hasNextPage endCursor }
  }
}`;

async function setup() {
  const s = await messagingSetup(app);
  for (const email of ['one@example.com', 'two@example.com', 'three@example.com']) await s.contact({ email });
  const headers = (extra: Record<string, string> = {}) => ({ host: s.host, authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json', ...extra });
  /** A request as a client sends it, through the app. */
  const post = async (body: unknown, extra: Record<string, string> = {}) => {
    const response = await app.fetch(s.host, '/graphql', { method: 'POST', headers: headers(extra), body: JSON.stringify(body) });
    return { status: response.status, type: response.headers.get('content-type'), limit: response.headers.get('ratelimit-limit'), body: await response.text() };
  };
  /** The app's `answer` itself, for the same request: a Response, or undefined when it leaves the request to yoga. */
  const direct = async (body: unknown, extra: Record<string, string> = {}) => {
    const request = new Request(`http://${s.host}/graphql`, { method: 'POST', headers: headers(extra) });
    const deps = { db: app.db, env: app.env, logger: createLogger({ ...app.env, LOG_LEVEL: 'silent' }) };
    const context = requestContext(deps, await authenticateRequest(deps, request));
    const labels: string[] = [];
    const response = await answers.answer(request, typeof body === 'string' ? body : JSON.stringify(body), context, (_document, name) => labels.push(String(name)));
    return response && { status: response.status, type: response.headers.get('content-type'), body: await response.text(), labels };
  };
  return { ...s, post, direct };
}

describe('a query yoga has validated and run compiled is answered again from its compiled code', () => {
  it('with the answer yoga gives, for each Accept header it knows', async () => {
    const s = await setup();
    const accepts = [undefined, '*/*', 'application/json', 'application/graphql-response+json', 'application/graphql-response+json, application/json'];
    for (const [i, accept] of accepts.entries()) {
      // A text of its own for each header, so that the first answer is yoga's.
      const body = { query: `${PAGE}${' '.repeat(i)}`, variables: { first: 2 }, operationName: 'CompiledPage' };
      const extra: Record<string, string> = accept ? { accept } : {};
      // Never seen: left to yoga, which parses, validates and runs it.
      expect(await s.direct(body, extra)).toBeUndefined();
      let first: Awaited<ReturnType<typeof s.post>> | undefined;
      expect(await throughYoga(async () => (first = await s.post(body, extra)))).toBe(1);
      expect(first!.status).toBe(200);
      expect(JSON.parse(first!.body).data.contacts.edges).toHaveLength(2);
      // The same text again is answered before yoga's pipeline, with yoga's answer.
      let again: Awaited<ReturnType<typeof s.post>> | undefined;
      expect(await throughYoga(async () => (again = await s.post(body, extra)))).toBe(0);
      expect(again).toEqual(first);
      const answered = await s.direct(body, extra);
      expect(answered).toEqual({ status: 200, type: first!.type, body: first!.body, labels: ['CompiledPage'] });
    }
    // The page after, with the cursor yoga handed out: the same text, other variables.
    const cursor = JSON.parse((await s.post({ query: PAGE, variables: { first: 2 } })).body).data.contacts.pageInfo.endCursor as string;
    const next = await s.direct({ query: PAGE, variables: { first: 2, after: cursor } });
    expect(JSON.parse(next!.body).data.contacts.edges).toHaveLength(1);
    expect(next!.body).toBe((await s.post({ query: PAGE, variables: { first: 2, after: cursor } })).body);
  });

  it('leaves to yoga what it does not answer exactly as yoga would', async () => {
    const s = await setup();
    const body = { query: PAGE, variables: { first: 2 } };
    expect((await s.post(body)).status).toBe(200);
    expect(await s.direct(body)).toBeDefined();
    const left = {
      'another text': { query: `${PAGE}\n` },
      'extensions': { ...body, extensions: { persistedQuery: null } },
      'an unknown parameter': { ...body, other: 1 },
      'variables of the wrong shape': { ...body, variables: [1] },
      'a variable of the wrong type': { ...body, variables: { first: 'two' } },
      'a page size over the limit': { ...body, variables: { first: 1000 } },
      'an operation the document does not hold': { ...body, operationName: 'Other' },
    };
    for (const [what, request] of Object.entries(left)) expect({ what, answer: await s.direct(request) }).toEqual({ what, answer: undefined });
    expect(await s.direct('{"query":')).toBeUndefined();
    expect(await s.direct(body, { accept: 'text/event-stream' })).toBeUndefined();
    expect(await s.direct(body, { accept: 'application/json; charset=latin1' })).toBeUndefined();
    expect(await s.direct(body, { 'content-type': 'text/plain' })).toBeUndefined();
    // Yoga answers those as it always has: a refused page size is a GraphQL error, not a 500.
    const refused = await s.post({ ...body, variables: { first: 1000 } }, { accept: 'application/graphql-response+json' });
    expect(refused.status).toBe(200);
    expect(JSON.parse(refused.body).errors[0].message).toMatch(/first must be an integer between 1 and 100/);
    const wrongType = await s.post({ ...body, variables: { first: 'two' } }, { accept: 'application/graphql-response+json' });
    expect(wrongType.status).toBe(400);
  });

  it('hands a result with errors to yoga, which answers it as it answers a query it ran itself', async () => {
    const s = await setup();
    const find = 'query CompiledFind($email: String) { findContact(email: $email) { id email } }';
    const found = await s.post({ query: find, variables: { email: 'one@example.com' } });
    expect(JSON.parse(found.body).data.findContact.email).toBe('one@example.com');
    expect(await s.direct({ query: find, variables: { email: 'two@example.com' } })).toBeDefined();
    // A blank email fails inside the resolver: the compiled run's result carries the error.
    expect(await s.direct({ query: find, variables: { email: ' ' } })).toBeUndefined();
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const handed = await s.post({ query: find, variables: { email: ' ' } }, { accept });
      const unseen = await s.post({ query: `${find}\n`, variables: { email: ' ' } }, { accept });
      expect(JSON.parse(handed.body).errors).toHaveLength(1);
      expect(handed).toEqual(unseen);
    }
    // The query runs once: its reads are not repeated when yoga answers the errors.
    const both = 'query CompiledBoth($id: ID!, $email: String) { contact(id: $id) { id } findContact(email: $email) { id } }';
    const contactId = JSON.parse(found.body).data.findContact.id as string;
    expect((await s.post({ query: both, variables: { id: contactId, email: 'one@example.com' } })).status).toBe(200);
    statements = [];
    const partial = await s.post({ query: both, variables: { id: contactId, email: ' ' } });
    expect(JSON.parse(partial.body)).toMatchObject({ data: { contact: { id: contactId }, findContact: null }, errors: [{ path: ['findContact'] }] });
    expect(statements.filter((sql) => /FROM "public"\."contacts"/.test(sql))).toHaveLength(1);
  });

  it('leaves a query whose cost these variables put over the limit to yoga, which refuses it', async () => {
    const s = await setup();
    const nested = `query CompiledNested($conversations: Int, $messages: Int) {
      conversations(first: $conversations) { edges { node { id messages(first: $messages) { edges { node { id body } } } } } }
    }`;
    expect((await s.post({ query: nested, variables: { conversations: 2, messages: 2 } })).status).toBe(200);
    expect(await s.direct({ query: nested, variables: { conversations: 3, messages: 3 } })).toBeDefined();
    const costly = { query: nested, variables: { conversations: 100, messages: 100 } };
    expect(await s.direct(costly)).toBeUndefined();
    const refused = JSON.parse((await s.post(costly)).body) as { errors?: { extensions?: { code?: string } }[] };
    expect(refused.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });

  it("answers only what the same app validated: another app's rules may refuse it", async () => {
    const s = await setup();
    const introspection = { query: '{ __schema { queryType { name } } }' };
    expect(JSON.parse((await s.post(introspection)).body).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    expect(await s.direct(introspection)).toBeDefined();
    // An app of the same process whose rules refuse introspection.
    const closed = await createTestApp({ GRAPHQL_INTROSPECTION: '0' });
    try {
      const other = await workspaceWithChannel(closed.db.prisma);
      const response = await closed.fetch(other.host, '/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${other.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(introspection),
      });
      const refused = (await response.json()) as { data?: unknown; errors?: { message: string }[] };
      expect(refused.data).toBeUndefined();
      expect(refused.errors?.[0]?.message).toMatch(/introspection/i);
    } finally {
      await closed.close();
    }
  });

  it('never answers a mutation, and still requires the caller yoga would', async () => {
    const s = await setup();
    const mutation = { query: 'mutation Rename($id: ID!) { updateContact(id: $id, input: { name: "Renamed" }) { contact { name } } }', variables: { id: '00000000-0000-4000-8000-000000000000' } };
    expect((await s.post(mutation)).status).toBe(200);
    expect(await s.direct(mutation)).toBeUndefined();
    const body = { query: PAGE, variables: { first: 1 } };
    expect((await s.post(body)).status).toBe(200);
    const anonymous = await app.fetch(s.host, '/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(anonymous.status).toBe(401);
  });
});
