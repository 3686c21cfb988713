import { randomUUID } from 'node:crypto';
import { parse, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { operationParams } from '../../../src/graphql/trusted-documents.js';
import { resolveCredential } from '../../../src/modules/credentials/credentials.service.js';
import { actAs } from '../../../src/context/act-as.js';
import { createDocumentStore } from '../../../src/modules/documents/documents.service.js';
import { hashToken } from '../../../src/lib/tokens.js';
import { openTestDatabase } from '../../helpers/app.js';
import { runAdminOn } from '../../helpers/admin.js';
import { addChannel, bearer, createConnection, workspaceWithChannel } from '../../helpers/factories.js';
import { documentsApp, getGraphQL, manifestOf, postGraphQL, register, sessionCaller, sha256, type DocumentsApp } from './helpers.js';

// `workspace:configure --trusted-documents-only on` (docs/graphql.md): session tokens may run only
// the workspace's registered documents, by id; any text, a registered one's included, is refused
// with PERSISTED_QUERY_ONLY and nothing runs. Backend credentials are never restricted.

const VIEWER = 'query OnlyViewer { viewer { workspace { id } } }';
const SEND = 'mutation OnlySend($input: SendMessageInput!) { sendMessage(input: $input) { message { id body } userErrors { message } } }';
const ADDED = 'subscription OnlyAdded { messageAdded { id } }';
const TEXT_REFUSED = {
  errors: [
    {
      message: "This workspace runs only its registered documents for this credential: send the document's id (documentId, or extensions.persistedQuery) instead of its text.",
      extensions: { code: 'PERSISTED_QUERY_ONLY' },
    },
  ],
};

let db: Database;
let app: DocumentsApp;
/** A workspace with the switch on, and one with it off. */
let locked: Awaited<ReturnType<typeof workspaceWithChannel>>;
let open: Awaited<ReturnType<typeof workspaceWithChannel>>;

beforeAll(async () => {
  db = await openTestDatabase();
  app = await documentsApp(db);
  locked = await workspaceWithChannel(db.prisma);
  open = await workspaceWithChannel(db.prisma);
  for (const w of [locked, open]) expect((await register(app, w.host, w.apiKey, manifestOf(VIEWER, SEND, ADDED))).status).toBe(200);
  expect((await runAdminOn(db, ['workspace:configure', '--hostname', locked.host, '--trusted-documents-only', 'on'])).code).toBe(0);
});
afterAll(async () => {
  await app.close();
  await db.close();
});

const sendInput = (message: string) => ({ input: { to: { phone: '+14155550177' }, message } });
const messagesWith = (body: string) => db.prisma.message.count({ where: { body } });

describe('a session token of a workspace with the switch on', () => {
  // Resolved after the switch was turned on: the caller's workspace carries it as stored.
  const session = () => sessionCaller(app, locked.host, locked.apiKey);

  it('runs registered documents by id, in either form, on POST and GET', async () => {
    const token = await session();
    const expected = { status: 200, body: { data: { viewer: { workspace: { id: locked.workspace.id } } } } };
    expect(await postGraphQL(app, locked.host, token, { documentId: `sha256:${sha256(VIEWER)}` })).toEqual(expected);
    expect(await postGraphQL(app, locked.host, token, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(VIEWER) } } })).toEqual(expected);
    expect(await getGraphQL(app, locked.host, token, { documentId: `sha256:${sha256(VIEWER)}` })).toEqual(expected);
    const body = `by id ${randomUUID()}`;
    const sent = await postGraphQL(app, locked.host, token, { documentId: `sha256:${sha256(SEND)}`, variables: sendInput(body) });
    expect(sent.body.data.sendMessage.message.body).toBe(body);
    expect(await messagesWith(body)).toBe(1);
  });

  it('is refused any text with PERSISTED_QUERY_ONLY, a registered one included, and nothing runs', async () => {
    const token = await session();
    const body = `as text ${randomUUID()}`;
    const requests = [
      { query: 'query Other { viewer { channel { id } } }' },
      { query: VIEWER },
      { query: SEND, variables: sendInput(body) },
      // A text beside an id it is not: another registered document's, or an unknown one.
      { query: SEND, variables: sendInput(body), documentId: `sha256:${sha256(VIEWER)}` },
      { query: `${SEND} `.replace('body', 'body id'), variables: sendInput(body), extensions: { persistedQuery: { version: 1, sha256Hash: sha256(SEND) } } },
      { query: SEND, variables: sendInput(body), extensions: { persistedQuery: { version: 1, sha256Hash: sha256(`${SEND} `) } } },
    ];
    for (const request of requests) expect(await postGraphQL(app, locked.host, token, request), JSON.stringify(request)).toEqual({ status: 200, body: TEXT_REFUSED });
    expect(await getGraphQL(app, locked.host, token, { query: VIEWER })).toEqual({ status: 200, body: TEXT_REFUSED });
    expect(await messagesWith(body)).toBe(0);
  });

  it('is refused a subscription sent as text over SSE', async () => {
    const token = await session();
    const stream = (request: unknown) =>
      app.fetch(locked.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(request),
      });
    const refused = await stream({ query: ADDED });
    expect(await refused.text()).toContain(JSON.stringify(TEXT_REFUSED));
    // (A stream by id is served as any other; a subscription checks its credential in the
    // database as it starts, which this stand-in session is not in.)
  });

  it('runs a text beside the id of the registered document it is (the same after print()), as that document', async () => {
    const token = await session();
    const reformatted = print(parse(SEND));
    expect(reformatted).not.toBe(SEND);
    const ids = [
      { documentId: `sha256:${sha256(SEND)}` },
      { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(SEND) } } },
      { extensions: { persistedQuery: { version: 1, sha256Hash: `sha256:${sha256(SEND)}` } } },
      // Apollo Client's id: the SHA-256 of print() of the document.
      { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(reformatted) } } },
    ];
    for (const [index, id] of ids.entries()) {
      for (const text of [SEND, reformatted]) {
        const body = `text and id ${index} ${randomUUID()}`;
        const sent = await postGraphQL(app, locked.host, token, { query: text, variables: sendInput(body), ...id });
        expect(sent.body.errors, JSON.stringify(id)).toBeUndefined();
        expect(sent.body.data.sendMessage.message.body).toBe(body);
        expect(await messagesWith(body)).toBe(1);
      }
    }
  });

  it('finds a registered document by the SHA-256 of print() of its text, and takes sha256: in sha256Hash', async () => {
    const token = await session();
    const expected = { status: 200, body: { data: { viewer: { workspace: { id: locked.workspace.id } } } } };
    const printed = sha256(print(parse(VIEWER)));
    expect(printed).not.toBe(sha256(VIEWER));
    expect(await postGraphQL(app, locked.host, token, { extensions: { persistedQuery: { version: 1, sha256Hash: printed } } })).toEqual(expected);
    expect(await postGraphQL(app, locked.host, token, { documentId: `sha256:${printed}` })).toEqual(expected);
    expect(await getGraphQL(app, locked.host, token, { extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash: `sha256:${printed}` } }) })).toEqual(expected);
    expect(await postGraphQL(app, locked.host, token, { extensions: { persistedQuery: { version: 1, sha256Hash: `sha256:${sha256(VIEWER)}` } } })).toEqual(expected);
  });

  it('finds a document stored before printed hashes were kept by its printed hash, and keeps that hash', async () => {
    const token = await session();
    const older = 'query Older { viewer { channel { id } } }';
    await db.prisma.graphqlDocument.create({ data: { workspaceId: locked.workspace.id, hash: sha256(older), body: older } });
    const printed = sha256(print(parse(older)));
    expect(await postGraphQL(app, locked.host, token, { extensions: { persistedQuery: { version: 1, sha256Hash: printed } } })).toEqual({
      status: 200,
      body: { data: { viewer: { channel: { id: locked.channel.id } } } },
    });
    const row = await db.prisma.graphqlDocument.findUniqueOrThrow({ where: { workspaceId_hash: { workspaceId: locked.workspace.id, hash: sha256(older) } } });
    expect(row.printedHash).toBe(printed);
  });

  it('gets PersistedQueryNotFound for an id its workspace has not registered', async () => {
    const token = await session();
    expect(await postGraphQL(app, locked.host, token, { documentId: `sha256:${sha256('query Unregistered { viewer { workspace { name } } }')}` })).toEqual({
      status: 200,
      body: { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] },
    });
  });
});

describe('backend credentials of a workspace with the switch on', () => {
  it('run texts and ids alike: channel keys and connection tokens are never restricted', async () => {
    const second = await addChannel(db.prisma, locked.workspace.id, 'Second');
    const connection = await createConnection(db.prisma, { workspaceId: locked.workspace.id, name: 'Backend', channelIds: [locked.channel.id, second.channel.id] });
    for (const token of [locked.apiKey, connection.token]) {
      const caller = await resolveCredential(db.query, { host: locked.host, tokenHash: hashToken(token) });
      expect(caller!.workspace.trustedDocumentsOnly).toBe(true);
      const headers: Record<string, string> = token === connection.token ? { 'x-channel-uuid': locked.channel.id } : {};
      const post = async (request: unknown) => {
        const response = await app.fetch(locked.host, '/graphql', { method: 'POST', headers: { ...bearer(token), ...headers, 'content-type': 'application/json' }, body: JSON.stringify(request) });
        return (await response.json()) as any;
      };
      expect(await post({ query: 'query Other { viewer { workspace { name } } }' })).toEqual({ data: { viewer: { workspace: { name: 'Test workspace' } } } });
      expect(await post({ documentId: `sha256:${sha256(VIEWER)}` })).toEqual({ data: { viewer: { workspace: { id: locked.workspace.id } } } });
      const body = `backend text ${randomUUID()}`;
      expect((await post({ query: SEND, variables: sendInput(body) })).data.sendMessage.message.body).toBe(body);
      expect(await messagesWith(body)).toBe(1);
    }
  });
});

describe('a session token of a workspace with the switch off', () => {
  it('runs texts as well as ids', async () => {
    const token = await sessionCaller(app, open.host, open.apiKey);
    expect(await postGraphQL(app, open.host, token, { query: 'query Other { viewer { workspace { name } } }' })).toEqual({
      status: 200,
      body: { data: { viewer: { workspace: { name: 'Test workspace' } } } },
    });
    expect((await postGraphQL(app, open.host, token, { documentId: `sha256:${sha256(VIEWER)}` })).body.data.viewer.workspace.id).toBe(open.workspace.id);
  });

  it('is restricted once the switch is turned on, as its workspace is read again', async () => {
    const w = await workspaceWithChannel(db.prisma);
    expect((await register(app, w.host, w.apiKey, manifestOf(VIEWER))).status).toBe(200);
    const before = await sessionCaller(app, w.host, w.apiKey);
    expect((await postGraphQL(app, w.host, before, { query: VIEWER })).body.data).toEqual({ viewer: { workspace: { id: w.workspace.id } } });
    expect((await runAdminOn(db, ['workspace:configure', '--hostname', w.host, '--trusted-documents-only', 'on'])).code).toBe(0);
    const after = await sessionCaller(app, w.host, w.apiKey);
    expect(await postGraphQL(app, w.host, after, { query: VIEWER })).toEqual({ status: 200, body: TEXT_REFUSED });
  });
});

describe('operationParams, for a transport outside yoga (a WebSocket subscribe message)', () => {
  it('turns an id in extensions.persistedQuery beside an empty query into the registered text, with the same refusals', async () => {
    const documents = createDocumentStore(db.query);
    const backend = actAs((await resolveCredential(db.query, { host: locked.host, tokenHash: hashToken(locked.apiKey) }))!, null);
    const session = { ...backend, credential: { ...backend.credential, kind: 'session' as typeof backend.credential.kind } };
    const byId = { query: '', variables: { a: 1 }, operationName: 'OnlyAdded', extensions: { persistedQuery: { version: 1, sha256Hash: sha256(ADDED) } } };

    for (const caller of [backend, session]) {
      expect(await operationParams(documents, caller, byId)).toEqual({ ...byId, query: ADDED });
      await expect(operationParams(documents, caller, { ...byId, extensions: { persistedQuery: { version: 1, sha256Hash: sha256('nope') } } })).rejects.toMatchObject({
        message: 'PersistedQueryNotFound',
        extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
      });
      await expect(operationParams(documents, caller, { query: '' })).rejects.toMatchObject({ message: 'Must provide query string.' });
    }
    expect(await operationParams(documents, backend, { query: ADDED })).toEqual({ query: ADDED });
    await expect(operationParams(documents, session, { query: ADDED })).rejects.toMatchObject({ extensions: { code: 'PERSISTED_QUERY_ONLY' } });
    // A text beside its id (Apollo's GraphQLWsLink sends both): the registered document, the same after print().
    const printed = print(parse(ADDED));
    const apollo = { persistedQuery: { version: 1, sha256Hash: sha256(printed) } };
    expect(await operationParams(documents, session, { query: printed, extensions: apollo })).toEqual({ query: ADDED, extensions: apollo });
    expect(await operationParams(documents, session, { query: ADDED, extensions: byId.extensions })).toEqual({ query: ADDED, extensions: byId.extensions });
    await expect(operationParams(documents, session, { query: 'subscription Other { messageAdded { body } }', extensions: apollo })).rejects.toMatchObject({
      extensions: { code: 'PERSISTED_QUERY_ONLY' },
    });
    // Another workspace's caller does not find this workspace's document.
    const lockedOnly = 'query LockedOnly { viewer { channel { id } } }';
    expect((await register(app, locked.host, locked.apiKey, manifestOf(lockedOnly))).status).toBe(200);
    const named = { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: sha256(lockedOnly) } } };
    expect((await operationParams(documents, backend, named)).query).toBe(lockedOnly);
    const stranger = actAs((await resolveCredential(db.query, { host: open.host, tokenHash: hashToken(open.apiKey) }))!, null);
    await expect(operationParams(documents, stranger, named)).rejects.toMatchObject({ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });
  });
});
