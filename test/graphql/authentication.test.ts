import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openTestDatabase } from '../helpers/app.js';
import { runAdminOn } from '../helpers/admin.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
import { documentsApp, manifestOf, register, sessionCaller, sha256, type DocumentsApp } from '../modules/documents/helpers.js';

// Every GraphQL request is authenticated before any of its GraphQL is parsed, validated or run,
// whatever its Accept header (docs/graphql.md#graphiql): in production there is no GraphiQL page,
// so a GET asking for HTML is an ordinary GraphQL GET, and the trusted-documents switch holds on it.

const VIEWER = 'query AuthViewer { viewer { workspace { name } } }';
const ACCEPTS = ['text/html, application/json', 'text/html', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'application/json', '*/*'];

const variants: { name: string; env: Record<string, string> }[] = [
  { name: 'production', env: { NODE_ENV: 'production' } },
  // Introspection on in production changes nothing about who is answered.
  { name: 'production with introspection', env: { NODE_ENV: 'production', GRAPHQL_INTROSPECTION: '1' } },
];

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db.close());

describe.each(variants)('a $name server', ({ env }) => {
  let app: DocumentsApp;
  let locked: Awaited<ReturnType<typeof workspaceWithChannel>>;
  beforeAll(async () => {
    app = await documentsApp(db, { env });
    locked = await workspaceWithChannel(db.prisma);
    expect((await register(app, locked.host, locked.apiKey, manifestOf(VIEWER))).status).toBe(200);
    expect((await runAdminOn(db, ['workspace:configure', '--hostname', locked.host, '--trusted-documents-only', 'on'])).code).toBe(0);
  });
  afterAll(() => app.close());

  const get = (query: Record<string, string>, headers: Record<string, string>) => app.fetch(locked.host, `/graphql?${new URLSearchParams(query)}`, { headers });

  it('holds a session of a trusted-documents-only workspace to its registered documents on a GET asking for HTML', async () => {
    const token = await sessionCaller(app, locked.host, locked.apiKey);
    for (const accept of ACCEPTS) {
      const response = await get({ query: '{viewer{workspace{name}}}' }, { ...bearer(token), accept });
      const text = await response.text();
      expect(text, accept).not.toContain('Test workspace');
      // An Accept naming no GraphQL answer's type is yoga's 406, with nothing run.
      if (accept === 'text/html') {
        expect(response.status).toBe(406);
        continue;
      }
      expect(text, accept).toContain('PERSISTED_QUERY_ONLY');
      expect(text, accept).not.toContain('"data":{');
      // The registered document by id runs.
      const byId = await get({ documentId: `sha256:${sha256(VIEWER)}` }, { ...bearer(token), accept });
      expect(byId.status, accept).toBe(200);
      expect(await byId.text(), accept).toContain('"name":"Test workspace"');
    }
  });

  it('answers a GraphQL request without a valid credential 401, with no trace of the schema, whatever its Accept', async () => {
    const documents = ['{ viewer { secretField } }', '{ viewer { workspace { nam } } }', '{ __schema { types { name } } }', '{ viewer {', '{viewer{workspace{name}}}'];
    for (const accept of ACCEPTS) {
      for (const credential of [{}, bearer('cst_not-a-real-token'), bearer(locked.apiKey.slice(0, -2))]) {
        for (const query of documents) {
          const response = await get({ query }, { ...credential, accept });
          const text = await response.text();
          expect(response.status, `${accept} ${query}`).toBe(401);
          expect(text).not.toMatch(/Cannot query|Did you mean|Syntax Error|__schema|secretField|workspace|"data"/);
        }
        const posted = await app.fetch(locked.host, '/graphql', {
          method: 'POST',
          headers: { ...credential, accept, 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ viewer { secretField } }' }),
        });
        expect(posted.status).toBe(401);
        expect(await posted.text()).not.toMatch(/Cannot query|secretField/);
      }
    }
  });

  it('serves no GraphiQL page', async () => {
    const response = await app.fetch(locked.host, '/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(401);
    expect(await response.text()).not.toContain('GraphiQL');
  });
});
