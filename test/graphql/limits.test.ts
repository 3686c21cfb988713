import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_OPERATION } from '../../src/graphql/graphiql.js';
import { createTestApp, openTestDatabase, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
import { postOperation } from '../helpers/graphql.js';

let app: TestApp;
let ws: Awaited<ReturnType<typeof workspaceWithChannel>>;
const statements: string[] = [];
beforeAll(async () => {
  app = await createTestApp({}, await openTestDatabase({ onQuery: (sql) => statements.push(sql) }));
  ws = await workspaceWithChannel(app.db.prisma);
});
afterAll(() => app.close());

async function run(query: string, variables?: Record<string, unknown>, on: TestApp = app) {
  // A document of several operations runs its `Main`.
  const operationName = /query Main\b/.test(query) ? 'Main' : undefined;
  const { status, ...body } = await postOperation<unknown>(on, ws.host, bearer(ws.apiKey), { query, variables, operationName });
  return { status, body };
}

const refused = (result: Awaited<ReturnType<typeof run>>) => result.body.errors?.some((e) => e.extensions?.code === 'QUERY_TOO_COMPLEX') ?? false;

/** The smallest size at which `make(size)` is refused as too complex (searching from `from`). */
async function firstRefused(make: (size: number) => string, from: number, to: number): Promise<number | null> {
  for (let size = from; size <= to; size++) {
    const result = await run(make(size));
    if (refused(result)) return size;
    expect(result.body.errors, `size ${size}: ${JSON.stringify(result.body.errors)}`).toBeUndefined();
  }
  return null;
}

/** A query `depth` fields deep: messages → edges → node → conversation → messages … → __typename. */
function deepQuery(depth: number): string {
  const cycle = ['messages(first: 1)', 'edges', 'node', 'conversation'];
  const fields = Array.from({ length: depth - 1 }, (_, i) => cycle[i % cycle.length]!);
  return `{ ${fields.reduceRight((inner, field) => `${field} { ${inner} }`, '__typename')} }`;
}

describe('GraphQL abuse limits, each refused before execution with QUERY_TOO_COMPLEX', () => {
  it('depth: 12 passes, 13 is refused', async () => {
    expect(await firstRefused(deepQuery, 10, 14)).toBe(13);
  });

  it('aliases: 30 pass, 31 are refused', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: viewer { workspace { id } }`).join(' ')} }`;
    expect(await firstRefused(aliases, 29, 32)).toBe(31);
  });

  it('tokens: 5000 pass, 5001 are refused', async () => {
    // `query Main { __typename }` and `query F1 { __typename }` … are 5 tokens each; the
    // remainder is made up by more `__typename` in Main. (Many operations, because graphql-js
    // refuses thousands of identical fields in one selection on its own.)
    const tokens = (n: number) => {
      const fillers = Math.floor((n - 5) / 5);
      const extra = (n - 5) % 5;
      return [`query Main { __typename${' __typename'.repeat(extra)} }`, ...Array.from({ length: fillers }, (_, i) => `query F${i} { __typename }`)].join('\n');
    };
    expect(await firstRefused(tokens, 4999, 5002)).toBe(5001);
  });

  it('directives: 50 pass, 51 are refused', async () => {
    const directives = (n: number) => `{ ${Array.from({ length: n }, () => '__typename @include(if: true)').join(' ')} }`;
    expect(await firstRefused(directives, 49, 52)).toBe(51);
  });

  it('cost: a connection multiplies its selection by its first; nothing runs when refused', async () => {
    const nested = (first: number) =>
      `{ conversations(first: ${first}) { edges { node { id messages(first: ${first}) { edges { node { id body } } } } } } }`;
    expect(refused(await run(nested(25)))).toBe(false);
    statements.length = 0;
    const tooCostly = await run(nested(100));
    expect(refused(tooCostly)).toBe(true);
    expect(tooCostly.body.errors![0]!.message).toMatch(/^The query is too complex: its cost is \d+, the limit 10000\.$/);
    expect(statements.some((sql) => /conversations|messages/.test(sql))).toBe(false);
    // The same operation priced through variables.
    const byVariable = await run('query($n: Int) { conversations(first: $n) { edges { node { messages(first: $n) { edges { node { id } } } } } } }', { n: 100 });
    expect(refused(byVariable)).toBe(true);
  });

  it('GRAPHQL_MAX_COST sets the cost limit', async () => {
    // On the file's database, which stays open with the file's app.
    const strict = await createTestApp({ GRAPHQL_MAX_COST: '100' }, app.db);
    expect(refused(await run('{ contacts(first: 20) { edges { node { id name email } } } }', undefined, strict))).toBe(true);
    expect(refused(await run('{ contacts(first: 5) { edges { node { id name email } } } }', undefined, strict))).toBe(false);
  });

  it('the standard introspection query and the GraphiQL example pass', async () => {
    const introspection = await run(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }));
    expect(introspection.body.errors).toBeUndefined();
    expect(introspection.body.data).toHaveProperty('__schema');
    const example = await run(EXAMPLE_OPERATION);
    expect(example.body.errors).toBeUndefined();
    expect(example.body.data).toHaveProperty('viewer.workspace.id', ws.workspace.id);
  });

  it('batched requests (a JSON array) are refused', async () => {
    const response = await app.fetch(ws.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(ws.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toEqual({ errors: [{ message: 'Batching is not supported.', extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('field suggestions are hidden whenever introspection is off (production)', async () => {
    const typo = '{ viewr { workspace { id } } }';
    expect((await run(typo)).body.errors![0]!.message).toMatch(/Did you mean "viewer"\?/);
    const production = await createTestApp({ NODE_ENV: 'production' }, app.db);
    const message = (await run(typo, undefined, production)).body.errors![0]!.message;
    expect(message).not.toMatch(/viewer/);
    expect(message).toMatch(/Cannot query field "viewr"/);
  });

  it('the caller is authenticated and counted before the document is read', async () => {
    const limited = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3' }, app.db);
    const post = (headers: Record<string, string>, query: string) =>
      limited.fetch(ws.host, '/graphql', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    const tooDeep = deepQuery(15);
    for (const headers of [{}, bearer('cak_mistyped'), { ...bearer(ws.apiKey), 'x-channel-uuid': '00000000-0000-4000-8000-000000000000' }]) {
      for (const query of [tooDeep, '{ nonsense }']) {
        const response = await post(headers, query);
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
        expect((await response.json()).errors).toEqual([{ message: 'Unauthenticated.', extensions: { code: 'UNAUTHENTICATED' } }]);
      }
    }
    const refusedDocument = await post(bearer(ws.apiKey), tooDeep);
    expect(refusedDocument.headers.get('ratelimit-remaining')).toBe('2');
    expect(refusedDocument.headers.get('ratelimit-limit')).toBe('3');
    await post(bearer(ws.apiKey), '{ nonsense }');
    await post(bearer(ws.apiKey), '{ __typename }');
    const spent = await post(bearer(ws.apiKey), '{ __typename }');
    expect(spent.status).toBe(429);
    expect((await spent.json()).errors[0].extensions.code).toBe('RATE_LIMITED');
  });
});
