import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { resolveCredential } from '../../../src/modules/credentials/credentials.service.js';
import { hashToken } from '../../../src/lib/tokens.js';
import { openTestDatabase } from '../../helpers/app.js';
import { runAdminOn } from '../../helpers/admin.js';
import { bearer, workspaceWithChannel } from '../../helpers/factories.js';
import { documentsApp, manifestOf, register, sessionCaller, sha256, storedDocuments, type DocumentsApp } from './helpers.js';

// Registering a workspace's documents (docs/graphql.md): graphql-codegen client preset's manifest
// over REST or the admin command, each key checked against its text and each text against the
// schema and the document limits, all or nothing, and nothing new the second time.

const A = 'query RegA { viewer { workspace { id } } }';
const B = 'query RegB($first: Int) { contacts(first: $first) { edges { node { id name } } } }';
const C = 'fragment RegFields on Contact { id email }\nquery RegC($id: ID!) { contact(id: $id) { ...RegFields } }';

/** A query whose fields nest `levels` conversations deep. */
const nested = (levels: number) =>
  `query Deep($id: ID!) { conversation(id: $id) { ${'messages { edges { node { conversation { '.repeat(levels)}id${' } } } }'.repeat(levels)} } }`;

/** Documents over each document limit (depth 12, aliases 30, tokens 5000, directives 50), each otherwise valid. */
const OVER_LIMITS = {
  depth: nested(3),
  aliases: `query ManyAliases { ${Array.from({ length: 31 }, (_, i) => `a${i}: viewer { workspace { id } }`).join(' ')} }`,
  tokens: `query ManyTokens { viewer { workspace { ${'id '.repeat(5000)}} } }`,
  directives: `query ManyDirectives { viewer { workspace { ${'id @include(if: true) '.repeat(51)}} } }`,
};

let db: Database;
let app: DocumentsApp;
let w: Awaited<ReturnType<typeof workspaceWithChannel>>;

beforeAll(async () => {
  db = await openTestDatabase();
  app = await documentsApp(db);
  w = await workspaceWithChannel(db.prisma);
});
afterAll(async () => {
  await app.close();
  await db.close();
});

async function freshWorkspace() {
  return workspaceWithChannel(db.prisma);
}

describe('POST /api/connect/graphql/documents', () => {
  it('stores each document under its hash, and stores nothing new when the manifest comes again', async () => {
    const ws = await freshWorkspace();
    expect(await register(app, ws.host, ws.apiKey, manifestOf(A, B))).toEqual({ status: 200, body: { data: { stored: 2 } } });
    expect(await storedDocuments(db, ws.workspace.id)).toEqual(manifestOf(A, B));
    expect(await register(app, ws.host, ws.apiKey, manifestOf(A, B))).toEqual({ status: 200, body: { data: { stored: 0 } } });
    // The next build's manifest holds the old documents and a new one: only the new one is stored.
    expect(await register(app, ws.host, ws.apiKey, manifestOf(A, B, C))).toEqual({ status: 200, body: { data: { stored: 1 } } });
    expect(await storedDocuments(db, ws.workspace.id)).toEqual(manifestOf(A, B, C));
  });

  it('takes keys as the client preset writes them (sha256:<hex>) or as bare hex, in any case of hex', async () => {
    const ws = await freshWorkspace();
    const manifest = { [`sha256:${sha256(A)}`]: A, [sha256(B).toUpperCase()]: B, [`sha256:${sha256(C).toUpperCase()}`]: C };
    expect(await register(app, ws.host, ws.apiKey, manifest)).toEqual({ status: 200, body: { data: { stored: 3 } } });
    expect(await storedDocuments(db, ws.workspace.id)).toEqual(manifestOf(A, B, C));
    // The same documents under the other spelling of their ids are the same documents.
    expect(await register(app, ws.host, ws.apiKey, manifestOf(A, B, C))).toEqual({ status: 200, body: { data: { stored: 0 } } });
  });

  it('refuses a key that is not the SHA-256 of its document with a 422 naming the key, storing none of the manifest', async () => {
    const ws = await freshWorkspace();
    const notHex = 'RegA';
    const otherPrefix = `md5:${sha256(A).slice(0, 32)}`;
    const wrong = sha256(`${A} `);
    const answer = await register(app, ws.host, ws.apiKey, { ...manifestOf(B), [notHex]: A, [otherPrefix]: A, [`sha256:${wrong}`]: A, [sha256(C).slice(0, 40)]: C });
    expect(answer).toEqual({
      status: 422,
      body: {
        message: "The key must be the document's id: sha256: followed by the 64 hexadecimal characters of its SHA-256.",
        errors: {
          [notHex]: ["The key must be the document's id: sha256: followed by the 64 hexadecimal characters of its SHA-256."],
          [otherPrefix]: ["The key must be the document's id: sha256: followed by the 64 hexadecimal characters of its SHA-256."],
          [`sha256:${wrong}`]: ['The key is not the SHA-256 of its document.'],
          [sha256(C).slice(0, 40)]: ["The key must be the document's id: sha256: followed by the 64 hexadecimal characters of its SHA-256."],
        },
      },
    });
    expect(await storedDocuments(db, ws.workspace.id)).toEqual({});
  });

  it('refuses a document invalid against the schema, naming its key, storing none of the manifest', async () => {
    const ws = await freshWorkspace();
    const invalid = {
      unknownField: 'query RegBad { viewer { nope } }',
      syntax: 'query RegBroken { viewer { ',
      missingVariable: 'query RegVar { contact(id: $id) { id } }',
      emptyText: '',
    };
    const answer = await register(app, ws.host, ws.apiKey, { ...manifestOf(A), ...manifestOf(...Object.values(invalid)) });
    expect(answer.status).toBe(422);
    expect(Object.keys(answer.body.errors).sort()).toEqual(Object.values(invalid).map(sha256).sort());
    expect(answer.body.errors[sha256(invalid.unknownField)]).toEqual(['The document is not valid against the schema: Cannot query field "nope" on type "Viewer".']);
    expect(answer.body.errors[sha256(invalid.syntax)][0]).toMatch(/^The document is not valid against the schema: Syntax Error: /);
    expect(answer.body.errors[sha256(invalid.missingVariable)]).toEqual(['The document is not valid against the schema: Variable "$id" is not defined by operation "RegVar".']);
    expect(await storedDocuments(db, ws.workspace.id)).toEqual({});
  });

  it('refuses a document over a document limit, as the server would refuse it at run time', async () => {
    const ws = await freshWorkspace();
    for (const [limit, text] of Object.entries(OVER_LIMITS)) {
      const answer = await register(app, ws.host, ws.apiKey, { ...manifestOf(A), ...manifestOf(text) });
      expect(answer.status, limit).toBe(422);
      expect(Object.keys(answer.body.errors), limit).toEqual([sha256(text)]);
      expect(answer.body.errors[sha256(text)][0], limit).toMatch(new RegExp(`^The document is not valid against the schema: .*${limit === 'aliases' ? 'alias' : limit.replace(/s$/, '')}`, 'i'));

      // Sent as text, the same document is refused with QUERY_TOO_COMPLEX.
      const response = await app.fetch(ws.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(ws.apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ query: text, variables: { id: ws.channel.id } }),
      });
      const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code, limit).toBe('QUERY_TOO_COMPLEX');
    }
    // At the limits, each is taken.
    const atLimits = [nested(2), `query Aliases { ${Array.from({ length: 30 }, (_, i) => `a${i}: viewer { workspace { id } }`).join(' ')} }`];
    expect(await register(app, ws.host, ws.apiKey, manifestOf(...atLimits))).toEqual({ status: 200, body: { data: { stored: 2 } } });
  });

  it('refuses a body that is no manifest: not an object, empty, or with a document that is not a string', async () => {
    const ws = await freshWorkspace();
    const bodyError = (answer: { status: number; body: any }) => [answer.status, Object.keys(answer.body.errors ?? {})];
    expect(bodyError(await register(app, ws.host, ws.apiKey, [A]))).toEqual([422, ['body']]);
    expect(bodyError(await register(app, ws.host, ws.apiKey, 'null'))).toEqual([422, ['body']]);
    expect(bodyError(await register(app, ws.host, ws.apiKey, {}))).toEqual([422, ['body']]);
    const answer = await register(app, ws.host, ws.apiKey, { ...manifestOf(A), [sha256(B)]: { text: B } });
    expect(answer).toEqual({ status: 422, body: { message: 'The document must be the text of a GraphQL document.', errors: { [sha256(B)]: ['The document must be the text of a GraphQL document.'] } } });
    expect(await register(app, ws.host, ws.apiKey, `{"${sha256(A)}": `)).toEqual({ status: 400, body: { status: 'error', message: 'Malformed JSON body.' } });
    expect(await storedDocuments(db, ws.workspace.id)).toEqual({});
  });

  it("stores documents for the caller's workspace only", async () => {
    const one = await freshWorkspace();
    const two = await freshWorkspace();
    expect((await register(app, one.host, one.apiKey, manifestOf(A))).status).toBe(200);
    expect(await storedDocuments(db, two.workspace.id)).toEqual({});
    // The same document registered by another workspace is new to it.
    expect(await register(app, two.host, two.apiKey, manifestOf(A))).toEqual({ status: 200, body: { data: { stored: 1 } } });
  });

  it('needs a backend credential: 401 without one, 403 for a session token', async () => {
    const ws = await freshWorkspace();
    expect((await register(app, ws.host, 'cak_not-a-key', manifestOf(A))).status).toBe(401);
    const session = await sessionCaller(app, ws.host, ws.apiKey);
    expect(await register(app, ws.host, session, manifestOf(A))).toEqual({
      status: 403,
      body: { status: 'error', message: 'Only a backend credential (a channel key or a connection token) may do this: managing credentials, registering documents, importing contacts. A session never can.' },
    });
    expect(await storedDocuments(db, ws.workspace.id)).toEqual({});
  });
});

describe('npm run admin -- graphql:documents', () => {
  const files: string[] = [];
  const file = (content: string) => {
    const name = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'documents-')), 'persisted-documents.json');
    fs.writeFileSync(name, content);
    files.push(path.dirname(name));
    return name;
  };
  afterAll(() => files.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  it('registers a manifest file for the workspace of --hostname, and nothing new the second time', async () => {
    const ws = await freshWorkspace();
    const manifest = file(JSON.stringify(manifestOf(A, B), null, 2));
    const first = await runAdminOn(db, ['graphql:documents', '--hostname', ws.host, '--file', manifest]);
    expect([first.code, first.json, first.stderr]).toEqual([0, { stored: 2 }, '']);
    expect(await storedDocuments(db, ws.workspace.id)).toEqual(manifestOf(A, B));
    expect((await runAdminOn(db, ['graphql:documents', '--hostname', ws.host, '--file', manifest])).json).toEqual({ stored: 0 });

    // What the command registered, the server runs by id.
    const response = await app.fetch(ws.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(ws.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ documentId: `sha256:${sha256(A)}` }),
    });
    expect(await response.json()).toEqual({ data: { viewer: { workspace: { id: ws.workspace.id } } } });
  });

  it('refuses a bad manifest with one line naming each refused key, storing nothing', async () => {
    const ws = await freshWorkspace();
    const wrong = sha256('something else');
    const bad = 'query RegBad { viewer { nope } }';
    const result = await runAdminOn(db, ['graphql:documents', '--hostname', ws.host, '--file', file(JSON.stringify({ ...manifestOf(A, bad), [wrong]: B }))]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`${wrong}: The key is not the SHA-256 of its document.`);
    expect(result.stderr).toContain(`${sha256(bad)}: The document is not valid against the schema: Cannot query field "nope" on type "Viewer".`);
    expect(result.stderr).not.toContain(sha256(A));
    expect(await storedDocuments(db, ws.workspace.id)).toEqual({});
  });

  it('refuses a missing file, a file that is not JSON, an unknown hostname and missing flags', async () => {
    const ws = await freshWorkspace();
    const missing = await runAdminOn(db, ['graphql:documents', '--hostname', ws.host, '--file', '/nonexistent/persisted-documents.json']);
    expect([missing.code, missing.stderr]).toEqual([1, 'error: cannot read --file /nonexistent/persisted-documents.json: ENOENT']);
    const notJson = await runAdminOn(db, ['graphql:documents', '--hostname', ws.host, '--file', file('{"a": ')]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/^error: --file .* is not JSON: /);
    const unknown = await runAdminOn(db, ['graphql:documents', '--hostname', 'nobody.test', '--file', file(JSON.stringify(manifestOf(A)))]);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'error: No workspace has hostname nobody.test.']);
    const noFile = await runAdminOn(db, ['graphql:documents', '--hostname', ws.host]);
    expect([noFile.code, noFile.stderr]).toEqual([2, 'error: --file is required']);
  });
});

describe('npm run admin -- workspace:configure --trusted-documents-only', () => {
  it('turns the switch on and off, and the credentials of the workspace carry it', async () => {
    const ws = await freshWorkspace();
    const resolved = async () => (await resolveCredential(db.query, { host: ws.host, tokenHash: hashToken(ws.apiKey) }))!.workspace.trustedDocumentsOnly;
    expect(await resolved()).toBe(false);

    const on = await runAdminOn(db, ['workspace:configure', '--hostname', ws.host, '--trusted-documents-only', 'on']);
    expect([on.code, on.json]).toEqual([0, { id: ws.workspace.id, hostname: ws.host, trustedDocumentsOnly: true }]);
    expect((await db.prisma.workspace.findUniqueOrThrow({ where: { id: ws.workspace.id } })).trustedDocumentsOnly).toBe(true);
    expect(await resolved()).toBe(true);

    const off = await runAdminOn(db, ['workspace:configure', '--hostname', ws.host, '--trusted-documents-only', 'off']);
    expect(off.json).toEqual({ id: ws.workspace.id, hostname: ws.host, trustedDocumentsOnly: false });
    expect(await resolved()).toBe(false);
  });

  it('refuses a value other than on or off, and an unknown hostname', async () => {
    const ws = await freshWorkspace();
    const bad = await runAdminOn(db, ['workspace:configure', '--hostname', ws.host, '--trusted-documents-only', 'yes']);
    expect([bad.code, bad.stderr]).toEqual([2, 'error: --trusted-documents-only must be on or off']);
    const missing = await runAdminOn(db, ['workspace:configure', '--hostname', ws.host]);
    expect([missing.code, missing.stderr]).toEqual([2, 'error: --trusted-documents-only is required']);
    const unknown = await runAdminOn(db, ['workspace:configure', '--hostname', 'nobody.test', '--trusted-documents-only', 'on']);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'error: No workspace has hostname nobody.test.']);
    expect((await db.prisma.workspace.findUniqueOrThrow({ where: { id: ws.workspace.id } })).trustedDocumentsOnly).toBe(false);
  });
});
