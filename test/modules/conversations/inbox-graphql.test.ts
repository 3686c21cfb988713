import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { addChannel, bearer, createConnection } from '../../helpers/factories.js';
import { restClient } from '../../helpers/rest.js';
import { mintSession } from '../../helpers/sessions.js';
import { subscribeSse } from '../../helpers/sse.js';
import { parse } from 'graphql';
import { executeOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { graphql } from '../../gql/index.js';
import type { InboxPageQueryVariables } from '../../gql/graphql.js';
import { receiveMessage } from '../../../src/modules/inbound/inbound.service.js';

/* docs/inbox.md: the inbox over GraphQL. */

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const InboxAssign = graphql(`
  mutation InboxAssign($id: ID!, $userId: ID) {
    assignConversation(id: $id, userId: $userId) {
      conversation { id assignee { id name email } stateChanges { type actor { type id } } }
      userErrors { field message code }
    }
  }
`);

const InboxRead = graphql(`
  mutation InboxRead($id: ID!, $throughMessageId: ID) {
    markConversationRead(id: $id, throughMessageId: $throughMessageId) {
      conversation { id lastReadAt unreadCount }
      userErrors { field message code }
    }
  }
`);

const InboxLabels = graphql(`
  mutation InboxLabels($id: ID!, $add: [String!], $remove: [String!]) {
    updateConversationLabels(id: $id, add: $add, remove: $remove) {
      conversation { id labels }
      userErrors { field message code }
    }
  }
`);

const InboxPage = graphql(`
  query InboxPage($first: Int, $after: String, $assigneeId: ID, $unassigned: Boolean, $unread: Boolean, $label: String, $search: String, $sort: ConversationSort) {
    conversations(first: $first, after: $after, assigneeId: $assigneeId, unassigned: $unassigned, unread: $unread, label: $label, search: $search, sort: $sort) {
      edges { node { id labels unreadCount lastReadAt assignee { id } lastMessage { id body direction } contact { id name } } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const InboxUsers = graphql(`
  query InboxUsers($first: Int, $after: String) {
    users(first: $first, after: $after) { edges { node { id name email } } pageInfo { hasNextPage endCursor } }
  }
`);

const InboxSearchPage = graphql(`
  query InboxSearchPage($first: Int, $after: String, $last: Int, $before: String, $search: String, $sort: ConversationSort) {
    conversations(first: $first, after: $after, last: $last, before: $before, search: $search, sort: $sort) {
      edges { cursor node { id } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const InboxConversation = graphql(`
  query InboxConversation($id: ID!) {
    conversation(id: $id) {
      id channelId stateChanges { type }
      messages(first: 10) { edges { node { id } } }
    }
    messages(conversationId: $id, first: 10) { edges { node { id } } }
  }
`);

const InboxChannels = graphql(`
  query InboxChannels {
    conversations(first: 50) { edges { node { id channelId } } }
  }
`);

const InboxClose = graphql(`
  mutation InboxClose($id: ID!) {
    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id } } } userErrors { field code } }
  }
`);

const InboxReopen = graphql(`
  mutation InboxReopen($id: ID!) {
    reopenConversation(id: $id) { conversation { id status } userErrors { field code } }
  }
`);

let seq = 0;
const phone = () => `+1415666${String(1000 + (++seq % 9000)).padStart(4, '0')}`;

async function setup() {
  const s = await messagingSetup(app);
  const channel = { id: s.channel.id, workspaceId: s.workspace.id, name: s.channel.name };
  const gql = <TData, TVariables>(doc: TypedDocumentNode<TData, TVariables>, variables: TVariables) =>
    executeOperation(app, s.host, bearer(s.apiKey), doc, variables);
  async function reply(from: string, body: string, at = new Date()) {
    await receiveMessage({ prisma: app.db.prisma, logger: pino({ level: 'silent' }) }, channel, { kind: 'message', providerId: `wamid.gql.${++seq}.${Date.now()}`, from: { phone: from }, at, body, media: [] });
  }
  async function conversationWith(p: string, text = 'hello') {
    const contact = await s.contact({ phone: p, name: `Contact ${p}` });
    const sent = await s.send({ to: contact.id, message: text });
    return { contact, conversationId: sent.body.data.message.conversationId as string, messageId: sent.body.data.message.id as string };
  }
  return { ...s, gql, reply, conversationWith };
}

describe('inbox mutations', () => {
  it('assignConversation assigns, unassigns, and answers an unknown user on ["userId"]', async () => {
    const s = await setup();
    const { conversationId } = await s.conversationWith(phone());
    const assigned = await s.gql(InboxAssign, { id: conversationId, userId: s.user.id });
    expect(assigned.errors).toBeUndefined();
    expect(assigned.data!.assignConversation!).toMatchObject({ conversation: { assignee: { id: s.user.id, name: 'Agent Smith' } }, userErrors: [] });
    expect(assigned.data!.assignConversation!.conversation!.stateChanges.at(-1)).toEqual({ type: 'assigned', actor: { type: 'channel', id: s.channel.id } });
    const unknown = await s.gql(InboxAssign, { id: conversationId, userId: '0190a5b0-0000-7000-8000-000000000000' });
    expect(unknown.data!.assignConversation!).toEqual({ conversation: null, userErrors: [{ field: ['userId'], message: expect.any(String), code: 'INVALID' }] });
    const unassigned = await s.gql(InboxAssign, { id: conversationId, userId: null });
    expect(unassigned.data!.assignConversation!.conversation).toMatchObject({ assignee: null });
    expect(unassigned.data!.assignConversation!.conversation!.stateChanges.at(-1)!.type).toBe('unassigned');
  });

  it('markConversationRead reads, never moves back, and answers a foreign message on ["throughMessageId"]', async () => {
    const s = await setup();
    const p = phone();
    const { conversationId, messageId } = await s.conversationWith(p);
    await s.reply(p, 'unread one', new Date(Date.now() + 1000));
    const read = await s.gql(InboxRead, { id: conversationId });
    expect(read.data!.markConversationRead!).toMatchObject({ conversation: { unreadCount: 0 }, userErrors: [] });
    const at = read.data!.markConversationRead!.conversation!.lastReadAt;
    const back = await s.gql(InboxRead, { id: conversationId, throughMessageId: messageId });
    expect(back.data!.markConversationRead!.conversation).toMatchObject({ lastReadAt: at, unreadCount: 0 });
    const other = await s.conversationWith(phone());
    const refused = await s.gql(InboxRead, { id: conversationId, throughMessageId: other.messageId });
    expect(refused.data!.markConversationRead!).toEqual({ conversation: null, userErrors: [{ field: ['throughMessageId'], message: expect.any(String), code: 'INVALID' }] });
  });

  it('updateConversationLabels normalizes labels and answers a bad label on ["add"]', async () => {
    const s = await setup();
    const { conversationId } = await s.conversationWith(phone());
    const added = await s.gql(InboxLabels, { id: conversationId, add: [' VIP ', 'bug', 'Vip'] });
    expect(added.data!.updateConversationLabels!).toEqual({ conversation: { id: conversationId, labels: ['bug', 'vip'] }, userErrors: [] });
    const refused = await s.gql(InboxLabels, { id: conversationId, add: ['x'.repeat(51)] });
    expect(refused.data!.updateConversationLabels!).toEqual({ conversation: null, userErrors: [{ field: ['add'], message: expect.any(String), code: 'INVALID' }] });
    const removed = await s.gql(InboxLabels, { id: conversationId, remove: ['BUG'] });
    expect(removed.data!.updateConversationLabels!.conversation!.labels).toEqual(['vip']);
  });
});

describe('conversations(...) filters and sort', () => {
  it('filters by assignee, unassigned, unread, label and search; sorts by last message, paging', async () => {
    const s = await setup();
    const pa = phone();
    const pb = phone();
    const a = await s.conversationWith(pa, 'about the invoice');
    const b = await s.conversationWith(pb, 'about the parcel');
    await s.gql(InboxAssign, { id: a.conversationId, userId: s.user.id });
    await s.gql(InboxLabels, { id: b.conversationId, add: ['Urgent'] });
    await s.reply(pa, 'answer', new Date(Date.now() + 1000));
    const ids = async (variables: InboxPageQueryVariables) => {
      const result = await s.gql(InboxPage, variables);
      expect(result.errors).toBeUndefined();
      return result.data!.conversations!.edges.map((edge) => edge.node.id);
    };
    expect(await ids({ assigneeId: s.user.id })).toEqual([a.conversationId]);
    expect(await ids({ unassigned: true })).toEqual([b.conversationId]);
    expect(await ids({ unread: true })).toEqual([a.conversationId]);
    expect(await ids({ label: 'URGENT' })).toEqual([b.conversationId]);
    expect(await ids({ search: 'parcel' })).toEqual([b.conversationId]);
    expect(await ids({})).toEqual([b.conversationId, a.conversationId]);
    expect(await ids({ sort: 'last_message' })).toEqual([a.conversationId, b.conversationId]);
    const first = await s.gql(InboxPage, { sort: 'last_message', first: 1 });
    const page = first.data!.conversations!;
    expect(page.edges[0]!.node).toMatchObject({ id: a.conversationId, unreadCount: 1, assignee: { id: s.user.id }, lastMessage: { body: 'answer', direction: 'inbound' } });
    expect(await ids({ sort: 'last_message', first: 1, after: page.pageInfo.endCursor })).toEqual([b.conversationId]);
  });
});

describe('searched conversations, both ways', () => {
  it('forward and backward pages of a search meet exactly, in either sort; REST pages forward the same', async () => {
    const s = await setup();
    const matching: string[] = [];
    for (let i = 0; i < 5; i++) {
      const p = phone();
      matching.push((await s.conversationWith(p, `parcel number ${i}`)).conversationId);
      await s.conversationWith(phone(), `unrelated ${i}`);
      // Activity in another order than creation, so the two sorts differ.
      if (i % 2 === 0) await s.reply(p, 'thanks', new Date(Date.now() + 1000 * (10 - i)));
    }
    for (const sort of ['created', 'last_message'] as const) {
      const page = async (variables: { first?: number; after?: string | null; last?: number; before?: string | null }) => {
        const result = await s.gql(InboxSearchPage, { search: 'parcel', sort, ...variables });
        expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
        return result.data!.conversations!;
      };
      // Forward, two at a time.
      const forward: string[] = [];
      const forwardPages: Awaited<ReturnType<typeof page>>[] = [];
      let after: string | null = null;
      do {
        const current = await page({ first: 2, after });
        forwardPages.push(current);
        forward.push(...current.edges.map((edge) => edge.node.id));
        after = current.pageInfo.hasNextPage ? current.pageInfo.endCursor! : null;
      } while (after);
      expect(forward).toHaveLength(5);
      expect(new Set(forward)).toEqual(new Set(matching));
      expect(forwardPages.map((p) => p.edges.length)).toEqual([2, 2, 1]);

      // Backward from the end, two at a time: the same list, no gap, no duplicate.
      const backward: string[][] = [];
      let before: string | null = null;
      for (;;) {
        const current = await page({ last: 2, before });
        backward.unshift(current.edges.map((edge) => edge.node.id));
        if (!current.pageInfo.hasPreviousPage) break;
        before = current.pageInfo.startCursor!;
      }
      expect(backward).toEqual([[forward[0]], forward.slice(1, 3), forward.slice(3, 5)]);

      // The page before a forward page's start is exactly the page that led to it.
      const back = await page({ last: 2, before: forwardPages[1]!.pageInfo.startCursor });
      expect(back.edges.map((edge) => edge.node.id)).toEqual(forward.slice(0, 2));
      expect(back.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
      const between = await page({ first: 10, after: forwardPages[0]!.pageInfo.endCursor, before: forwardPages[2]!.pageInfo.startCursor });
      expect(between.edges.map((edge) => edge.node.id)).toEqual(forward.slice(2, 4));

      // REST: the same list, forward.
      const rest: string[] = [];
      let cursor = '';
      for (;;) {
        const listed = await s.api.get(`/conversations?search=parcel&sort=${sort}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(listed.status).toBe(200);
        rest.push(...listed.body.data.map((c: { id: string }) => c.id));
        if (!listed.body.meta.has_more) break;
        cursor = listed.body.meta.next_cursor;
      }
      expect(rest).toEqual(forward);
    }
  });
});

const InboxRefetch = graphql(`
  query InboxRefetch($id: ID!, $ids: [ID!]!) {
    node(id: $id) { __typename id ... on Conversation { channelId status } }
    nodes(ids: $ids) { __typename id }
  }
`);

const InboxSendOn = graphql(`
  mutation InboxSendOn($contactId: ID!, $channelId: ID) {
    sendMessage(input: { to: { contactId: $contactId }, type: text, message: "which channel?", channelId: $channelId }) {
      message { id conversationId }
      userErrors { field message code }
    }
  }
`);

const InboxCreateContactOn = graphql(`
  mutation InboxCreateContactOn($phone: String!, $channelId: ID) {
    createContact(input: { name: "Linked", phone: $phone, channelId: $channelId }) {
      contact { id }
      userErrors { field message code }
    }
  }
`);

describe('one conversation of a credential with several channels', () => {
  it('a connection token and a session over two channels read, refetch, change and follow a conversation without X-Channel-Uuid; only starting a send or a contact needs a channel', async () => {
    const s = await setup();
    const second = (await addChannel(app.db.prisma, s.workspace.id, 'Second channel')).channel;
    const third = await addChannel(app.db.prisma, s.workspace.id, 'Third channel');
    const { token } = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Both', channelIds: [s.channel.id, second.id] });
    const contact = await s.contact({ phone: phone() });
    const sendOn = async (channelId: string, message: string) =>
      (await restClient(app, s.host, token, { 'X-Channel-Uuid': channelId }).post('/messages', { to: contact.id, message })).body.data.message as { id: string; conversationId: string };
    const onFirst = await sendOn(s.channel.id, 'on the first');
    const onSecond = await sendOn(second.id, 'on the second');
    const outside = (await restClient(app, s.host, third.apiKey).post('/messages', { to: contact.id, message: 'elsewhere' })).body.data.message as { id: string; conversationId: string };
    const id = onSecond.conversationId;
    const session = await mintSession(restClient(app, s.host, token), { user: s.user.email, channels: [s.channel.id, second.id] });
    const codes = (result: { errors?: readonly { extensions?: Record<string, unknown> }[] }) => (result.errors ?? []).map((error) => error.extensions?.code);

    for (const [credential, actor] of [
      [token, { type: 'channel', id: second.id }],
      [session.token, { type: 'user', id: s.user.id }],
    ] as const) {
      const as =
        (headers: Record<string, string>) =>
        <TData, TVariables>(doc: TypedDocumentNode<TData, TVariables>, variables: TVariables) =>
          executeOperation(app, s.host, { ...bearer(credential), ...headers }, doc, variables);
      const bare = as({});

      // A Relay refetch: node and nodes by id alone, each object's channel deciding.
      const refetched = await bare(InboxRefetch, { id, ids: [id, onFirst.id, onSecond.id, outside.conversationId, outside.id] });
      expect(refetched.errors, JSON.stringify(refetched.errors)).toBeUndefined();
      expect(refetched.data!.node).toEqual({ __typename: 'Conversation', id, channelId: second.id, status: 'open' });
      expect(refetched.data!.nodes).toEqual([
        { __typename: 'Conversation', id },
        { __typename: 'Message', id: onFirst.id },
        { __typename: 'Message', id: onSecond.id },
        null,
        null,
      ]);

      // A subscription on the conversation, without the header.
      const stream = await subscribeSse((path, init) => app.fetch(s.host, path, init), bearer(credential), parse('subscription ($id: ID) { conversationUpdated(id: $id) { id channelId } }') as never, {
        id,
      } as never);
      const messages = await subscribeSse((path, init) => app.fetch(s.host, path, init), bearer(credential), parse('subscription ($id: ID) { messageAdded(conversationId: $id) { id } }') as never, {
        id,
      } as never);
      await new Promise((resolve) => setTimeout(resolve, 200));

      // Reads and changes, without the header.
      const got = await bare(InboxConversation, { id });
      expect(got.errors, JSON.stringify(got.errors)).toBeUndefined();
      expect(got.data!.conversation).toMatchObject({ id, channelId: second.id });
      expect(got.data!.conversation!.messages!.edges.map((edge) => edge.node.id)).toContain(onSecond.id);
      expect(got.data!.messages!.edges.map((edge) => edge.node.id)).toEqual(got.data!.conversation!.messages!.edges.map((edge) => edge.node.id));
      const assigned = await bare(InboxAssign, { id, userId: s.user.id });
      expect(assigned.data!.assignConversation!.userErrors).toEqual([]);
      expect(assigned.data!.assignConversation!.conversation!.stateChanges.at(-1)).toEqual({ type: 'assigned', actor });
      expect((await bare(InboxRead, { id })).data!.markConversationRead!.userErrors).toEqual([]);
      expect((await bare(InboxLabels, { id, add: ['Billing'] })).data!.updateConversationLabels!.conversation!.labels).toEqual(['billing']);
      const closed = await bare(InboxClose, { id });
      expect(closed.data!.closeConversation!.conversation!.stateChanges.at(-1)).toEqual({ type: 'closed', actor });
      expect((await bare(InboxReopen, { id })).data!.reopenConversation!.conversation).toMatchObject({ status: 'open' });
      const events = await stream.waitFor(1);
      await stream.close();
      expect(events[0]).toEqual({ data: { conversationUpdated: { id, channelId: second.id } } });

      // A send to the contact needs a channel: CHANNEL_REQUIRED without one, else the input's channelId.
      const unnamed = await bare(InboxSendOn, { contactId: contact.id });
      expect(codes(unnamed)).toEqual(['CHANNEL_REQUIRED']);
      const sent = await bare(InboxSendOn, { contactId: contact.id, channelId: second.id });
      expect(sent.errors, JSON.stringify(sent.errors)).toBeUndefined();
      expect(sent.data!.sendMessage!.message).toEqual({ id: expect.any(String), conversationId: id });
      const added = await messages.waitFor(1);
      await messages.close();
      expect(added[0]).toEqual({ data: { messageAdded: { id: sent.data!.sendMessage!.message!.id } } });
      const elsewhere = await bare(InboxSendOn, { contactId: contact.id, channelId: third.channel.id });
      expect(elsewhere.data!.sendMessage).toEqual({ message: null, userErrors: [{ field: ['input', 'channelId'], message: 'The channelId must be a channel this credential can act as.', code: 'INVALID' }] });
      // So does a contact's channel link.
      expect(codes(await bare(InboxCreateContactOn, { phone: phone() }))).toEqual(['CHANNEL_REQUIRED']);
      const linked = await bare(InboxCreateContactOn, { phone: phone(), channelId: second.id });
      expect(linked.data!.createContact!.userErrors).toEqual([]);
      const links = await app.db.prisma.contactChannel.findMany({ where: { contactId: linked.data!.createContact!.contact!.id } });
      expect(links.map((link) => link.channelId)).toEqual([second.id]);

      // A conversation of a channel outside the credential is not there; naming the other channel hides this one.
      expect((await bare(InboxConversation, { id: outside.conversationId })).data).toEqual({ conversation: null, messages: { edges: [] } });
      expect((await bare(InboxAssign, { id: outside.conversationId, userId: s.user.id })).data!.assignConversation!.userErrors.map((e) => e.code)).toEqual(['NOT_FOUND']);
      const other = as({ 'X-Channel-Uuid': s.channel.id });
      expect((await other(InboxConversation, { id })).data).toEqual({ conversation: null, messages: { edges: [] } });
      expect((await other(InboxRefetch, { id, ids: [onSecond.id] })).data).toEqual({ node: null, nodes: [null] });

      // Back as it was for the next credential.
      await bare(InboxAssign, { id, userId: null });
      await app.db.prisma.conversation.update({ where: { id }, data: { labels: [], lastReadAt: null } });
    }
  });
});

describe('users(first, after)', () => {
  it("is a connection of the workspace's users", async () => {
    const s = await setup();
    const result = await s.gql(InboxUsers, { first: 10 });
    expect(result.errors).toBeUndefined();
    expect(result.data!.users!.edges.map((edge) => edge.node)).toEqual([{ id: s.user.id, name: 'Agent Smith', email: 'Agent@Example.com' }]);
    expect(result.data!.users!.pageInfo.hasNextPage).toBe(false);
  });
});
