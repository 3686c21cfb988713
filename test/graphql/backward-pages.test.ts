import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { executeOperation } from '../helpers/graphql.js';
import { messagingSetup } from '../helpers/messaging.js';
import { graphql } from '../gql/index.js';

/*
 * Relay's backward pages (`last`, `before`) on every connection, through the real /graphql
 * endpoint: the first page from the end, a walk back to the start and a walk forward to the end
 * that meet the same rows in the same order (newest first), `hasPreviousPage`/`hasNextPage` and
 * `startCursor`/`endCursor` at both ends, both cursors together, and `first` with `last` refused.
 */

const PageContacts = graphql(`
  query PageContacts($first: Int, $after: String, $last: Int, $before: String, $search: String) {
    contacts(first: $first, after: $after, last: $last, before: $before, search: $search) {
      edges { cursor node { id } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const PageConversations = graphql(`
  query PageConversations($first: Int, $after: String, $last: Int, $before: String) {
    conversations(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const PageMessages = graphql(`
  query PageMessages($conversationId: ID, $first: Int, $after: String, $last: Int, $before: String, $search: String) {
    messages(conversationId: $conversationId, first: $first, after: $after, last: $last, before: $before, search: $search) {
      edges { cursor node { id } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const PageMessagesInOrder = graphql(`
  query PageMessagesInOrder($conversationId: ID, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String, $search: String) {
    messages(conversationId: $conversationId, order: $order, first: $first, after: $after, last: $last, before: $before, search: $search) {
      edges { cursor node { id } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const PageMessagesWithSender = graphql(`
  query PageMessagesWithSender($conversationId: ID, $last: Int, $before: String) {
    messages(conversationId: $conversationId, last: $last, before: $before) {
      edges { cursor node { id body sender { type name } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const PageConversationMessages = graphql(`
  query PageConversationMessages($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      messages(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { id } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`);

const PageConversationMessagesInOrder = graphql(`
  query PageConversationMessagesInOrder($id: ID!, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      messages(order: $order, first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { id } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`);

const InboxThreads = graphql(`
  query InboxThreads($order: MessageOrder, $last: Int) {
    conversations(first: 10) {
      edges { node { id messages(order: $order, last: $last) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } } }
    }
  }
`);

const PageTemplates = graphql(`
  query PageTemplates($first: Int, $after: String, $last: Int, $before: String) {
    templates(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

interface Connection {
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor?: string | null; endCursor?: string | null };
}

type PageVariables = { first?: number; after?: string; last?: number; before?: string };

/** Reads one page of a connection. */
type Read = (variables: PageVariables) => Promise<Connection>;

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

/** Checks a page's cursors against its edges. */
function cursorsMatch(page: Connection) {
  expect(page.pageInfo.startCursor ?? null).toBe(page.edges[0]?.cursor ?? null);
  expect(page.pageInfo.endCursor ?? null).toBe(page.edges[page.edges.length - 1]?.cursor ?? null);
}

/**
 * Walks the connection forward from its start and backward from its end in pages of `size`,
 * checking both walks meet `expected` (ids newest first) and the page info at both ends.
 */
async function walkBothWays(read: Read, expected: string[], size: number) {
  // Forward from the start.
  const forward: string[] = [];
  let page = await read({ first: size });
  expect(page.pageInfo.hasPreviousPage).toBe(false);
  for (;;) {
    cursorsMatch(page);
    forward.push(...page.edges.map((edge) => edge.node.id));
    if (!page.pageInfo.hasNextPage) break;
    page = await read({ first: size, after: page.pageInfo.endCursor! });
    expect(page.pageInfo.hasPreviousPage).toBe(true);
  }
  expect(forward).toEqual(expected);

  // Backward from the end: the first page from the end is the oldest rows, newest first.
  const backward: string[] = [];
  page = await read({ last: size });
  expect(page.pageInfo.hasNextPage).toBe(false);
  expect(page.edges.map((edge) => edge.node.id)).toEqual(expected.slice(-size));
  expect(page.pageInfo.hasPreviousPage).toBe(expected.length > size);
  let pages = 0;
  for (;;) {
    cursorsMatch(page);
    backward.unshift(...page.edges.map((edge) => edge.node.id));
    pages++;
    if (!page.pageInfo.hasPreviousPage) break;
    page = await read({ last: size, before: page.pageInfo.startCursor! });
    expect(page.pageInfo.hasNextPage).toBe(true);
  }
  expect(backward).toEqual(expected);
  expect(pages).toBe(Math.ceil(expected.length / size));
  // At the start: the walk's last page is the newest rows, with nothing before them.
  expect(page.pageInfo.hasPreviousPage).toBe(false);
  expect(page.edges[0]!.node.id).toBe(expected[0]);

  // One row at a time backward, the smallest page.
  const one = await read({ last: 1 });
  expect(one.edges.map((edge) => edge.node.id)).toEqual(expected.slice(-1));
  expect(one.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: expected.length > 1 });

  // Both cursors bound the rows either way: the rows strictly between two of them.
  const all = await read({ first: 100 });
  const cursorAt = (index: number) => all.edges[index]!.cursor;
  const between = expected.slice(2, 5);
  const inside = await read({ first: 10, after: cursorAt(1), before: cursorAt(5) });
  expect(inside.edges.map((edge) => edge.node.id)).toEqual(between);
  expect(inside.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  const insideBackward = await read({ last: 2, after: cursorAt(1), before: cursorAt(5) });
  expect(insideBackward.edges.map((edge) => edge.node.id)).toEqual(between.slice(-2));
  expect(insideBackward.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  // `before` alone pages backward: the rows just before it.
  const justBefore = await read({ before: cursorAt(3) });
  expect(justBefore.edges.map((edge) => edge.node.id)).toEqual(expected.slice(0, 3));
  expect(justBefore.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
}

async function setup() {
  const s = await messagingSetup(app);
  const gql = <TData, TVariables>(document: Parameters<typeof executeOperation<TData, TVariables>>[3], variables: TVariables) =>
    executeOperation(app, s.host, bearer(s.apiKey), document, variables);
  const ok = async <TData, TVariables>(document: Parameters<typeof executeOperation<TData, TVariables>>[3], variables: TVariables) => {
    const result = await gql(document, variables);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    return result.data!;
  };
  return { ...s, gql, ok };
}

/** `count` rows' creation times a second apart, oldest first, two of them the same (the id orders those). */
function times(count: number): Date[] {
  const start = Date.UTC(2026, 0, 1);
  return Array.from({ length: count }, (_, i) => new Date(start + (i === 4 ? 3 : i) * 1000));
}

/** Ids of rows newest first, as every connection orders them: by creation time, then id, descending. */
function newestFirst(rows: { id: string; createdAt: Date }[]): string[] {
  return [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((row) => row.id);
}

describe('backward pages', () => {
  it('contacts: both ways, both ends, both cursors; a searched list too', async () => {
    const s = await setup();
    const rows = await app.db.prisma.contact.createManyAndReturn({
      data: times(13).map((createdAt, i) => ({ workspaceId: s.workspace.id, name: i % 2 ? `Odd ${i}` : `Even ${i}`, createdAt, updatedAt: createdAt })),
    });
    await walkBothWays(async (variables) => (await s.ok(PageContacts, variables)).contacts!, newestFirst(rows), 4);
    const odd = rows.filter((row) => row.name.startsWith('Odd'));
    await walkBothWays(async (variables) => (await s.ok(PageContacts, { ...variables, search: 'odd' })).contacts!, newestFirst(odd), 2);
  });

  it('conversations and templates: both ways, both ends', async () => {
    const s = await setup();
    const at = times(9);
    const contacts = await app.db.prisma.contact.createManyAndReturn({ data: at.map((_, i) => ({ workspaceId: s.workspace.id, name: `Contact ${i}` })) });
    const conversations = await app.db.prisma.conversation.createManyAndReturn({
      data: contacts.map((contact, i) => ({ workspaceId: s.workspace.id, channelId: s.channel.id, contactId: contact.id, createdAt: at[i]!, updatedAt: at[i]! })),
    });
    await walkBothWays(async (variables) => (await s.ok(PageConversations, variables)).conversations!, newestFirst(conversations), 3);

    const templates = await app.db.prisma.channelTemplate.createManyAndReturn({
      data: times(7).map((createdAt, i) => ({
        workspaceId: s.workspace.id,
        channelId: s.channel.id,
        name: `template_${i}`,
        language: 'en',
        body: 'Hi',
        parameterCount: 0,
        createdAt,
      })),
    });
    await walkBothWays(async (variables) => (await s.ok(PageTemplates, variables)).templates!, newestFirst([...templates, s.template]), 3);
  });

  it('messages of a conversation: the root list, the conversation’s own, with senders and searched', async () => {
    const s = await setup();
    const contact = await s.contact({ name: 'Walker', email: 'walker@example.com' });
    const conversation = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: contact.id } });
    // Another conversation's messages are no part of the walk.
    const other = await s.contact({ name: 'Other', email: 'other@example.com' });
    const elsewhere = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: other.id } });
    const message = (conversationId: string, contactId: string, body: string, createdAt: Date, isEncrypted = false) => ({
      workspaceId: s.workspace.id,
      channelId: s.channel.id,
      conversationId,
      contactId,
      body,
      isEncrypted,
      senderType: 'channel' as const,
      senderChannelId: s.channel.id,
      createdAt,
      updatedAt: createdAt,
    });
    const rows = await app.db.prisma.message.createManyAndReturn({
      data: times(13).map((createdAt, i) => message(conversation.id, contact.id, `parcel ${i % 2 ? 'shipped' : 'delayed'} ${i}`, createdAt, i === 0)),
    });
    await app.db.prisma.message.createMany({ data: times(5).map((createdAt, i) => message(elsewhere.id, other.id, `elsewhere ${i}`, createdAt)) });
    const expected = newestFirst(rows);

    await walkBothWays(async (variables) => (await s.ok(PageMessages, { ...variables, conversationId: conversation.id })).messages!, expected, 5);
    await walkBothWays(async (variables) => (await s.ok(PageConversationMessages, { ...variables, id: conversation.id })).conversation!.messages!, expected, 5);
    // Search matches no encrypted message; its pages go both ways too.
    const delayed = rows.filter((row) => row.body.includes('delayed') && !row.isEncrypted);
    await walkBothWays(async (variables) => (await s.ok(PageMessages, { ...variables, conversationId: conversation.id, search: 'delayed' })).messages!, newestFirst(delayed), 2);

    // A backward page with each message's sender (the statement that joins their names), at the end:
    // the oldest message is the encrypted one, its content hidden.
    const end = (await s.ok(PageMessagesWithSender, { conversationId: conversation.id, last: 3 })).messages!;
    expect(end.edges.map((edge) => edge.node.id)).toEqual(expected.slice(-3));
    expect(end.edges[2]!.node).toMatchObject({ body: null, sender: { type: 'channel', name: s.channel.name } });
    expect(end.edges[0]!.node.body).toMatch(/^parcel/);
    expect(end.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('messages oldest first (order: asc): walked both ways, the newest ones in reading order, cursors shared with newest first', async () => {
    const s = await setup();
    const contact = await s.contact({ name: 'Reader', email: 'reader@example.com' });
    const conversation = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: contact.id } });
    const rows = await app.db.prisma.message.createManyAndReturn({
      data: times(13).map((createdAt, i) => ({
        workspaceId: s.workspace.id,
        channelId: s.channel.id,
        conversationId: conversation.id,
        contactId: contact.id,
        body: `line ${i % 2 ? 'odd' : 'even'} ${i}`,
        senderType: 'channel' as const,
        senderChannelId: s.channel.id,
        createdAt,
        updatedAt: createdAt,
      })),
    });
    const newest = newestFirst(rows);
    const oldest = [...newest].reverse();
    const read = (order?: 'asc' | 'desc', search?: string) => async (variables: PageVariables) =>
      (await s.ok(PageMessagesInOrder, { ...variables, conversationId: conversation.id, ...(order ? { order } : {}), ...(search ? { search } : {}) })).messages!;
    const ids = (page: Connection) => page.edges.map((edge) => edge.node.id);

    // `first`/`after` walk from the oldest, `last`/`before` from the newest, both in reading order.
    await walkBothWays(read('asc'), oldest, 5);
    await walkBothWays(read('asc', 'even'), newestFirst(rows.filter((row) => row.body.includes('even'))).reverse(), 2);
    // The chat thread's first page: the newest ten, the oldest of them first, older ones before them.
    const thread = await read('asc')({ last: 10 });
    expect(ids(thread)).toEqual(oldest.slice(-10));
    expect(thread.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const older = await read('asc')({ last: 10, before: thread.pageInfo.startCursor! });
    expect(ids(older)).toEqual(oldest.slice(0, 3));
    expect(older.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });

    // The default is unchanged: newest first, the same as `order: desc`.
    const byDefault = await read()({ first: 4 });
    expect(ids(byDefault)).toEqual(newest.slice(0, 4));
    expect(await read('desc')({ first: 4 })).toEqual(byDefault);
    await walkBothWays(read('desc'), newest, 5);

    // A cursor serves both orders: a newest-first edge's cursor continues oldest first, and back.
    const desc = await read('desc')({ first: 100 });
    const pivot = desc.edges[6]!; // newest[6] is oldest[6] of 13
    const later = await read('asc')({ first: 3, after: pivot.cursor });
    expect(ids(later)).toEqual(oldest.slice(7, 10));
    expect(later.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const earlier = await read('asc')({ last: 3, before: pivot.cursor });
    expect(ids(earlier)).toEqual(oldest.slice(3, 6));
    expect(earlier.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const ascEdge = (await read('asc')({ first: 100 })).edges[2]!;
    expect(ascEdge.cursor).toBe(desc.edges[10]!.cursor);
    const back = await read('desc')({ first: 2, after: ascEdge.cursor });
    expect(ids(back)).toEqual(newest.slice(11, 13));
    expect(back.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    // An order that does not exist is refused, like any bad argument; so is a bad page size, named as asked.
    const unknown = await s.gql(PageMessagesInOrder, { conversationId: conversation.id, order: 'sideways' as never, first: 1 });
    expect(unknown.data ?? null).toBeNull();
    expect(unknown.errors?.[0]?.message).toContain('MessageOrder');
    const tooMany = await s.gql(PageMessagesInOrder, { conversationId: conversation.id, order: 'asc', first: 101 });
    expect(tooMany.errors?.[0]).toMatchObject({ message: expect.stringContaining('first must be an integer between 1 and 100') });
  });

  it("a conversation's own messages oldest first (order: asc): last: 20 is the newest twenty in reading order, as on the root list", async () => {
    const s = await setup();
    const contact = await s.contact({ name: 'Thread', email: 'thread@example.com' });
    const conversation = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: contact.id } });
    const other = await s.contact({ name: 'Elsewhere', email: 'elsewhere@example.com' });
    const elsewhere = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: other.id } });
    const message = (conversationId: string, contactId: string, i: number, createdAt: Date) => ({
      workspaceId: s.workspace.id,
      channelId: s.channel.id,
      conversationId,
      contactId,
      body: `line ${i}`,
      senderType: 'channel' as const,
      senderChannelId: s.channel.id,
      createdAt,
      updatedAt: createdAt,
    });
    const rows = await app.db.prisma.message.createManyAndReturn({ data: times(25).map((createdAt, i) => message(conversation.id, contact.id, i, createdAt)) });
    const others = await app.db.prisma.message.createManyAndReturn({ data: times(3).map((createdAt, i) => message(elsewhere.id, other.id, i, createdAt)) });
    const newest = newestFirst(rows);
    const oldest = [...newest].reverse();
    const read = (order?: 'asc' | 'desc') => async (variables: PageVariables) =>
      (await s.ok(PageConversationMessagesInOrder, { ...variables, id: conversation.id, ...(order ? { order } : {}) })).conversation!.messages!;
    const ids = (page: Connection) => page.edges.map((edge) => edge.node.id);

    await walkBothWays(read('asc'), oldest, 7);
    await walkBothWays(read('desc'), newest, 7);
    // The thread's first screen: the newest twenty, the oldest of them first; older ones before them.
    const screen = await read('asc')({ last: 20 });
    expect(ids(screen)).toEqual(oldest.slice(-20));
    expect(screen.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const older = await read('asc')({ last: 20, before: screen.pageInfo.startCursor! });
    expect(ids(older)).toEqual(oldest.slice(0, 5));
    expect(older.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    // The same page as the root list's, cursors included.
    const root = (await s.ok(PageMessagesInOrder, { conversationId: conversation.id, order: 'asc', last: 20 })).messages!;
    expect(screen).toEqual(root);
    // Without an order, newest first as before.
    expect(ids(await read()({ first: 3 }))).toEqual(newest.slice(0, 3));

    // Loaded with a list of conversations, each conversation's newest messages in reading order.
    const inbox = (await s.ok(InboxThreads, { order: 'asc', last: 20 })).conversations!.edges.map((edge) => edge.node);
    const byId = new Map(inbox.map((node) => [node.id, node.messages!]));
    expect(byId.get(conversation.id)!.edges.map((edge) => edge.node.id)).toEqual(oldest.slice(-20));
    expect(byId.get(conversation.id)!.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(byId.get(elsewhere.id)!.edges.map((edge) => edge.node.id)).toEqual(newestFirst(others).reverse());
    expect(byId.get(elsewhere.id)!.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });

    // A bad page is refused at the conversation's connection, named as asked.
    const tooMany = await s.gql(PageConversationMessagesInOrder, { id: conversation.id, order: 'asc', last: 101 });
    expect(tooMany.data).toEqual({ conversation: { messages: null } });
    expect(tooMany.errors?.[0]).toMatchObject({ message: expect.stringContaining('last must be an integer between 1 and 100'), path: ['conversation', 'messages'] });
  });

  it('first with last is refused at the connection, with a clear message; so is a bad last or before', async () => {
    const s = await setup();
    const both = await s.gql(PageContacts, { first: 2, last: 2 });
    expect(both.data).toEqual({ contacts: null });
    expect(both.errors).toHaveLength(1);
    expect(both.errors![0]).toMatchObject({
      message: expect.stringContaining('first and last cannot be used together'),
      path: ['contacts'],
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const nested = await s.gql(PageConversationMessages, { id: '00000000-0000-4000-8000-000000000000', first: 1, last: 1 });
    expect(nested.data).toEqual({ conversation: null });
    for (const variables of [{ last: 0 }, { last: 101 }]) {
      const bad = await s.gql(PageConversations, variables);
      expect(bad.data).toEqual({ conversations: null });
      expect(bad.errors![0]!.message).toContain('last must be an integer between 1 and 100');
    }
    const forged = await s.gql(PageTemplates, { last: 2, before: 'not-a-cursor' });
    expect(forged.data).toEqual({ templates: null });
    expect(forged.errors![0]).toMatchObject({ message: 'The cursor is invalid.', path: ['templates'] });
  });
});
