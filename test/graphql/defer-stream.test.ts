import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { Client as UrqlClient, fetchExchange } from '@urql/core';
import { parse } from 'graphql';
import { serveOnPort } from '../helpers/real-port.js';
import { socketClient } from '../helpers/websocket.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { runAdminOn } from '../helpers/admin.js';
import { bearer } from '../helpers/factories.js';
import { postOperation } from '../helpers/graphql.js';
import { messagingSetup } from '../helpers/messaging.js';
import { multipartParts } from '../helpers/multipart.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { mintSession } from '../helpers/sessions.js';
import { manifestOf, sha256 } from '../modules/documents/helpers.js';

/*
 * `@defer` and `@stream` over `multipart/mixed` through the real /graphql endpoint
 * (docs/graphql.md#incremental-delivery-defer-and-stream): the initial part, then the deferred or
 * streamed parts; queries holding them are run by the interpreter, not the compiled-query plugin,
 * which would answer them whole in one part; the cost limit, the scopes and the
 * trusted-documents switch hold as for any other operation.
 */

const THREAD = `query Thread($id: ID!) {
  conversation(id: $id) {
    id
    status
    ... @defer(label: "thread") {
      messages(order: asc, last: 20) { edges { node { id body sender { name } } } }
    }
  }
}`;

const STREAMED = `query Streamed($id: ID!) {
  conversation(id: $id) {
    id
    messages(order: asc, first: 3) { edges @stream(initialCount: 1) { node { id body } } }
  }
}`;

let app: TestApp;
let s: Awaited<ReturnType<typeof messagingSetup>>;
let conversationId: string;
/** The conversation's messages' ids, oldest first. */
let oldestFirst: string[];

beforeAll(async () => {
  app = await createTestApp();
  s = await messagingSetup(app);
  const contact = await s.contact({ name: 'Reader', email: 'reader@example.com' });
  const conversation = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: contact.id } });
  conversationId = conversation.id;
  const start = Date.UTC(2026, 0, 1);
  const rows = await app.db.prisma.message.createManyAndReturn({
    data: [0, 1, 2].map((i) => ({
      workspaceId: s.workspace.id,
      channelId: s.channel.id,
      conversationId,
      contactId: contact.id,
      body: `line ${i}`,
      senderType: 'channel' as const,
      senderChannelId: s.channel.id,
      createdAt: new Date(start + i * 1000),
    })),
  });
  oldestFirst = rows.map((row) => row.id);
});
afterAll(() => app.close());

/** POSTs an operation accepting incremental delivery, as Apollo Client and urql do. */
function post(host: string, token: string, body: Record<string, unknown>) {
  return app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'multipart/mixed;deferSpec=20220824, application/graphql-response+json, application/json' },
    body: JSON.stringify(body),
  });
}

describe('incremental delivery (@defer, @stream) over multipart/mixed', () => {
  it('answers the initial part, then the deferred fragment', async () => {
    const response = await post(s.host, s.apiKey, { query: THREAD, variables: { id: conversationId } });
    expect(response.status).toBe(200);
    const parts = await multipartParts(response);
    expect(parts).toHaveLength(2);
    // The compiled-query plugin would answer everything in this first part.
    expect(parts[0]).toEqual({ data: { conversation: { id: conversationId, status: 'open' } }, hasNext: true });
    expect(parts[1]).toEqual({
      incremental: [
        {
          label: 'thread',
          path: ['conversation'],
          data: { messages: { edges: oldestFirst.map((id, i) => ({ node: { id, body: `line ${i}`, sender: { name: s.channel.name } } })) } },
        },
      ],
      hasNext: false,
    });
  });

  it('streams a list: initialCount items first, the rest after', async () => {
    const parts = await multipartParts(await post(s.host, s.apiKey, { query: STREAMED, variables: { id: conversationId } }));
    expect(parts[0]).toEqual({
      data: { conversation: { id: conversationId, messages: { edges: [{ node: { id: oldestFirst[0], body: 'line 0' } }] } } },
      hasNext: true,
    });
    const streamed = parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(streamed.map((item) => item.path)).toEqual([
      ['conversation', 'messages', 'edges', 1],
      ['conversation', 'messages', 'edges', 2],
    ]);
    expect(streamed.flatMap((item) => item.items)).toEqual([
      { node: { id: oldestFirst[1], body: 'line 1' } },
      { node: { id: oldestFirst[2], body: 'line 2' } },
    ]);
    expect(parts.at(-1)!.hasNext).toBe(false);
  });

  it('answers the parts as successive events over SSE', async () => {
    const response = await app.fetch(s.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(s.apiKey), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: THREAD, variables: { id: conversationId } }),
    });
    const events = (await response.text()).split('\n\n').filter((block) => block.startsWith('event:'));
    expect(events.map((block) => block.split('\n')[0])).toEqual(['event: next', 'event: next', 'event: complete']);
    const [initial, deferred] = events.slice(0, 2).map((block) => JSON.parse(block.split('\n')[1]!.slice('data: '.length)));
    expect(initial).toEqual({ data: { conversation: { id: conversationId, status: 'open' } }, hasNext: true });
    expect(deferred).toMatchObject({ incremental: [{ label: 'thread', path: ['conversation'] }], hasNext: false });
    expect(deferred.incremental[0].data.messages.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual(oldestFirst);
  });

  it('answers the parts as successive next messages over a WebSocket', async () => {
    const served = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
    const socket = socketClient(served.port, s.host, { authorization: `Bearer ${s.apiKey}` });
    try {
      const operation = socket.subscribe(parse(THREAD), { id: conversationId });
      await operation.done;
      expect(operation.errors).toEqual([]);
      expect(operation.received).toHaveLength(2);
      expect(operation.received[0]).toEqual({ data: { conversation: { id: conversationId, status: 'open' } }, hasNext: true });
      expect(operation.received[1]).toMatchObject({ incremental: [{ label: 'thread', path: ['conversation'] }], hasNext: false });
    } finally {
      await socket.dispose();
      await served.close();
    }
  });

  it('answers a client that takes no parts whole, in one JSON answer: a query, and a mutation run once', async () => {
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const response = await app.fetch(s.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(s.apiKey), 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: STREAMED, variables: { id: conversationId } }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain(accept);
      expect(await response.json()).toEqual({
        data: { conversation: { id: conversationId, messages: { edges: oldestFirst.map((id, i) => ({ node: { id, body: `line ${i}` } })) } } },
      });
    }
    const contact = await s.contact({ name: 'Closer', email: 'closer@example.com' });
    const conversation = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: contact.id } });
    const { status, ...body } = await postOperation(app, s.host, bearer(s.apiKey), {
      query: 'mutation Close($id: ID!) { closeConversation(id: $id) { conversation { id } ... @defer { userErrors { message } conversation { status } } } }',
      variables: { id: conversation.id },
    });
    expect(status).toBe(200);
    expect(body).toEqual({ data: { closeConversation: { conversation: { id: conversation.id, status: 'closed' }, userErrors: [] } } });
    const changes = await app.db.prisma.conversationStateChange.count({ where: { conversationId: conversation.id } });
    expect(changes).toBe(1);
  });

  it('refuses a deferred selection over the cost limit whole, before anything runs', async () => {
    const query = `{
      viewer { workspace { name } }
      ... @defer { conversations(first: 100) { edges { node { messages(first: 100) { edges { node { id } } } } } } }
    }`;
    const response = await post(s.host, s.apiKey, { query });
    const parts = response.headers.get('content-type')!.startsWith('multipart/mixed') ? await multipartParts(response) : [await response.json()];
    expect(parts).toHaveLength(1);
    expect(parts[0]!.data ?? null).toBeNull();
    expect(parts[0]!.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'QUERY_TOO_COMPLEX' }) })]);
  });

  it("holds a session's scopes in a deferred fragment: a field outside them is null with FORBIDDEN", async () => {
    const session = await mintSession(s.api, { user: s.user.email, scopes: ['send'] });
    const parts = await multipartParts(await post(s.host, session.token, { query: '{ __typename ... @defer(label: "contacts") { contacts(first: 1) { edges { node { id } } } } }' }));
    expect(parts[0]).toEqual({ data: { __typename: 'Query' }, hasNext: true });
    expect(parts[1]!.incremental).toEqual([
      expect.objectContaining({ label: 'contacts', path: [], data: { contacts: null }, errors: [expect.objectContaining({ path: ['contacts'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })] }),
    ]);
  });

  it("masks an unexpected failure in a deferred part as in any answer, and logs it on the request's line", async () => {
    const local = await appOnOwnDatabase();
    try {
      const t = await messagingSetup(local);
      // The table the deferred field reads is gone: its SQL error must not reach the client.
      await local.db.prisma.$executeRawUnsafe('ALTER TABLE channel_templates RENAME TO channel_templates_moved');
      const response = await local.fetch(t.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(t.apiKey), 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'deferred-failure-1' },
        body: JSON.stringify({ query: '{ viewer { workspace { name } } ... @defer { templates(first: 1) { edges { node { id } } } } }' }),
      });
      const parts = await multipartParts(response);
      expect(parts[0]).toEqual({ data: { viewer: { workspace: { name: 'Test workspace' } } }, hasNext: true });
      expect(parts[1]!.incremental).toEqual([
        { path: [], data: { templates: null }, errors: [{ message: 'Unexpected error.', path: ['templates'], locations: expect.any(Array), extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
      ]);
      expect(JSON.stringify(parts)).not.toMatch(/channel_templates|relation|does not exist/);
      const logged = local.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'unexpected failure');
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ requestId: 'deferred-failure-1' });
      expect(JSON.stringify(logged[0])).toContain('channel_templates');
    } finally {
      await local.drop();
    }
  });

  it('refuses @defer in a text from a session restricted to registered documents; the registered document runs by id, incrementally', async () => {
    const locked = await messagingSetup(app);
    const contact = await locked.contact({ name: 'Locked', email: 'locked@example.com' });
    const conversation = await app.db.prisma.conversation.create({ data: { workspaceId: locked.workspace.id, channelId: locked.channel.id, contactId: contact.id } });
    // A document with @defer registers like any other.
    expect((await locked.api.post('/graphql/documents', manifestOf(THREAD))).body).toEqual({ data: { stored: 1 } });
    expect((await runAdminOn(app.db, ['workspace:configure', '--hostname', locked.host, '--trusted-documents-only', 'on'])).code).toBe(0);
    const session = await mintSession(locked.api, { user: locked.user.email });

    const text = await post(locked.host, session.token, { query: THREAD, variables: { id: conversation.id } });
    const refused = text.headers.get('content-type')!.startsWith('multipart/mixed') ? await multipartParts(text) : [await text.json()];
    expect(refused).toHaveLength(1);
    expect(refused[0]!.data ?? null).toBeNull();
    expect(refused[0]!.errors).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_ONLY' } })]);

    const byId = await multipartParts(await post(locked.host, session.token, { documentId: `sha256:${sha256(THREAD)}`, variables: { id: conversation.id } }));
    expect(byId).toEqual([
      { data: { conversation: { id: conversation.id, status: 'open' } }, hasNext: true },
      { incremental: [{ label: 'thread', path: ['conversation'], data: { messages: { edges: [] } } }], hasNext: false },
    ]);
  });

  it('is read by Apollo Client (HttpLink, Defer20220824Handler) and urql (fetchExchange): the initial result, then the whole', async () => {
    /** fetch through the app, as the clients send it: their own Accept and body. */
    const seen: string[] = [];
    const viaApp = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(new Headers(init?.headers).get('accept') ?? '');
      return app.fetch(s.host, '/graphql', { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), authorization: `Bearer ${s.apiKey}` } });
    }) as typeof fetch;
    const whole = { id: conversationId, status: 'open', messages: { edges: oldestFirst.map((id, i) => ({ node: { id, body: `line ${i}`, sender: { name: s.channel.name } } })) } };

    const apollo = new ApolloClient({
      link: new HttpLink({ uri: 'http://connect.test/graphql', fetch: viaApp }),
      cache: new InMemoryCache(),
      incrementalHandler: new Defer20220824Handler(),
    });
    const results: { dataState?: string; data?: any }[] = [];
    await new Promise<void>((resolve, reject) => {
      const watched = apollo.watchQuery({ query: gql(THREAD), variables: { id: conversationId }, fetchPolicy: 'network-only' }).subscribe({
        next: (result) => {
          results.push(result);
          if (result.dataState === 'complete') {
            watched.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });
    expect(seen[0]).toContain('multipart/mixed');
    const streamed = results.find((result) => result.dataState === 'streaming');
    expect(streamed?.data?.conversation).toMatchObject({ id: conversationId, status: 'open' });
    expect(streamed?.data?.conversation.messages).toBeUndefined();
    expect(results.at(-1)!.data.conversation).toMatchObject(whole);
    apollo.stop();

    const urql = new UrqlClient({ url: 'http://connect.test/graphql', exchanges: [fetchExchange], fetch: viaApp, preferGetMethod: false });
    const parts: { hasNext?: boolean; data?: any }[] = [];
    await new Promise<void>((resolve) => {
      const { unsubscribe } = urql.query(parse(THREAD), { id: conversationId }, { requestPolicy: 'network-only' }).subscribe((result) => {
        parts.push(result);
        if (!result.hasNext) {
          unsubscribe();
          resolve();
        }
      });
    });
    expect(seen.at(-1)).toContain('multipart/mixed');
    expect(parts[0]).toMatchObject({ hasNext: true, data: { conversation: { id: conversationId, status: 'open' } } });
    expect(parts[0]!.data.conversation.messages).toBeUndefined();
    expect(parts.at(-1)!.data.conversation).toMatchObject(whole);
  });
});
