import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteContact, importContact } from '../../../src/modules/contacts/contacts.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { addChannel, bearer } from '../../helpers/factories.js';
import { executeOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';
import { appWithFailingInsert } from '../../helpers/fresh-database.js';
import { graphql } from '../../gql/index.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

async function setup() {
  const s = await messagingSetup(app);
  const gql = <TData, TVariables>(document: Parameters<typeof executeOperation<TData, TVariables>>[3], variables?: TVariables) =>
    executeOperation(app, s.host, bearer(s.apiKey), document, variables);
  return { ...s, gql };
}

const ContactQuery = graphql(`
  query Contact($id: ID!) {
    contact(id: $id) { id name email phoneNumber isGroup createdAt updatedAt }
  }
`);

const FindContactQuery = graphql(`
  query FindContact($email: String, $phone: String) {
    findContact(email: $email, phone: $phone) { id name }
  }
`);

const ContactsQuery = graphql(`
  query Contacts($first: Int, $after: String, $search: String) {
    contacts(first: $first, after: $after, search: $search) {
      edges { cursor node { id name } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const CreateContact = graphql(`
  mutation CreateContact($input: CreateContactInput!) {
    createContact(input: $input) {
      contact { id name email phoneNumber }
      userErrors { field message code }
    }
  }
`);

const UpdateContact = graphql(`
  mutation UpdateContact($id: ID!, $input: UpdateContactInput!) {
    updateContact(id: $id, input: $input) {
      contact { id name email phoneNumber }
      userErrors { field message code }
    }
  }
`);

const SendMessage = graphql(`
  mutation SendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id body placeholder isEncrypted status type silent mediaUrls
        sender { type id name }
        contact { id name }
        conversation { id status }
      }
      userErrors { field message code }
    }
  }
`);

const ConversationQuery = graphql(`
  query Conversation($id: ID!) {
    conversation(id: $id) {
      id status closedAt
      contact { id }
      stateChanges { type at actor { type id name } }
      messages(first: 2) { edges { node { id body } } pageInfo { hasNextPage endCursor } }
    }
  }
`);

const CloseConversation = graphql(`
  mutation CloseConversation($id: ID!) {
    closeConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }
  }
`);

const ReopenConversation = graphql(`
  mutation ReopenConversation($id: ID!) {
    reopenConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }
  }
`);

const MessagesQuery = graphql(`
  query Messages($search: String, $conversationId: ID, $first: Int) {
    messages(search: $search, conversationId: $conversationId, first: $first) {
      edges { node { id body placeholder isEncrypted } }
      pageInfo { hasNextPage }
    }
  }
`);

const ConversationsQuery = graphql(`
  query Conversations($status: ConversationStatus) {
    conversations(status: $status) { edges { node { id status } } }
  }
`);

const TemplatesQuery = graphql(`
  query Templates {
    templates { edges { node { id name language category status body parameterCount } } }
  }
`);

describe('contacts over GraphQL', () => {
  it('reads a contact, and null (not an error) for another workspace, a deleted or a malformed id', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'gq@example.com', phone: '+31612345678' });
    const result = await s.gql(ContactQuery, { id: c.id });
    expect(result.errors).toBeUndefined();
    expect(result.data?.contact).toEqual({
      id: c.id,
      name: 'Recipient',
      email: 'gq@example.com',
      phoneNumber: '+31612345678',
      isGroup: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const other = await setup();
    const foreign = await other.contact({ email: 'foreign@example.com' });
    const gone = await s.contact({ email: 'gone@example.com' });
    await deleteContact(app.db.prisma, gone.id);
    for (const id of [foreign.id, gone.id, 'not-a-uuid']) {
      const missing = await s.gql(ContactQuery, { id });
      expect(missing).toEqual({ status: 200, data: { contact: null } });
    }
  });

  it('finds by email or phone variant and answers null when nothing matches', async () => {
    const s = await setup();
    const legacy = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Jan', phoneRaw: '0031 6 1234 5678', isGroup: false });
    expect((await s.gql(FindContactQuery, { phone: '+31612345678' })).data?.findContact).toEqual({ id: legacy.id, name: 'Jan' });
    expect((await s.gql(FindContactQuery, { email: 'nobody@example.com' })).data?.findContact).toBeNull();
  });

  it('pages contacts as a Relay connection, newest first, with first capped at 100', async () => {
    const s = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.contact({ name: `Person ${i}`, email: `p${i}@example.com` })).id);
    const first = await s.gql(ContactsQuery, { first: 2 });
    expect(first.data?.contacts?.pageInfo.hasNextPage).toBe(true);
    const rest = await s.gql(ContactsQuery, { first: 10, after: first.data!.contacts!.pageInfo.endCursor });
    expect(rest.data?.contacts?.pageInfo).toEqual({ hasNextPage: false, endCursor: rest.data!.contacts!.edges[2]!.cursor });
    expect([...first.data!.contacts!.edges, ...rest.data!.contacts!.edges].map((e) => e.node.id)).toEqual([...ids].reverse());
    expect((await s.gql(ContactsQuery, { search: 'person 3' })).data?.contacts?.edges.map((e) => e.node.name)).toEqual(['Person 3']);

    const errorLinesBefore = app.logs.filter((line) => JSON.parse(line).level >= 50).length;
    for (const variables of [{ first: 0 }, { first: 101 }, { after: 'garbage' }]) {
      const bad = await s.gql(ContactsQuery, variables);
      // Refused at the connection, which alone is null.
      expect(bad.data).toEqual({ contacts: null });
      expect(bad.errors?.[0]).toMatchObject({ path: ['contacts'], extensions: { code: 'BAD_USER_INPUT' } });
    }
    // The client's mistakes are not the server's errors.
    expect(app.logs.filter((line) => JSON.parse(line).level >= 50)).toHaveLength(errorLinesBefore);
  });

  it('creates and updates contacts, with userErrors carrying the REST 422 messages', async () => {
    const s = await setup();
    const created = await s.gql(CreateContact, { input: { name: ' Ann ', email: 'ann@example.com' } });
    expect(created.data?.createContact).toEqual({
      contact: { id: expect.any(String), name: 'Ann', email: 'ann@example.com', phoneNumber: null },
      userErrors: [],
    });
    const id = created.data!.createContact!.contact!.id;
    const updated = await s.gql(UpdateContact, { id, input: { phone: '+31612340000', email: null } });
    expect(updated.data?.updateContact?.contact).toMatchObject({ email: null, phoneNumber: '+31612340000' });

    const input = { name: 'A', email: 'not-an-email', phone: '+31 6 12' };
    const rest = await s.api.post('/contacts', input);
    const failed = await s.gql(CreateContact, { input });
    expect(failed.data?.createContact?.contact).toBeNull();
    expect(failed.data?.createContact?.userErrors).toEqual(
      Object.entries(rest.body.errors as Record<string, string[]>).flatMap(([field, messages]) =>
        messages.map((message) => ({ field: ['input', field], message, code: 'INVALID' })),
      ),
    );
    expect(failed.data?.createContact?.userErrors.map((e) => e.field)).toEqual([['input', 'name'], ['input', 'email'], ['input', 'phone']]);
  });

  it('reports a taken email with code TAKEN and a missing contact with NOT_FOUND', async () => {
    const s = await setup();
    await s.contact({ email: 'taken@example.com' });
    const dup = await s.gql(CreateContact, { input: { name: 'Dup', email: 'TAKEN@example.com' } });
    expect(dup.data?.createContact?.userErrors).toEqual([{ field: ['input', 'email'], message: 'The email has already been taken.', code: 'TAKEN' }]);
    const missing = await s.gql(UpdateContact, { id: '0193a2b4-0000-7000-8000-000000000000', input: { name: 'Nobody' } });
    expect(missing.data?.updateContact).toEqual({ contact: null, userErrors: [{ field: ['id'], message: 'Contact not found.', code: 'NOT_FOUND' }] });
    const empty = await s.gql(UpdateContact, { id: (await s.contact({ email: 'e@example.com' })).id, input: {} });
    expect(empty.data?.updateContact?.userErrors).toEqual([
      { field: ['input'], message: 'At least one of name, email or phone must be given.', code: 'INVALID' },
    ]);
  });
});

describe('messages and conversations over GraphQL', () => {
  it('sends a message and returns it with its sender, contact and conversation', async () => {
    const s = await setup();
    const result = await s.gql(SendMessage, { input: { to: { phone: '+14155552671', name: 'Pat' }, message: 'Hello Pat', from: s.user.email } });
    expect(result.errors).toBeUndefined();
    expect(result.data?.sendMessage).toEqual({
      message: {
        id: expect.any(String),
        body: 'Hello Pat',
        placeholder: null,
        isEncrypted: false,
        status: 'queued',
        type: 'text',
        silent: false,
        mediaUrls: [],
        sender: { type: 'user', id: s.user.id, name: 'Agent Smith' },
        contact: { id: expect.any(String), name: 'Pat' },
        conversation: { id: expect.any(String), status: 'open' },
      },
      userErrors: [],
    });
  });

  it('never shows encrypted content: body null, placeholder set, not found by search', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'enc@example.com' });
    const ciphertext = 'b64:SECRETPAYLOAD/armadillo==';
    const sent = await s.gql(SendMessage, { input: { to: { contactId: c.id }, message: ciphertext, isEncrypted: true } });
    expect(sent.data?.sendMessage?.message).toMatchObject({ body: null, placeholder: 'Encrypted message hidden', isEncrypted: true });
    await s.gql(SendMessage, { input: { to: { contactId: c.id }, message: 'plain armadillo' } });
    const all = await s.gql(MessagesQuery, {});
    const searched = await s.gql(MessagesQuery, { search: 'armadillo' });
    expect(searched.data?.messages?.edges.map((e) => e.node.body)).toEqual(['plain armadillo']);
    expect((await s.gql(MessagesQuery, { search: 'SECRETPAYLOAD' })).data?.messages?.edges).toEqual([]);
    expect(JSON.stringify([sent, all, searched])).not.toContain('SECRETPAYLOAD');
  });

  it('reports send failures as userErrors on GraphQL input paths', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'ue@example.com' });
    const bad = await s.gql(SendMessage, {
      input: { to: { phone: '+31 6' }, message: 'x', mediaUrls: ['http://plain.example/a'] },
    });
    expect(bad.data?.sendMessage).toEqual({
      message: null,
      userErrors: [
        { field: ['input', 'to', 'phone'], message: 'The phone must be a valid E.164 number: a leading +, the country code and digits only.', code: 'INVALID' },
        { field: ['input', 'mediaUrls', '0'], message: 'Each media URL must be an https:// URL of at most 2048 characters.', code: 'INVALID' },
      ],
    });
    const encryptedTemplate = await s.gql(SendMessage, {
      input: { to: { contactId: c.id }, type: 'template', isEncrypted: true, template: { name: 'order_ready', parameters: ['a', 'b'] } },
    });
    expect(encryptedTemplate.data?.sendMessage?.userErrors).toEqual([
      { field: ['input', 'isEncrypted'], message: 'A template message cannot be encrypted.', code: 'INVALID' },
    ]);
    const template = await s.gql(SendMessage, {
      input: { to: { contactId: c.id }, type: 'template', template: { name: 'order_ready', parameters: ['Ann', '#9'] } },
    });
    expect(template.data?.sendMessage?.message).toMatchObject({ type: 'template', body: 'Hi Ann, order #9 is ready.' });
  });

  it('reads, closes and reopens conversations with their state changes and messages', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'cv@example.com' });
    let conversationId = '';
    for (const text of ['one', 'two', 'three']) {
      conversationId = (await s.gql(SendMessage, { input: { to: { contactId: c.id }, message: text } })).data!.sendMessage!.message!.conversation.id;
    }
    const closed = await s.gql(CloseConversation, { id: conversationId });
    expect(closed.data?.closeConversation).toEqual({
      conversation: { id: conversationId, status: 'closed', stateChanges: [{ type: 'opened' }, { type: 'closed' }] },
      userErrors: [],
    });
    expect((await s.gql(CloseConversation, { id: conversationId })).data?.closeConversation?.conversation?.stateChanges).toHaveLength(2);
    expect((await s.gql(ConversationsQuery, { status: 'closed' })).data?.conversations?.edges.map((e) => e.node.id)).toEqual([conversationId]);
    const reopened = await s.gql(ReopenConversation, { id: conversationId });
    expect(reopened.data?.reopenConversation?.conversation?.status).toBe('open');

    const read = await s.gql(ConversationQuery, { id: conversationId });
    expect(read.data?.conversation).toMatchObject({
      id: conversationId,
      status: 'open',
      closedAt: null,
      contact: { id: c.id },
      stateChanges: [
        { type: 'opened', actor: { type: 'channel', id: s.channel.id, name: 'Main channel' } },
        { type: 'closed', actor: { type: 'channel' } },
        { type: 'reopened', actor: { type: 'channel' } },
      ],
      messages: { edges: [{ node: { body: 'three' } }, { node: { body: 'two' } }], pageInfo: { hasNextPage: true } },
    });

    const other = await addChannel(app.db.prisma, s.workspace.id, 'Other');
    const asOther = await executeOperation(app, s.host, bearer(other.apiKey), ConversationQuery, { id: conversationId });
    expect(asOther.data?.conversation).toBeNull();
    const closeAsOther = await executeOperation(app, s.host, bearer(other.apiKey), CloseConversation, { id: conversationId });
    expect(closeAsOther.data?.closeConversation?.userErrors).toEqual([{ field: ['id'], message: 'Conversation not found.', code: 'NOT_FOUND' }]);
  });

  it('lists the acting channel’s templates', async () => {
    const s = await setup();
    const result = await s.gql(TemplatesQuery);
    expect(result.data?.templates?.edges.map((e) => e.node)).toEqual([
      { id: s.template.id, name: 'order_ready', language: 'en', category: 'utility', status: 'approved', body: 'Hi {{1}}, order {{2}} is ready.', parameterCount: 2 },
    ]);
  });

  it('a credential of several channels reads and changes contacts and messages without X-Channel-Uuid; creating a contact or reading templates needs a channel', async () => {
    const s = await setup();
    const { createConnection } = await import('../../helpers/factories.js');
    const second = await addChannel(app.db.prisma, s.workspace.id, 'Second');
    const { token } = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'CRM', channelIds: [s.channel.id, second.channel.id] });
    const email = `ann-${Date.now()}@example.com`;
    const ann = await s.contact({ name: 'Ann', email });
    const onSecond = (await restClient(app, s.host, second.apiKey).post('/messages', { to: ann.id, message: 'on the second' })).body.data.message as { id: string };
    const messages = await executeOperation(app, s.host, bearer(token), MessagesQuery, { first: 100 });
    expect(messages.errors).toBeUndefined();
    expect(messages.data!.messages!.edges.map((edge) => edge.node.id)).toContain(onSecond.id);
    for (const [document, variables] of [
      [ContactsQuery, {}],
      [ContactQuery, { id: ann.id }],
      [FindContactQuery, { email }],
    ] as const) {
      const contacts = await executeOperation(app, s.host, bearer(token), document as typeof ContactsQuery, variables as never);
      expect(contacts.errors).toBeUndefined();
    }
    const updated = await executeOperation(app, s.host, bearer(token), UpdateContact, { id: ann.id, input: { name: 'Ann B' } });
    expect(updated.data!.updateContact!.contact).toMatchObject({ id: ann.id, name: 'Ann B' });
    const created = await executeOperation(app, s.host, bearer(token), CreateContact, { input: { name: 'Bo', email: `bo-${Date.now()}@example.com` } });
    expect(created.errors?.[0]?.extensions?.code).toBe('CHANNEL_REQUIRED');
    const templates = await executeOperation(app, s.host, bearer(token), TemplatesQuery, {});
    expect(templates.errors?.[0]?.extensions?.code).toBe('CHANNEL_REQUIRED');
  });
});

describe('unexpected failures over GraphQL', () => {
  it('are masked: the client sees a generic error, no message, stack or SQL', async () => {
    const local = await appWithFailingInsert('messages', "NEW.body = 'explode'", 'disk on fire at sector 7');
    try {
      const s = await messagingSetup(local);
      const result = await executeOperation(local, s.host, bearer(s.apiKey), SendMessage, { input: { to: { email: 'x@example.com' }, message: 'explode' } });
      expect(result.status).toBe(200);
      expect(result.data).toEqual({ sendMessage: null });
      expect(result.errors).toEqual([{ message: 'Unexpected error.', path: ['sendMessage'], locations: expect.any(Array), extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
      expect(JSON.stringify(result)).not.toMatch(/disk on fire|INSERT|stack/i);
      const errorLines = local.logs.filter((line) => JSON.parse(line).level >= 50);
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]).toContain('unexpected failure');
      expect(errorLines[0]).toContain('disk on fire');
      expect(errorLines[0]).not.toContain('explode');
      expect(await local.db.prisma.message.count()).toBe(0);
      expect(await local.db.prisma.contact.count({ where: { email: 'x@example.com' } })).toBe(0);
    } finally {
      await local.drop();
    }
  });
});
