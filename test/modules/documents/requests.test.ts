import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentStore } from '../../../src/modules/documents/documents.service.js';
import { openTestDatabase } from '../../helpers/app.js';
import { addChannel, bearer, createConnection, workspaceWithChannel } from '../../helpers/factories.js';
import type { Database } from '../../../src/db/database.js';
import { documentsApp, getGraphQL, manifestOf, postGraphQL, register, sha256, storedDocuments, type DocumentsApp } from './helpers.js';

// Trusted documents on the HTTP surface (docs/graphql.md): a request names a registered document by
// id in either form, on POST, GET and an SSE stream; an id the workspace has not registered is
// PersistedQueryNotFound; a text beside an id runs and registers nothing. Documents are plain
// strings here, which the codegen of test/gql does not take up.

const VIEWER = 'query TrustedViewer { viewer { workspace { id name } channel { id } } }';
const CONTACT = 'query TrustedContact($id: ID!) { contact(id: $id) { id name } }';
const SEND = 'mutation TrustedSend($input: SendMessageInput!) { sendMessage(input: $input) { message { id body } userErrors { message } } }';
const ADDED = 'subscription TrustedAdded { messageAdded { id body } }';
const UNREGISTERED = 'query TrustedUnregistered { viewer { workspace { name } } }';

/** What the parser and the validation ran on, by document text: yoga's caches answer the rest. */
const parsed: string[] = [];
const validated: string[] = [];
const counting: Plugin = {
  onParse: ({ parseFn, setParseFn }) => {
    setParseFn((source, options) => {
      parsed.push(typeof source === 'string' ? source : source.body);
      return parseFn(source, options);
    });
  },
  onValidate: ({ validateFn, setValidationFn }) => {
    setValidationFn((schema, document, ...rest) => {
      validated.push(document.loc?.source.body ?? '');
      return validateFn(schema, document, ...rest);
    });
  },
};

let db: Database;
let app: DocumentsApp;
let home: Awaited<ReturnType<typeof workspaceWithChannel>>;
let other: Awaited<ReturnType<typeof workspaceWithChannel>>;

beforeAll(async () => {
  db = await openTestDatabase();
  app = await documentsApp(db, { plugins: [counting] });
  home = await workspaceWithChannel(db.prisma);
  other = await workspaceWithChannel(db.prisma);
  const registered = await register(app, home.host, home.apiKey, manifestOf(VIEWER, CONTACT, SEND, ADDED));
  expect(registered).toEqual({ status: 200, body: { data: { stored: 4 } } });
});
afterAll(async () => {
  await app.close();
  await db.close();
});

const viewerOf = (w: typeof home) => ({ viewer: { workspace: { id: w.workspace.id, name: 'Test workspace' }, channel: { id: w.channel.id } } });
const apq = (text: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(text) } });
const NOT_FOUND = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] };

describe('a registered document named by id', () => {
  it('runs on POST as {"documentId":"sha256:<hex>"} and as extensions.persistedQuery', async () => {
    expect(await postGraphQL(app, home.host, home.apiKey, { documentId: `sha256:${sha256(VIEWER)}` })).toEqual({ status: 200, body: { data: viewerOf(home) } });
    expect(await postGraphQL(app, home.host, home.apiKey, { extensions: apq(VIEWER) })).toEqual({ status: 200, body: { data: viewerOf(home) } });
    // The hex is case-insensitive; graphql-ws sends an empty query beside the id.
    expect(await postGraphQL(app, home.host, home.apiKey, { documentId: `sha256:${sha256(VIEWER).toUpperCase()}` })).toEqual({ status: 200, body: { data: viewerOf(home) } });
    expect(await postGraphQL(app, home.host, home.apiKey, { query: '', extensions: apq(VIEWER) })).toEqual({ status: 200, body: { data: viewerOf(home) } });
  });

  it('runs on GET in both forms, with its variables and operation name', async () => {
    const contact = await db.prisma.contact.create({ data: { workspaceId: home.workspace.id, name: 'Ada', email: `ada-${randomUUID()}@example.com` } });
    const variables = { id: contact.id };
    const expected = { status: 200, body: { data: { contact: { id: contact.id, name: 'Ada' } } } };
    expect(await getGraphQL(app, home.host, home.apiKey, { documentId: `sha256:${sha256(CONTACT)}`, variables, operationName: 'TrustedContact' })).toEqual(expected);
    expect(await getGraphQL(app, home.host, home.apiKey, { extensions: apq(CONTACT), variables })).toEqual(expected);
    expect(await postGraphQL(app, home.host, home.apiKey, { documentId: `sha256:${sha256(CONTACT)}`, variables })).toEqual(expected);
  });

  it('runs a mutation on POST, and refuses it on GET with 405 before anything runs', async () => {
    const input = { to: { phone: '+14155550188' }, message: `by id ${randomUUID()}` };
    const sent = await postGraphQL(app, home.host, home.apiKey, { documentId: `sha256:${sha256(SEND)}`, variables: { input } });
    expect(sent).toEqual({ status: 200, body: { data: { sendMessage: { message: { id: expect.any(String), body: input.message }, userErrors: [] } } } });

    const viaGet = { ...input, message: `via GET ${randomUUID()}` };
    const refused = await getGraphQL(app, home.host, home.apiKey, { documentId: `sha256:${sha256(SEND)}`, variables: { input: viaGet } });
    expect(refused.status).toBe(405);
    expect(await db.prisma.message.count({ where: { body: viaGet.message } })).toBe(0);
  });

  it('streams a subscription over SSE named by id', async () => {
    const response = await app.fetch(home.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(home.apiKey), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ documentId: `sha256:${sha256(ADDED)}` }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // Read from the start: the stream subscribes as it is read.
    const reading = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    })().catch(() => {});
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const body = `over SSE ${randomUUID()}`;
      const sent = await postGraphQL(app, home.host, home.apiKey, { documentId: `sha256:${sha256(SEND)}`, variables: { input: { to: { phone: '+14155550189' }, message: body } } });
      const id = sent.body.data.sendMessage.message.id;
      const deadline = Date.now() + 5000;
      while (!text.includes(body) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(text).toContain(`event: next\ndata: ${JSON.stringify({ data: { messageAdded: { id, body } } })}`);
    } finally {
      await reader.cancel();
      await reading;
    }
  });
});

describe('an id the workspace has not registered', () => {
  it('is PersistedQueryNotFound with PERSISTED_QUERY_NOT_FOUND, in either form, on POST and GET', async () => {
    for (const request of [{ documentId: `sha256:${sha256(UNREGISTERED)}` }, { extensions: apq(UNREGISTERED) }]) {
      expect(await postGraphQL(app, home.host, home.apiKey, request)).toEqual({ status: 200, body: NOT_FOUND });
      expect(await getGraphQL(app, home.host, home.apiKey, request)).toEqual({ status: 200, body: NOT_FOUND });
    }
  });

  it('is PersistedQueryNotFound for an id that is no SHA-256 document id at all', async () => {
    const hex = sha256(VIEWER);
    for (const documentId of [hex, `md5:${hex.slice(0, 32)}`, `sha256:${hex.slice(1)}`, `sha256:${hex}0`, 'sha256:', 42]) {
      expect(await postGraphQL(app, home.host, home.apiKey, { documentId }), String(documentId)).toEqual({ status: 200, body: NOT_FOUND });
    }
    expect(await postGraphQL(app, home.host, home.apiKey, { extensions: { persistedQuery: { version: 1, sha256Hash: 'not-a-hash' } } })).toEqual({ status: 200, body: NOT_FOUND });
  });

  it("is another workspace's document: unknown here, whoever registered it", async () => {
    for (const request of [{ documentId: `sha256:${sha256(VIEWER)}` }, { extensions: apq(VIEWER) }]) {
      expect(await postGraphQL(app, other.host, other.apiKey, request)).toEqual({ status: 200, body: NOT_FOUND });
    }
    expect(await storedDocuments(db, other.workspace.id)).toEqual({});
  });

  it('is answered without an id or a text as before: 400 "Must provide query string."', async () => {
    expect(await postGraphQL(app, home.host, home.apiKey, { variables: {} })).toEqual({
      status: 400,
      body: { errors: [{ message: 'Must provide query string.', extensions: { code: 'BAD_REQUEST' } }] },
    });
    // An APQ extension of a version this server does not know names no document.
    expect((await postGraphQL(app, home.host, home.apiKey, { extensions: { persistedQuery: { version: 2, sha256Hash: sha256(VIEWER) } } })).status).toBe(400);
  });
});

describe('a text beside an id', () => {
  it('runs the text, whatever the id names, and registers nothing', async () => {
    // The hash of the text itself, as automatic persisted queries send it after PersistedQueryNotFound.
    const answer = await postGraphQL(app, home.host, home.apiKey, { query: UNREGISTERED, extensions: apq(UNREGISTERED) });
    expect(answer).toEqual({ status: 200, body: { data: { viewer: { workspace: { name: 'Test workspace' } } } } });
    const withDocumentId = await postGraphQL(app, home.host, home.apiKey, { query: UNREGISTERED, documentId: `sha256:${sha256(UNREGISTERED)}` });
    expect(withDocumentId).toEqual(answer);
    // Another document's id beside the text: the text runs.
    expect(await postGraphQL(app, home.host, home.apiKey, { query: UNREGISTERED, documentId: `sha256:${sha256(VIEWER)}` })).toEqual(answer);

    expect(await postGraphQL(app, home.host, home.apiKey, { extensions: apq(UNREGISTERED) })).toEqual({ status: 200, body: NOT_FOUND });
    expect(Object.keys(await storedDocuments(db, home.workspace.id)).sort()).toEqual([VIEWER, CONTACT, SEND, ADDED].map(sha256).sort());
  });
});

describe('parsing and validation', () => {
  it('happen once per process for a registered document, however it is sent and however often', async () => {
    const text = 'query TrustedCounted { viewer { channel { id name } } }';
    const fresh = await workspaceWithChannel(db.prisma);
    expect((await register(app, fresh.host, fresh.apiKey, manifestOf(text))).status).toBe(200);
    const [parsedBefore, validatedBefore] = [parsed.length, validated.length];

    for (let i = 0; i < 5; i++) {
      const answer = await postGraphQL(app, fresh.host, fresh.apiKey, i % 2 ? { extensions: apq(text) } : { documentId: `sha256:${sha256(text)}` });
      expect(answer.body.data.viewer.channel.id).toBe(fresh.channel.id);
    }
    expect(await getGraphQL(app, fresh.host, fresh.apiKey, { documentId: `sha256:${sha256(text)}` })).toMatchObject({ status: 200 });
    // The stored text is handed to yoga unchanged: the same text sent as text shares its parse.
    expect((await postGraphQL(app, fresh.host, fresh.apiKey, { query: text })).body.data.viewer.channel.id).toBe(fresh.channel.id);
    // Registration parsed and validated it on its own checker, which these counters do not see.
    expect(parsed.slice(parsedBefore)).toEqual([text]);
    expect(validated.slice(validatedBefore)).toEqual([text]);
  });
});

describe('X-Channel-Uuid', () => {
  it('is not needed to register, and a document runs for the channel the header names', async () => {
    const second = await addChannel(db.prisma, home.workspace.id, 'Second');
    const connection = await createConnection(db.prisma, { workspaceId: home.workspace.id, name: 'Both', channelIds: [home.channel.id, second.channel.id] });
    const extra = 'query TrustedChannels { channels { id } }';
    expect(await register(app, home.host, connection.token, manifestOf(extra))).toEqual({ status: 200, body: { data: { stored: 1 } } });
    const answer = await postGraphQL(app, home.host, connection.token, { documentId: `sha256:${sha256(extra)}` });
    expect(answer.body.data.channels.map((c: { id: string }) => c.id).sort()).toEqual([home.channel.id, second.channel.id].sort());
    const named = await app.fetch(home.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(connection.token), 'x-channel-uuid': second.channel.id, 'content-type': 'application/json' },
      body: JSON.stringify({ documentId: `sha256:${sha256(VIEWER)}` }),
    });
    expect(((await named.json()) as any).data.viewer.channel).toEqual({ id: second.channel.id });
  });
});

describe('the document cache of a process', () => {
  it('keeps at most its bound of documents and characters, the least recently used let go, and finds the others again', async () => {
    const texts = ['query CacheA { viewer { workspace { id } } }', 'query CacheB { viewer { channel { id } } }', 'query CacheC { viewer { workspace { name } } }'];
    const ws = await workspaceWithChannel(db.prisma);
    expect((await register(app, ws.host, ws.apiKey, manifestOf(...texts))).status).toBe(200);
    const [a, b, c] = texts.map(sha256) as [string, string, string];

    const byCount = createDocumentStore(db.query, { entries: 2, characters: 10_000 });
    expect(await byCount.get(ws.workspace.id, a)).toBe(texts[0]);
    expect(await byCount.get(ws.workspace.id, b)).toBe(texts[1]);
    expect(await byCount.get(ws.workspace.id, a)).toBe(texts[0]);
    expect(await byCount.get(ws.workspace.id, c)).toBe(texts[2]);
    expect(byCount.size).toBe(2);
    // Another workspace's id, an unknown one and no id at all are found nowhere, and nothing is kept of them.
    expect(await byCount.get(other.workspace.id, a)).toBeNull();
    expect(await byCount.get(ws.workspace.id, sha256('unknown'))).toBeNull();
    expect(await byCount.get(ws.workspace.id, 'not-a-hash')).toBeNull();
    expect(byCount.size).toBe(2);

    const byCharacters = createDocumentStore(db.query, { entries: 100, characters: texts[1]!.length + texts[2]!.length });
    for (const hash of [a, b, c]) await byCharacters.get(ws.workspace.id, hash);
    // A let go to make room for C: B and C fill the budget exactly.
    expect(byCharacters.size).toBe(2);
    expect(await byCharacters.get(ws.workspace.id, a)).toBe(texts[0]);
  });
});
