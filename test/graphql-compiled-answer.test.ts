import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, onPostgres, openTestDatabase, type TestApp } from './helpers/app.js';
import { messagingSetup } from './helpers/messaging.js';
import { holdIdempotencyKey } from './helpers/idempotency.js';
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
  /** The app's `answer` itself, for the same request: its answer (always a 200), or undefined when it leaves the request to yoga. */
  const direct = async (body: unknown, extra: Record<string, string> = {}) => {
    const request = new Request(`http://${s.host}/graphql`, { method: 'POST', headers: headers(extra) });
    const deps = { db: app.db, env: app.env, logger: createLogger({ ...app.env, LOG_LEVEL: 'silent' }) };
    const context = requestContext(deps, await authenticateRequest(deps, request));
    const labels: string[] = [];
    const outcome = await answers.answer(request.headers, typeof body === 'string' ? body : JSON.stringify(body), context, (_document, name) => labels.push(String(name)));
    return outcome && 'answer' in outcome ? { status: 200, type: outcome.answer.contentType, body: outcome.answer.body, labels } : undefined;
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

  it('still requires the caller yoga would', async () => {
    const s = await setup();
    const body = { query: PAGE, variables: { first: 1 } };
    expect((await s.post(body)).status).toBe(200);
    const anonymous = await app.fetch(s.host, '/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(anonymous.status).toBe(401);
  });
});

const RENAME = 'mutation Rename($id: ID!, $name: String) { updateContact(id: $id, input: { name: $name }) { contact { id name updatedAt } userErrors { field message code } } }';

describe('a mutation yoga has validated and run is answered again on the interpreter', () => {
  it('with the answer yoga gives, its changes made once', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'renamed@example.com' });
    // Never seen: left to yoga.
    expect(await s.direct({ query: RENAME, variables: { id: c.id, name: 'First' } })).toBeUndefined();
    expect(await throughYoga(() => s.post({ query: RENAME, variables: { id: c.id, name: 'First' } }))).toBe(1);
    let again: Awaited<ReturnType<typeof s.post>> | undefined;
    statements = [];
    expect(await throughYoga(async () => (again = await s.post({ query: RENAME, variables: { id: c.id, name: 'Second' } })))).toBe(0);
    const answered = JSON.parse(again!.body) as { data: { updateContact: { contact: { id: string; name: string; updatedAt: string }; userErrors: unknown[] } } };
    expect(answered.data.updateContact).toMatchObject({ contact: { id: c.id, name: 'Second' }, userErrors: [] });
    // One write, its answer from the row it returned: what the same mutation costs through yoga.
    const direct = statements.length;
    statements = [];
    const unseen = await s.post({ query: `${RENAME}\n`, variables: { id: c.id, name: 'Third' } });
    expect(statements.length).toBe(direct);
    expect({ ...again!, body: undefined }).toEqual({ ...unseen, body: undefined });
    expect((await s.api.get(`/contacts/${c.id}`)).body.data.contact.name).toBe('Third');
    // A refused input is userErrors, as yoga answers it.
    const refusedHere = await s.post({ query: RENAME, variables: { id: c.id, name: 'x' } });
    const refusedByYoga = await s.post({ query: `${RENAME}\n`, variables: { id: c.id, name: 'x' } });
    expect(refusedHere).toEqual(refusedByYoga);
    expect(JSON.parse(refusedHere.body).data.updateContact).toEqual({ contact: null, userErrors: [{ field: ['input', 'name'], message: expect.any(String), code: 'INVALID' }] });
    expect(await s.direct({ query: RENAME, variables: { id: c.id, name: 'Fourth' }, operationName: 'Rename' })).toMatchObject({ status: 200, labels: ['Rename'] });
  });

  it('leaves to yoga a document of several operations, a subscription and variables the interpreter refuses', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'left@example.com' });
    const both = `${RENAME}\nquery Other { channels { id } }`;
    expect((await s.post({ query: both, variables: { id: c.id, name: 'Both' }, operationName: 'Rename' })).status).toBe(200);
    expect(await s.direct({ query: both, variables: { id: c.id, name: 'Again' }, operationName: 'Rename' })).toBeUndefined();
    expect((await s.post({ query: RENAME, variables: { id: c.id, name: 'Known' } })).status).toBe(200);
    expect(await s.direct({ query: RENAME, variables: { name: 'No id' } })).toBeUndefined();
    expect(await s.direct({ query: RENAME, variables: { id: c.id, name: 'Other name' }, operationName: 'Other' })).toBeUndefined();
    expect((await s.api.get(`/contacts/${c.id}`)).body.data.contact.name).toBe('Known');
  });

  it.skipIf(!onPostgres)('hands a result with errors to yoga, which answers it without running the mutation again', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'keyed@example.com' });
    const SEND = 'mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { id } userErrors { field message } } }';
    const input = (key: string) => ({ input: { to: { contactId: c.id }, message: 'Hello', idempotencyKey: key } });
    expect(JSON.parse((await s.post({ query: SEND, variables: input('first') })).body).data.sendMessage.message.id).toEqual(expect.any(String));
    // Another request holds the key: the send answers CONFLICT, an error rather than userErrors.
    const held = await holdIdempotencyKey(app.db.prisma, inject('databaseUrl'), { apiKey: s.apiKey, route: `graphql sendMessage ${s.channel.id}`, key: 'held' });
    try {
      statements = [];
      const handed = await s.post({ query: SEND, variables: input('held') });
      const claims = statements.filter((sql) => /idempotency_keys/.test(sql)).length;
      statements = [];
      const unseen = await s.post({ query: `${SEND}\n`, variables: input('held') });
      expect(statements.filter((sql) => /idempotency_keys/.test(sql)).length).toBe(claims);
      expect(handed).toEqual(unseen);
      expect(JSON.parse(handed.body).errors[0].extensions.code).toBe('CONFLICT');
    } finally {
      await held.release();
    }
    expect(await app.db.prisma.message.count({ where: { contactId: c.id } })).toBe(1);
  });
});
