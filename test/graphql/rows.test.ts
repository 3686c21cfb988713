import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import SchemaBuilder from '@pothos/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// The fields below go on a schema builder of this file's own: the modules are loaded afresh for it
// (their plugins registered again), and dropped after it, so no other file sees them.
vi.resetModules();
SchemaBuilder.allowPluginReRegistration = true;
afterAll(() => {
  vi.resetModules();
});
const { builder } = await import('../../src/graphql/builder.js');

/*
 * Fields added to object types the obvious way, before the schema is built (the app below builds
 * it): a column exposed, and a value computed from a column its field selects. Each must resolve
 * on every read of its type, the pages that load only the columns their type reads included.
 */
builder.prismaObjectField('Contact', 'status', (t) => t.exposeString('status'));
builder.prismaObjectField('Contact', 'metadataKeys', (t) =>
  t.stringList({ select: { metadata: true }, resolve: (contact) => Object.keys(contact.metadata as Record<string, unknown>) }),
);
builder.prismaObjectField('Message', 'deliveryAttempts', (t) => t.exposeInt('deliveryAttempts'));
builder.prismaObjectField('Conversation', 'updatedAt', (t) => t.expose('updatedAt', { type: 'DateTime' }));
builder.prismaObjectField('ChannelTemplate', 'createdAt', (t) => t.expose('createdAt', { type: 'DateTime' }));

const { createTestApp } = await import('../helpers/app.js');
const { bearer } = await import('../helpers/factories.js');
const { executeOperation } = await import('../helpers/graphql.js');
const { messagingSetup } = await import('../helpers/messaging.js');

function document<TData, TVariables>(source: string) {
  return parse(source) as unknown as TypedDocumentNode<TData, TVariables>;
}

type Nodes<T> = { edges: { node: T }[] };

const Contacts = document<{ contacts: Nodes<{ id: string; name: string; status: string }> }, { search?: string }>(
  `query RowsContacts($search: String) { contacts(first: 10, search: $search) { edges { node { id name status } } } }`,
);
const ContactsMetadata = document<{ contacts: Nodes<{ id: string; metadataKeys: string[] }> }, Record<string, never>>(
  `query RowsContactsMetadata { contacts(first: 10) { edges { node { id metadataKeys } } } }`,
);
const OneContact = document<{ contact: { status: string; metadataKeys: string[] } | null }, { id: string }>(
  `query RowsContact($id: ID!) { contact(id: $id) { status metadataKeys } }`,
);
const UpdateContact = document<{ updateContact: { contact: { name: string; status: string } | null } }, { id: string; name: string }>(
  `mutation RowsUpdateContact($id: ID!, $name: String) { updateContact(id: $id, input: { name: $name }) { contact { name status } } }`,
);
const Messages = document<{ messages: Nodes<{ body: string | null; deliveryAttempts: number }> }, { search?: string }>(
  `query RowsMessages($search: String) { messages(first: 10, search: $search) { edges { node { body deliveryAttempts } } } }`,
);
const Conversations = document<{ conversations: Nodes<{ id: string; updatedAt: string }> }, Record<string, never>>(
  `query RowsConversations { conversations(first: 10) { edges { node { id updatedAt } } } }`,
);
const Templates = document<{ templates: Nodes<{ name: string; createdAt: string }> }, Record<string, never>>(
  `query RowsTemplates { templates(first: 10) { edges { node { name createdAt } } } }`,
);

let app: Awaited<ReturnType<typeof createTestApp>>;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

describe('a field added to an object type the obvious way', () => {
  it('resolves on every read of its type: pages of plain fields, searched pages, one row, a mutation’s answer', async () => {
    const s = await messagingSetup(app);
    const gql = <TData, TVariables>(doc: TypedDocumentNode<TData, TVariables>, variables: TVariables) =>
      executeOperation(app, s.host, bearer(s.apiKey), doc, variables);
    const ann = await s.contact({ name: 'Ann Rows', email: 'ann.rows@example.com' });
    const bob = await s.contact({ name: 'Bob Rows', email: 'bob.rows@example.com' });
    await app.db.prisma.contact.update({ where: { id: bob.id }, data: { status: 'blocked', metadata: { tier: 'gold' } } });
    expect((await s.send({ to: ann.id, message: 'hello rows' })).status).toBe(202);

    for (const variables of [{}, { search: 'Rows' }]) {
      const page = await gql(Contacts, variables);
      expect(page.errors).toBeUndefined();
      expect(page.data!.contacts.edges.map((edge) => edge.node)).toEqual([
        { id: bob.id, name: 'Bob Rows', status: 'blocked' },
        { id: ann.id, name: 'Ann Rows', status: 'active' },
      ]);
    }
    const metadata = await gql(ContactsMetadata, {});
    expect(metadata.errors).toBeUndefined();
    expect(metadata.data!.contacts.edges.map((edge) => edge.node)).toEqual([
      { id: bob.id, metadataKeys: ['tier'] },
      { id: ann.id, metadataKeys: [] },
    ]);
    expect((await gql(OneContact, { id: bob.id })).data).toEqual({ contact: { status: 'blocked', metadataKeys: ['tier'] } });
    expect((await gql(UpdateContact, { id: ann.id, name: 'Ann Renamed' })).data).toEqual({ updateContact: { contact: { name: 'Ann Renamed', status: 'active' } } });

    for (const variables of [{}, { search: 'hello' }]) {
      const messages = await gql(Messages, variables);
      expect(messages.errors).toBeUndefined();
      expect(messages.data!.messages.edges.map((edge) => edge.node)).toEqual([{ body: 'hello rows', deliveryAttempts: 0 }]);
    }
    const conversations = await gql(Conversations, {});
    expect(conversations.errors).toBeUndefined();
    expect(conversations.data!.conversations.edges).toHaveLength(1);
    expect(conversations.data!.conversations.edges[0]!.node.updatedAt).toEqual(expect.any(String));
    const templates = await gql(Templates, {});
    expect(templates.errors).toBeUndefined();
    expect(templates.data!.templates.edges.map((edge) => edge.node)).toEqual([{ name: 'order_ready', createdAt: s.template.createdAt.toISOString() }]);
  });
});
