import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteContact } from '../../src/modules/contacts/contacts.service.js';
import { createTestApp, openTestDatabase, type TestApp } from '../helpers/app.js';
import { addChannel, bearer, createConnection } from '../helpers/factories.js';
import { executeOperation } from '../helpers/graphql.js';
import { messagingSetup } from '../helpers/messaging.js';
import { restClient } from '../helpers/rest.js';
import { mintSession } from '../helpers/sessions.js';
import { graphql } from '../gql/index.js';

/*
 * Object identification (docs/graphql.md): `node(id:)` and `nodes(ids:)` over the plain REST UUIDs,
 * through the real /graphql endpoint, with the visibility of the other reads: the workspace's
 * contacts and users, the channels the credential can act as, and the acting channel's
 * conversations, messages and templates. Anything else is null.
 */

const NodeById = graphql(`
  query NodeById($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on Contact { name email }
      ... on Conversation { status contact { id name } messages(first: 5) { edges { node { id body } } pageInfo { hasNextPage } } }
      ... on Message { body placeholder isEncrypted sender { type name } conversation { id } }
      ... on Channel { name type }
      ... on Template { name language }
      ... on User { name userEmail: email }
    }
  }
`);

const NodesByIds = graphql(`
  query NodesByIds($ids: [ID!]!) {
    nodes(ids: $ids) {
      __typename
      id
      ... on Contact { name }
      ... on Message { body }
      ... on Conversation { contact { name } }
    }
  }
`);

const NodesDeep = graphql(`
  query NodesDeep($ids: [ID!]!) {
    nodes(ids: $ids) {
      id
      ... on Contact { name }
      ... on Conversation { status contact { name } messages(first: 5) { edges { node { body contact { name } } } } }
      ... on Message { body sender { name } conversation { status } }
    }
  }
`);

const NodeInterpreted = graphql(`
  query NodeInterpreted($id: ID!, $withContact: Boolean!) {
    node(id: $id) {
      __typename
      id
      ... on Conversation { contact @include(if: $withContact) { name } }
      ... on Message { body placeholder }
    }
  }
`);

const NodesWithMessages = graphql(`
  query NodesWithMessages($ids: [ID!]!) {
    nodes(ids: $ids) {
      id
      ... on Conversation { messages(first: 100) { edges { node { id body } } } }
    }
  }
`);

let app: TestApp;
let statements: string[] = [];
beforeAll(async () => {
  // Without the credential cache every request counts its authentication, whatever the timing.
  app = await createTestApp({ AUTH_CACHE_MS: '0' }, await openTestDatabase({ onQuery: (sql) => statements.push(sql) }));
});
afterAll(() => app.close());

const UNKNOWN = '0193a0e0-0000-7000-8000-000000000000';

/**
 * Workspace A with two channels: on the first a contact's conversation with a plain and an
 * encrypted message, a template and a user; on the second a conversation, message and template of
 * its own. Workspace B with the same on its one channel.
 */
async function world() {
  const a = await messagingSetup(app);
  const b = await messagingSetup(app);
  const gqlAs = (token: string, headers: Record<string, string> = {}) => {
    const run = <TData, TVariables>(document: Parameters<typeof executeOperation<TData, TVariables>>[3], variables: TVariables) =>
      executeOperation(app, a.host, { ...bearer(token), ...headers }, document, variables);
    return run;
  };
  const ann = await a.contact({ name: 'Ann Node', email: 'ann.node@example.com' });
  const plain = await a.send({ to: ann.id, message: 'hello node' });
  const secret = await a.send({ to: ann.id, message: 'ciphertext', is_encrypted: true });
  expect([plain.status, secret.status]).toEqual([202, 202]);
  const plainMessage = plain.body.data.message as { id: string; conversationId: string };
  const secretMessage = secret.body.data.message as { id: string };

  const second = await addChannel(app.db.prisma, a.workspace.id, 'Second');
  const onSecond = await app.db.prisma.conversation.create({ data: { workspaceId: a.workspace.id, channelId: second.channel.id, contactId: ann.id } });
  const secondMessage = await app.db.prisma.message.create({
    data: {
      workspaceId: a.workspace.id,
      channelId: second.channel.id,
      conversationId: onSecond.id,
      contactId: ann.id,
      body: 'on the second channel',
      senderType: 'channel',
      senderChannelId: second.channel.id,
    },
  });
  const secondTemplate = await app.db.prisma.channelTemplate.create({
    data: { workspaceId: a.workspace.id, channelId: second.channel.id, name: 'second', language: 'en', body: 'Hi', parameterCount: 0 },
  });

  const bob = await b.contact({ name: 'Bob Elsewhere', email: 'bob.elsewhere@example.com' });
  const bSent = await b.send({ to: bob.id, message: 'other workspace' });
  const bMessage = bSent.body.data.message as { id: string; conversationId: string };
  return { a, b, ann, plainMessage, secretMessage, second, onSecond, secondMessage, secondTemplate, bob, bMessage, gqlAs };
}

describe('node(id:)', () => {
  it('answers each kind of object the caller may see, with its fields and relations; an encrypted message stays hidden', async () => {
    const w = await world();
    const gql = w.gqlAs(w.a.apiKey);
    const node = async (id: string) => {
      const result = await gql(NodeById, { id });
      expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
      return result.data!.node;
    };

    expect(await node(w.ann.id)).toEqual({ __typename: 'Contact', id: w.ann.id, name: 'Ann Node', email: 'ann.node@example.com' });
    // Any case of the UUID finds it; the id answered is the stored one.
    expect(await node(w.ann.id.toUpperCase())).toMatchObject({ __typename: 'Contact', id: w.ann.id });
    expect(await node(w.plainMessage.conversationId)).toEqual({
      __typename: 'Conversation',
      id: w.plainMessage.conversationId,
      status: 'open',
      contact: { id: w.ann.id, name: 'Ann Node' },
      messages: {
        edges: [
          { node: { id: w.secretMessage.id, body: null } },
          { node: { id: w.plainMessage.id, body: 'hello node' } },
        ],
        pageInfo: { hasNextPage: false },
      },
    });
    expect(await node(w.plainMessage.id)).toEqual({
      __typename: 'Message',
      id: w.plainMessage.id,
      body: 'hello node',
      placeholder: null,
      isEncrypted: false,
      sender: { type: 'channel', name: w.a.channel.name },
      conversation: { id: w.plainMessage.conversationId },
    });
    expect(await node(w.secretMessage.id)).toEqual({
      __typename: 'Message',
      id: w.secretMessage.id,
      body: null,
      placeholder: 'Encrypted message hidden',
      isEncrypted: true,
      sender: { type: 'channel', name: w.a.channel.name },
      conversation: { id: w.plainMessage.conversationId },
    });
    expect(await node(w.a.channel.id)).toEqual({ __typename: 'Channel', id: w.a.channel.id, name: w.a.channel.name, type: 'whatsapp' });
    expect(await node(w.a.template.id)).toEqual({ __typename: 'Template', id: w.a.template.id, name: 'order_ready', language: 'en' });
    expect(await node(w.a.user.id)).toEqual({ __typename: 'User', id: w.a.user.id, name: 'Agent Smith', userEmail: 'Agent@Example.com' });
  });

  it('answers the same on the interpreter (a document with @include is not compiled)', async () => {
    const w = await world();
    const gql = w.gqlAs(w.a.apiKey);
    const conversation = await gql(NodeInterpreted, { id: w.plainMessage.conversationId, withContact: true });
    expect(conversation.errors).toBeUndefined();
    expect(conversation.data).toEqual({ node: { __typename: 'Conversation', id: w.plainMessage.conversationId, contact: { name: 'Ann Node' } } });
    const secret = await gql(NodeInterpreted, { id: w.secretMessage.id, withContact: false });
    expect(secret.data).toEqual({ node: { __typename: 'Message', id: w.secretMessage.id, body: null, placeholder: 'Encrypted message hidden' } });
    expect((await gql(NodeInterpreted, { id: w.bMessage.id, withContact: true })).data).toEqual({ node: null });
  });

  it('is null for another workspace’s objects, another channel’s, a deleted contact, an unknown or malformed id', async () => {
    const w = await world();
    const gql = w.gqlAs(w.a.apiKey);
    const invisible = [
      // Workspace B's contact, conversation, message, template, channel and user.
      w.bob.id,
      w.bMessage.conversationId,
      w.bMessage.id,
      w.b.template.id,
      w.b.channel.id,
      w.b.user.id,
      // The second channel's conversation, message and template, and the channel itself: the first channel's key cannot act as it.
      w.onSecond.id,
      w.secondMessage.id,
      w.secondTemplate.id,
      w.second.channel.id,
      UNKNOWN,
      'not-a-uuid',
      '',
    ];
    for (const id of invisible) {
      const result = await gql(NodeById, { id });
      expect(result.errors, `${id}: ${JSON.stringify(result.errors)}`).toBeUndefined();
      expect(result.data, id).toEqual({ node: null });
    }
    const gone = await w.a.contact({ name: 'Gone', email: 'gone@example.com' });
    await deleteContact(app.db.prisma, gone.id);
    expect((await gql(NodeById, { id: gone.id })).data).toEqual({ node: null });

    // The second channel's own key sees its objects, and the first channel's no more; contacts and users are the workspace's.
    const secondGql = w.gqlAs(w.second.apiKey);
    for (const id of [w.onSecond.id, w.secondMessage.id, w.secondTemplate.id, w.second.channel.id, w.ann.id, w.a.user.id]) {
      expect((await secondGql(NodeById, { id })).data!.node, id).toMatchObject({ id });
    }
    for (const id of [w.plainMessage.conversationId, w.plainMessage.id, w.a.template.id, w.a.channel.id]) {
      expect((await secondGql(NodeById, { id })).data, id).toEqual({ node: null });
    }
  });

  it('a connection sees every channel it can act as, and the acting channel’s objects only; a session only its own channels', async () => {
    const w = await world();
    const connection = await createConnection(app.db.prisma, { workspaceId: w.a.workspace.id, name: 'Both', channelIds: [w.a.channel.id, w.second.channel.id] });
    const asFirst = w.gqlAs(connection.token, { 'x-channel-uuid': w.a.channel.id });
    const seen = await asFirst(NodesByIds, { ids: [w.second.channel.id, w.a.channel.id, w.onSecond.id, w.plainMessage.conversationId] });
    expect(seen.errors).toBeUndefined();
    expect(seen.data!.nodes!.map((node) => node && { type: node.__typename, id: node.id })).toEqual([
      { type: 'Channel', id: w.second.channel.id },
      { type: 'Channel', id: w.a.channel.id },
      null,
      { type: 'Conversation', id: w.plainMessage.conversationId },
    ]);
    // Without an acting channel, each object's own channel decides: any of the connection's.
    const unnamed = await w.gqlAs(connection.token)(NodesByIds, { ids: [w.a.channel.id, w.onSecond.id, w.plainMessage.conversationId] });
    expect(unnamed.errors).toBeUndefined();
    expect(unnamed.data!.nodes!.map((node) => node && { type: node.__typename, id: node.id })).toEqual([
      { type: 'Channel', id: w.a.channel.id },
      { type: 'Conversation', id: w.onSecond.id },
      { type: 'Conversation', id: w.plainMessage.conversationId },
    ]);

    const session = await mintSession(restClient(app, w.a.host, connection.token), { user: w.a.user.email, channels: [w.second.channel.id], scopes: ['read'] });
    const browser = w.gqlAs(session.token);
    const browsed = await browser(NodesByIds, { ids: [w.onSecond.id, w.plainMessage.conversationId, w.a.channel.id, w.ann.id] });
    expect(browsed.errors).toBeUndefined();
    expect(browsed.data!.nodes!.map((node) => node?.id ?? null)).toEqual([w.onSecond.id, null, null, w.ann.id]);
    const unread = await mintSession(w.a.api, { user: w.a.user.email, scopes: ['send'] });
    const refused = await w.gqlAs(unread.token)(NodeById, { id: w.ann.id });
    expect(refused.data).toEqual({ node: null });
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('nodes(ids:)', () => {
  it('answers the ids in their order, repeats included, null for each the caller cannot see', async () => {
    const w = await world();
    const gql = w.gqlAs(w.a.apiKey);
    const result = await gql(NodesByIds, {
      ids: [w.plainMessage.id, w.bob.id, w.ann.id, UNKNOWN, w.plainMessage.conversationId, 'nope', w.ann.id, w.secretMessage.id],
    });
    expect(result.errors).toBeUndefined();
    expect(result.data!.nodes).toEqual([
      { __typename: 'Message', id: w.plainMessage.id, body: 'hello node' },
      null,
      { __typename: 'Contact', id: w.ann.id, name: 'Ann Node' },
      null,
      { __typename: 'Conversation', id: w.plainMessage.conversationId, contact: { name: 'Ann Node' } },
      null,
      { __typename: 'Contact', id: w.ann.id, name: 'Ann Node' },
      { __typename: 'Message', id: w.secretMessage.id, body: null },
    ]);
    expect((await gql(NodesByIds, { ids: [] })).data).toEqual({ nodes: [] });
  });

  it('takes at most 100 ids: more is refused at the field, with a clear message', async () => {
    const w = await world();
    const gql = w.gqlAs(w.a.apiKey);
    const hundred = [w.ann.id, ...Array.from({ length: 99 }, () => UNKNOWN)];
    const full = await gql(NodesByIds, { ids: hundred });
    expect(full.errors).toBeUndefined();
    expect(full.data!.nodes).toHaveLength(100);
    expect(full.data!.nodes![0]).toMatchObject({ id: w.ann.id });

    const over = await gql(NodesByIds, { ids: [...hundred, UNKNOWN] });
    expect(over.data).toEqual({ nodes: null });
    expect(over.errors).toHaveLength(1);
    expect(over.errors![0]).toMatchObject({
      message: 'nodes takes at most 100 ids; 101 were given.',
      path: ['nodes'],
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('costs its selection once per id: a heavy selection over many ids is refused before it runs', async () => {
    const w = await world();
    const gql = w.gqlAs(w.a.apiKey);
    const few = await gql(NodesWithMessages, { ids: [w.plainMessage.conversationId] });
    expect(few.errors).toBeUndefined();
    expect(few.data!.nodes).toEqual([{ id: w.plainMessage.conversationId, messages: { edges: [expect.anything(), expect.anything()] } }]);
    const many = await gql(NodesWithMessages, { ids: Array.from({ length: 100 }, () => w.plainMessage.conversationId) });
    expect(many.data ?? null).toBeNull();
    expect(many.errors![0]!.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
  });

  it('loads each kind and each level once, however many ids: one statement finds them, one read per kind and relation', async () => {
    const w = await world();
    const gql = w.gqlAs(w.a.apiKey);
    const conversations: string[] = [];
    const messages: string[] = [];
    for (let i = 0; i < 3; i++) {
      const contact = await w.a.contact({ name: `Deep ${i}`, email: `deep${i}@example.com` });
      const sent = await w.a.send({ to: contact.id, message: `deep ${i}` });
      conversations.push(sent.body.data.message.conversationId);
      messages.push(sent.body.data.message.id);
    }
    const count = async (ids: string[]) => {
      statements = [];
      const result = await gql(NodesDeep, { ids });
      expect(result.errors).toBeUndefined();
      expect(result.data!.nodes!.map((node) => node?.id ?? null)).toEqual(ids.map((id) => (id === w.bob.id ? null : id)));
      return statements.length;
    };
    const one = await count([conversations[0]!]);
    expect(await count(conversations)).toBe(one);
    // Authentication, the ids' kinds, the conversations, their contacts, their messages, those messages' contacts.
    expect(one).toBe(6);
    const mixedOne = await count([conversations[0]!, messages[0]!, w.ann.id]);
    expect(await count([...conversations, ...messages, w.ann.id, w.bob.id])).toBe(mixedOne);
  });
});
