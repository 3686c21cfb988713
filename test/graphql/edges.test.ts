import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, onPostgres, openTestDatabase, type TestApp } from '../helpers/app.js';
import { bearer, createConnection, issueChannelKey, workspaceWithChannel } from '../helpers/factories.js';
import { executeOperation, postOperation } from '../helpers/graphql.js';
import { messagingSetup } from '../helpers/messaging.js';
import { restClient } from '../helpers/rest.js';
import { subscribeSse } from '../helpers/sse.js';
import { graphql } from '../gql/index.js';
import { CREDENTIAL_RECHECK_MS } from '../../src/context/credential-watch.js';
import { deactivateChannel } from '../../src/modules/channels/channels.service.js';
import { revokeToken } from '../../src/modules/credentials/credentials.service.js';
import { hashToken } from '../../src/lib/tokens.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const errorLines = (target: TestApp) => target.logs.filter((line) => JSON.parse(line).level >= 50);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const EdgeSendMessage = graphql(`
  mutation EdgeSendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message { id sender { name } contact { id name } conversation { id contact { id } stateChanges { type } } }
      userErrors { field message code }
    }
  }
`);

const EdgeCreateContact = graphql(`
  mutation EdgeCreateContact($input: CreateContactInput!) {
    createContact(input: $input) { contact { id name email } userErrors { field message code } }
  }
`);

const EdgeUpdateContact = graphql(`
  mutation EdgeUpdateContact($id: ID!, $input: UpdateContactInput!) {
    updateContact(id: $id, input: $input) { contact { id name } userErrors { field message code } }
  }
`);

const EdgeCloseConversation = graphql(`
  mutation EdgeCloseConversation($id: ID!) {
    closeConversation(id: $id) {
      conversation {
        id
        contact { id name }
        stateChanges { type actor { type name } }
        messages(first: 50) { edges { node { id sender { name } contact { id } conversation { id } } } }
      }
      userErrors { field message code }
    }
  }
`);

const EdgeReopenConversation = graphql(`
  mutation EdgeReopenConversation($id: ID!) {
    reopenConversation(id: $id) {
      conversation { id contact { id } stateChanges { type } messages(first: 5) { edges { node { id } } } }
      userErrors { field message code }
    }
  }
`);

const EdgeMessageAdded = graphql(`
  subscription EdgeMessageAdded {
    messageAdded { id body }
  }
`);

const EdgeConversationUpdated = graphql(`
  subscription EdgeConversationUpdated {
    conversationUpdated { id status }
  }
`);

/** Runs every mutation refused, each selecting relations under its null object. */
async function refuseEveryMutation(target: TestApp) {
  const s = await messagingSetup(target);
  const gql = <TData, TVariables>(document: Parameters<typeof executeOperation<TData, TVariables>>[3], variables?: TVariables) =>
    executeOperation(target, s.host, bearer(s.apiKey), document, variables);
  const missing = '00000000-0000-7000-8000-000000000000';
  return [
    await gql(EdgeSendMessage, { input: { message: 'x' } }),
    await gql(EdgeCreateContact, { input: { name: 'Ann', email: 'not an email' } }),
    await gql(EdgeUpdateContact, { id: missing, input: { name: 'Bo' } }),
    await gql(EdgeCloseConversation, { id: missing }),
    await gql(EdgeReopenConversation, { id: missing }),
  ];
}

describe('a refused mutation', () => {
  for (const mode of ['test', 'production'] as const) {
    it(`answers only userErrors whatever is selected under its null object (NODE_ENV ${mode})`, async () => {
      const target = mode === 'test' ? app : await createTestApp({ NODE_ENV: 'production' });
      try {
        const before = errorLines(target).length;
        const results = await refuseEveryMutation(target);
        for (const result of results) {
          expect(result.status).toBe(200);
          expect(result.errors).toBeUndefined();
          const [payload] = Object.values(result.data as Record<string, Record<string, unknown>>);
          const [object, userErrors] = Object.values(payload!);
          expect(object).toBeNull();
          expect(userErrors).toEqual([expect.objectContaining({ field: expect.any(Array), message: expect.any(String) })]);
        }
        expect(errorLines(target)).toHaveLength(before);
      } finally {
        if (target !== app) await target.close();
      }
    });
  }
});

describe('an accepted mutation', () => {
  it('answers its object with the selected relations, in the same number of statements for 1 and for 20 messages', async () => {
    let statements = 0;
    const local = await createTestApp({}, await openTestDatabase({ onQuery: () => statements++ }));
    try {
      const closeWith = async (messages: number) => {
        const s = await messagingSetup(local);
        const c = await s.contact({ email: `n${messages}@example.com` });
        let conversationId = '';
        for (let i = 0; i < messages; i++) conversationId = (await s.send({ to: c.id, message: `m${i}` })).body.data.message.conversationId;
        statements = 0;
        const result = await executeOperation(local, s.host, bearer(s.apiKey), EdgeCloseConversation, { id: conversationId });
        return { result, statements, contactId: c.id };
      };
      const one = await closeWith(1);
      const twenty = await closeWith(20);
      for (const [{ result, contactId }, count] of [
        [one, 1],
        [twenty, 20],
      ] as const) {
        expect(result.errors).toBeUndefined();
        const conversation = result.data?.closeConversation?.conversation;
        expect(conversation?.contact.id).toBe(contactId);
        expect(conversation?.stateChanges.map((change) => change.type)).toEqual(['opened', 'closed']);
        expect(conversation?.messages?.edges).toHaveLength(count);
        expect(conversation?.messages?.edges.every((edge) => edge.node.conversation.id === conversation.id)).toBe(true);
      }
      expect(twenty.statements).toBe(one.statements);

      const s = await messagingSetup(local);
      const sent = await executeOperation(local, s.host, bearer(s.apiKey), EdgeSendMessage, { input: { to: { email: 'new@example.com' }, message: 'hi' } });
      expect(sent.errors).toBeUndefined();
      expect(sent.data?.sendMessage?.message).toEqual({
        id: expect.any(String),
        sender: { name: 'Main channel' },
        contact: { id: expect.any(String), name: expect.any(String) },
        conversation: { id: expect.any(String), contact: { id: sent.data?.sendMessage?.message?.contact.id }, stateChanges: [{ type: 'opened' }] },
      });
    } finally {
      await local.close();
    }
  });
});

interface StreamEnd {
  at: number;
  /** Whether the server completed the operation (`event: complete`) before closing. */
  completed: boolean;
}

describe('a nested connection', () => {
  it('with a bad page under a mutation payload refuses the whole operation before the mutation runs', async () => {
    const s = await messagingSetup(app);
    const count = () => app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } });
    for (const page of ['first: 500', 'first: 0', 'after: "not-a-cursor"']) {
      const result = await postOperation(app, s.host, bearer(s.apiKey), {
        query: `mutation { sendMessage(input: { to: { phone: "+31612349002" }, message: "x" }) { message { conversation { messages(${page}) { edges { node { id } } } } } userErrors { field } } }`,
      });
      expect(result.errors?.[0]?.extensions?.code, page).toBe('BAD_USER_INPUT');
      expect(result.data).toBeNull();
      expect(await count()).toBe(0);
    }
  });

  it('with a bad page in a query is refused at its own field; the fields beside it keep their data', async () => {
    const s = await messagingSetup(app);
    expect((await s.send({ to: { phone: '+31612349003' }, message: 'hello' })).status).toBe(202);
    const query = (page: string) => `{ viewer { workspace { id } } templates(first: 1) { edges { node { name } } } contacts(${page}) { edges { node { id } } } }`;
    // Twice each: the first answer is the interpreter's, the second the compiled query's.
    for (const page of ['first: 500', 'first: 0', 'first: -1', 'after: "not-a-cursor"', 'first: 500', 'first: 0']) {
      const result = await postOperation(app, s.host, bearer(s.apiKey), { query: query(page) });
      expect(result.errors, page).toHaveLength(1);
      expect(result.errors![0]).toMatchObject({ path: ['contacts'], extensions: { code: 'BAD_USER_INPUT' } });
      expect(result.data, page).toEqual({ viewer: { workspace: { id: s.workspace.id } }, templates: { edges: [{ node: { name: 'order_ready' } }] }, contacts: null });
    }
    const nested = await postOperation(app, s.host, bearer(s.apiKey), {
      query: '{ conversations(first: 1) { edges { node { id messages(first: 500) { edges { node { id } } } } } } }',
    });
    expect(nested.errors?.[0]).toMatchObject({ path: ['conversations', 'edges', 0, 'node', 'messages'], extensions: { code: 'BAD_USER_INPUT' } });
    expect(nested.data.conversations.edges[0].node).toEqual({ id: expect.any(String), messages: null });
  });

  it('answers when nothing under its nodes is selected (pageInfo, __typename)', async () => {
    const s = await messagingSetup(app);
    for (const n of [1, 2]) expect((await s.send({ to: { phone: '+31612349001' }, message: `m${n}` })).status).toBe(202);
    for (const selection of ['pageInfo { hasNextPage endCursor }', '__typename']) {
      const result = await postOperation(app, s.host, bearer(s.apiKey), {
        query: `{ conversations(first: 1) { edges { node { messages(first: 1) { ${selection} } } } } }`,
      });
      expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
      expect(result.data.conversations.edges).toHaveLength(1);
    }
    const paged = await postOperation(app, s.host, bearer(s.apiKey), { query: '{ conversations(first: 1) { edges { node { messages(first: 1) { pageInfo { hasNextPage endCursor } } } } } }' });
    expect(paged.data.conversations.edges[0].node.messages.pageInfo).toEqual({ hasNextPage: true, endCursor: expect.any(String) });
    expect(errorLines(app)).toEqual([]);
  });
});

/** subscribeSse through a fetch that also reports when and how the server closes the stream. */
async function observedSubscription<TData, TVariables>(
  target: TestApp,
  host: string,
  token: string,
  document: TypedDocumentNode<TData, TVariables>,
  extraHeaders: Record<string, string> = {},
) {
  let markEnded!: (end: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((resolve) => (markEnded = resolve));
  const decoder = new TextDecoder();
  let text = '';
  const fetchFn = async (path: string, init: RequestInit) => {
    const response = await target.fetch(host, path, init);
    if (!response.body) return response;
    const observer = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        text += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
      flush: () => markEnded({ at: Date.now(), completed: /^event: complete$/m.test(text) }),
    });
    const body = response.body.pipeThrough(observer);
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const subscription = await subscribeSse(fetchFn, { ...bearer(token), ...extraHeaders }, document);
  // Lets the server register the subscriber before anything is published.
  await sleep(100);
  return { ...subscription, ended };
}

/** The time the server completed and closed the stream; fails while it is still open after `ms`. */
async function endsWithin(ended: Promise<StreamEnd>, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the stream was still open after ${ms} ms`)), ms)));
  try {
    const end = await Promise.race([ended, timeout]);
    expect(end.completed).toBe(true);
    return end.at;
  } finally {
    clearTimeout(timer);
  }
}

const MARGIN_MS = 1500;

/** The events of a stream that carried data, and the code of the one error it ended with (docs/browser-apps.md). */
function splitEnd<T extends { data?: unknown; errors?: unknown[] }>(received: T[]) {
  const data = received.filter((event) => event.data);
  const errors = received.filter((event) => !event.data);
  expect(errors).toHaveLength(1);
  expect(received.at(-1)).toBe(errors[0]);
  return { data, code: (errors[0]!.errors as { extensions: { code: string } }[])[0]!.extensions.code };
}

// Credentials changed behind the server's back, as an admin command in another process would:
// only on PostgreSQL. The embedded database is opened by one process at a time, whose every change
// is announced to its streams (test/modules/sessions/streams.test.ts).
describe.skipIf(!onPostgres)('a subscription whose credential lapses', () => {
  it('ends once the token is revoked, and never delivers a later event', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'revoked@example.com' });
    const other = restClient(app, s.host, (await issueChannelKey(app.db.prisma, s.channel)).token);
    const stream = await observedSubscription(app, s.host, s.apiKey, EdgeMessageAdded);
    try {
      await other.post('/messages', { to: c.id, message: 'before revocation' });
      await stream.waitFor(1);
      await revokeToken(app.db.prisma, s.apiKey);
      const revokedAt = Date.now();
      expect((await other.post('/messages', { to: c.id, message: 'after revocation' })).status).toBe(202);
      const endedAt = await endsWithin(stream.ended, CREDENTIAL_RECHECK_MS + MARGIN_MS);
      expect(endedAt - revokedAt).toBeLessThanOrEqual(CREDENTIAL_RECHECK_MS + MARGIN_MS);
      const { data, code } = splitEnd(stream.received);
      expect(data.map((event) => event.data?.messageAdded.body)).toEqual(['before revocation']);
      expect(code).toBe('UNAUTHENTICATED');
    } finally {
      await stream.close();
    }
  });

  it('ends within the recheck interval when its channel is deactivated, with no event to trigger a check', async () => {
    const s = await workspaceWithChannel(app.db.prisma);
    const stream = await observedSubscription(app, s.host, s.apiKey, EdgeConversationUpdated);
    try {
      await deactivateChannel(app.db.prisma, s.channel.id);
      const deactivatedAt = Date.now();
      const endedAt = await endsWithin(stream.ended, CREDENTIAL_RECHECK_MS + MARGIN_MS);
      expect(endedAt - deactivatedAt).toBeLessThanOrEqual(CREDENTIAL_RECHECK_MS + MARGIN_MS);
      expect(splitEnd(stream.received)).toEqual({ data: [], code: 'UNAUTHENTICATED' });
    } finally {
      await stream.close();
    }
  });

  it('ends once the key has expired, and never delivers a later event', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'expired@example.com' });
    const other = restClient(app, s.host, (await issueChannelKey(app.db.prisma, s.channel)).token);
    const stream = await observedSubscription(app, s.host, s.apiKey, EdgeMessageAdded);
    try {
      await app.db.prisma.accessToken.update({ where: { tokenHash: hashToken(s.apiKey) }, data: { expiresAt: new Date(Date.now() - 1000) } });
      const expiredAt = Date.now();
      expect((await other.post('/messages', { to: c.id, message: 'after expiry' })).status).toBe(202);
      const endedAt = await endsWithin(stream.ended, CREDENTIAL_RECHECK_MS + MARGIN_MS);
      expect(endedAt - expiredAt).toBeLessThanOrEqual(CREDENTIAL_RECHECK_MS + MARGIN_MS);
      expect(splitEnd(stream.received)).toEqual({ data: [], code: 'TOKEN_EXPIRED' });
    } finally {
      await stream.close();
    }
  });

  it('ends when a connection loses the acting channel, and not while it keeps it', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'connection@example.com' });
    const connection = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Integration', channelIds: [s.channel.id] });
    const stream = await observedSubscription(app, s.host, connection.token, EdgeMessageAdded, { 'x-channel-uuid': s.channel.id });
    try {
      // Still valid after a recheck: events keep arriving.
      await sleep(CREDENTIAL_RECHECK_MS + 200);
      await s.send({ to: c.id, message: 'still connected' });
      await stream.waitFor(1);
      await app.db.prisma.connectionChannel.delete({ where: { connectionId_channelId: { connectionId: connection.id, channelId: s.channel.id } } });
      await s.send({ to: c.id, message: 'after unlinking' });
      await endsWithin(stream.ended, CREDENTIAL_RECHECK_MS + MARGIN_MS);
      const { data, code } = splitEnd(stream.received);
      expect(data.map((event) => event.data?.messageAdded.body)).toEqual(['still connected']);
      expect(code).toBe('UNAUTHENTICATED');
    } finally {
      await stream.close();
    }
  });
});

// Only on PostgreSQL: on the embedded database a process hears every change, and checks nothing.
describe.skipIf(!onPostgres)('open streams while no announcement can be heard (no Redis)', () => {
  it('check every open stream’s credential together: one statement per interval, however many streams', async () => {
    let statements = 0;
    const local = await createTestApp({}, await openTestDatabase({ onQuery: () => statements++ }));
    try {
      const s = await workspaceWithChannel(local.db.prisma);
      const streams = [];
      for (let i = 0; i < 3; i++) streams.push(await observedSubscription(local, s.host, s.apiKey, EdgeConversationUpdated));
      statements = 0;
      await sleep(2 * CREDENTIAL_RECHECK_MS + 300);
      expect(statements).toBeGreaterThanOrEqual(1);
      expect(statements).toBeLessThanOrEqual(2);
      for (const stream of streams) await stream.close();
    } finally {
      await local.close();
    }
  });

  it('rechecks an open SSE stream and stops when the client disconnects', async () => {
    let statements = 0;
    const local = await createTestApp({}, await openTestDatabase({ onQuery: () => statements++ }));
    try {
      const s = await workspaceWithChannel(local.db.prisma);
      const stream = await observedSubscription(local, s.host, s.apiKey, EdgeConversationUpdated);
      statements = 0;
      await sleep(CREDENTIAL_RECHECK_MS + 300);
      expect(statements).toBeGreaterThanOrEqual(1);
      await stream.close();
      await sleep(100);
      statements = 0;
      await sleep(CREDENTIAL_RECHECK_MS + 300);
      expect(statements).toBe(0);
    } finally {
      await local.close();
    }
  });
});
