import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { executeOperation } from '../helpers/graphql.js';
import { messagingSetup } from '../helpers/messaging.js';
import { graphql } from '../gql/index.js';
import type { InboxPageQueryVariables } from '../gql/graphql.js';
import { receiveMessage } from '../../src/modules/inbound/inbound.service.js';

/* CONTRACT §9: the inbox over GraphQL. */

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

describe('users(first, after)', () => {
  it("is a connection of the workspace's users", async () => {
    const s = await setup();
    const result = await s.gql(InboxUsers, { first: 10 });
    expect(result.errors).toBeUndefined();
    expect(result.data!.users!.edges.map((edge) => edge.node)).toEqual([{ id: s.user.id, name: 'Agent Smith', email: 'Agent@Example.com' }]);
    expect(result.data!.users!.pageInfo.hasNextPage).toBe(false);
  });
});
