import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementCountingApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { executeOperation } from '../helpers/graphql.js';
import { messagingSetup } from '../helpers/messaging.js';

/**
 * GraphQL operations that ask for what their REST twin answers. Typed by hand and parsed here
 * rather than through codegen: they exist only to be counted against REST.
 */
function document<TData, TVariables>(source: string) {
  return parse(source) as unknown as TypedDocumentNode<TData, TVariables>;
}

type UserErrors = { field: string[]; message: string; code: string }[];

const UpdateContact = document<
  { updateContact: { contact: { id: string; name: string; email: string | null; phoneNumber: string | null; updatedAt: string } | null; userErrors: UserErrors } },
  { id: string; input: { name?: string; email?: string | null; phone?: string | null } }
>(`mutation StatementsUpdateContact($id: ID!, $input: UpdateContactInput!) {
  updateContact(id: $id, input: $input) { contact { id name email phoneNumber isGroup createdAt updatedAt } userErrors { field message code } }
}`);

const SendMessage = document<
  { sendMessage: { message: { id: string; body: string | null; sender: { type: string; id: string | null; name: string } } | null; userErrors: UserErrors } },
  { input: { to?: { contactId?: string; phone?: string }; message?: string } }
>(`mutation StatementsSendMessage($input: SendMessageInput!) {
  sendMessage(input: $input) {
    message {
      id conversationId contactId channelId direction type body placeholder isEncrypted status
      sender { type id name } silent mediaUrls createdAt
    }
    userErrors { field message code }
  }
}`);

const Contacts = document<
  { contacts: { edges: { cursor: string; node: { id: string; name: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } },
  { first?: number; after?: string }
>(`query StatementsContacts($first: Int, $after: String) {
  contacts(first: $first, after: $after) {
    edges { cursor node { id name email phoneNumber isGroup createdAt updatedAt } }
    pageInfo { hasNextPage endCursor }
  }
}`);

const Conversations = document<
  { conversations: { edges: { node: { id: string; messages: { edges: { node: { id: string; body: string | null; contact: { id: string; name: string } } }[] } } }[] } },
  { first?: number }
>(`query StatementsConversations($first: Int) {
  conversations(first: $first) {
    edges { node { id status lastMessageAt messages(first: 5) { edges { node { id body createdAt contact { id name } } } } } }
    pageInfo { hasNextPage endCursor }
  }
}`);

let app: TestApp;
/** The statements `run` issues (it checks its own answers). */
let counted: (run: () => Promise<void>) => Promise<string[]>;
beforeAll(async () => {
  // Without the credential cache both transports count their authentication, whatever the timing.
  ({ app, counted } = await statementCountingApp({ AUTH_CACHE_MS: '0' }));
});
afterAll(() => app.close());

async function setup() {
  const s = await messagingSetup(app);
  const gql = <TData, TVariables>(doc: TypedDocumentNode<TData, TVariables>, variables: TVariables) =>
    executeOperation(app, s.host, bearer(s.apiKey), doc, variables);
  return { ...s, gql };
}

describe('a GraphQL operation issues no more statements than its REST twin', () => {
  it('updateContact and PATCH /contacts/{id}', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'twin@example.com' });
    const rest = await counted(async () => {
      expect((await s.api.patch(`/contacts/${c.id}`, { name: 'By REST' })).status).toBe(200);
    });
    const graphql = await counted(async () => {
      const result = await s.gql(UpdateContact, { id: c.id, input: { name: 'By GraphQL' } });
      expect(result.errors).toBeUndefined();
      expect(result.data?.updateContact.contact).toMatchObject({ id: c.id, name: 'By GraphQL', email: 'twin@example.com' });
    });
    expect(graphql.length).toBeLessThanOrEqual(rest.length);
  });

  it('sendMessage and POST /messages', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'send@example.com' });
    // Both sends find the contact's conversation open.
    expect((await s.send({ to: c.id, message: 'opening' })).status).toBe(202);
    const rest = await counted(async () => {
      expect((await s.send({ to: c.id, message: 'by REST' })).status).toBe(202);
    });
    const graphql = await counted(async () => {
      const result = await s.gql(SendMessage, { input: { to: { contactId: c.id }, message: 'by GraphQL' } });
      expect(result.errors).toBeUndefined();
      expect(result.data?.sendMessage.message).toMatchObject({ body: 'by GraphQL', sender: { type: 'channel', id: s.channel.id, name: 'Main channel' } });
    });
    expect(graphql.length).toBeLessThanOrEqual(rest.length);
  });

  it('contacts(first: 25) and GET /contacts?limit=25', async () => {
    const s = await setup();
    for (let i = 0; i < 30; i++) await s.contact({ email: `page${i}@example.com` });
    let restIds: string[] = [];
    const rest = await counted(async () => {
      const page = await s.api.get('/contacts?limit=25');
      expect(page.status).toBe(200);
      restIds = page.body.data.map((contact: { id: string }) => contact.id);
    });
    const graphql = await counted(async () => {
      const result = await s.gql(Contacts, { first: 25 });
      expect(result.errors).toBeUndefined();
      expect(result.data?.contacts.edges.map((edge) => edge.node.id)).toEqual(restIds);
    });
    expect(graphql.length).toBeLessThanOrEqual(rest.length);
  });

  it('a page of contacts reads the columns of the view, not the whole row, on both transports', async () => {
    const s = await setup();
    await s.contact({ email: 'columns@example.com' });
    // The columns each read of contacts selects: what lies between SELECT and its FROM.
    const pageReads = (sql: string[]) =>
      sql.filter((statement) => /\bFROM\s+("public"\.)?"?contacts"?\s/.test(statement)).map((statement) => statement.slice(0, statement.search(/\bFROM\b/)));
    const rest = await counted(async () => {
      expect((await s.api.get('/contacts?limit=25')).status).toBe(200);
    });
    const graphql = await counted(async () => {
      expect((await s.gql(Contacts, { first: 25 })).errors).toBeUndefined();
    });
    for (const reads of [pageReads(rest), pageReads(graphql)]) {
      expect(reads).toHaveLength(1);
      expect(reads[0]).toMatch(/\bphone\b/);
      expect(reads[0]).not.toMatch(/\b(metadata|email_normalized|deleted_at|status)\b/);
    }
  });

  it('conversations → messages → contact loads each level once, however many rows', async () => {
    const s = await setup();
    const contacts = [];
    for (let i = 0; i < 3; i++) contacts.push(await s.contact({ email: `nested${i}@example.com` }));
    for (const contact of contacts) for (let j = 0; j < 3; j++) expect((await s.send({ to: contact.id, message: `hello ${j}` })).status).toBe(202);
    const graphql = await counted(async () => {
      const result = await s.gql(Conversations, { first: 10 });
      expect(result.errors).toBeUndefined();
      const conversations = result.data!.conversations.edges;
      expect(conversations).toHaveLength(3);
      for (const { node } of conversations) {
        expect(node.messages.edges.map((edge) => edge.node.body)).toEqual(['hello 2', 'hello 1', 'hello 0']);
        expect(new Set(node.messages.edges.map((edge) => edge.node.contact.id)).size).toBe(1);
      }
    });
    // Authentication, the conversations, their messages, those messages' contacts: a relation
    // loaded with its parent is never fetched again by the field beneath it.
    expect(graphql).toHaveLength(4);
  });
});

describe('a query planned once per document', () => {
  it('is not one whose nested page size is a variable: each size is loaded with its parent', async () => {
    const s = await setup();
    const contact = await s.contact({ email: 'sizes@example.com' });
    for (let j = 0; j < 3; j++) expect((await s.send({ to: contact.id, message: `size ${j}` })).status).toBe(202);
    const Sized = document<
      { conversations: { edges: { node: { messages: { edges: { node: { body: string | null } }[] } } }[] } },
      { n: number }
    >(`query StatementsSized($n: Int) { conversations(first: 5) { edges { node { messages(first: $n) { edges { node { body } } } } } } }`);
    for (const n of [1, 3, 2]) {
      const graphql = await counted(async () => {
        const result = await s.gql(Sized, { n });
        expect(result.errors).toBeUndefined();
        expect(result.data!.conversations.edges[0]!.node.messages.edges.map((edge) => edge.node.body)).toEqual(['size 2', 'size 1', 'size 0'].slice(0, n));
      });
      // Authentication, the conversations with their messages: the page the request asked for, never one planned for another.
      expect(graphql).toHaveLength(3);
    }
  });
});
