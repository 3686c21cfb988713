import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteContact, importContact } from '../../../src/modules/contacts/contacts.service.js';
import { createTemplate } from '../../../src/modules/templates/templates.service.js';
import { createTestApp, onPostgres, type TestApp } from '../../helpers/app.js';
import { addChannel } from '../../helpers/factories.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

describe('POST /messages: recipients', () => {
  it('sends a text message to a contact UUID: 202 with the queued message view', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'to@example.com' });
    const result = await s.send({ to: c.id, type: 'text', message: 'Hello there' });
    expect(result.status).toBe(202);
    expect(result.body).toEqual({
      data: {
        message: {
          id: UUID,
          conversationId: UUID,
          contactId: c.id,
          channelId: s.channel.id,
          direction: 'outbound',
          type: 'text',
          body: 'Hello there',
          isEncrypted: false,
          status: 'queued',
          failureReason: null,
          sender: { type: 'channel', id: s.channel.id, name: 'Main channel' },
          broadcastId: null,
          silent: false,
          mediaUrls: [],
          media: [],
          createdAt: expect.any(String),
        },
      },
    });
    const deliveries = await app.db.prisma.delivery.findMany({ where: { messageId: result.body.data.message.id } });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.status).toBe('pending');
  });

  it('sends to a group contact by its UUID', async () => {
    const s = await messagingSetup(app);
    const group = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Team', isGroup: true });
    const result = await s.send({ to: group.id, message: 'Hi team' });
    expect(result.status).toBe(202);
    expect(result.body.data.message.contactId).toBe(group.id);
  });

  it('rejects a `to` that is not a live contact UUID of the workspace, with 422 on to', async () => {
    const s = await messagingSetup(app);
    const gone = await s.contact({ email: 'gone@example.com' });
    await deleteContact(app.db.prisma, gone.id);
    const other = await messagingSetup(app);
    const foreign = await other.contact({ email: 'foreign@example.com' });
    for (const to of [gone.id, foreign.id, '0193a2b4-0000-7000-8000-000000000000']) {
      const result = await s.send({ to, message: 'x' });
      expect(result.status).toBe(422);
      expect(result.body.errors).toEqual({ to: ['The selected contact does not exist.'] });
    }
    const malformed = await s.send({ to: 'bob', message: 'x' });
    expect(malformed.body.errors).toEqual({ to: ['The recipient must be a contact UUID or an object with name, email or phone.'] });
    expect(await app.db.prisma.message.count({ where: { channelId: s.channel.id } })).toBe(0);
  });

  it('answers 422 on to when there is no recipient at all', async () => {
    const s = await messagingSetup(app);
    const result = await s.send({ message: 'to nobody', to: null });
    expect(result.status).toBe(422);
    expect(result.body.errors).toEqual({ to: ['A recipient is required: give to, contact or sender.'] });
  });

  it('reuses the contact matched by phone (stored variants included) before email, and links it to the channel', async () => {
    const s = await messagingSetup(app);
    const legacy = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Jan', phoneRaw: '0031 6 1234 5678', isGroup: false });
    const byEmail = await s.contact({ email: 'jan@example.com' });
    const result = await s.send({ to: { phone: '+31612345678', email: 'jan@example.com' }, message: 'hoi' });
    expect(result.body.data.message.contactId).toBe(legacy.id);
    expect(await app.db.prisma.contactChannel.count({ where: { contactId: legacy.id, channelId: s.channel.id } })).toBe(1);
    const second = await s.send({ contact: { email: 'JAN@example.com' }, message: 'hoi' });
    expect(second.body.data.message.contactId).toBe(byEmail.id);
  });

  it('creates a contact from details, named after its phone or email unless a name is given', async () => {
    const s = await messagingSetup(app);
    const byPhone = await s.send({ to: { phone: '+14155552671' }, message: 'hi' });
    const named = await s.send({ contact: { name: 'Bea', email: 'bea@example.com' }, message: 'hi' });
    const contacts = await app.db.prisma.contact.findMany({
      where: { id: { in: [byPhone.body.data.message.contactId, named.body.data.message.contactId] } },
      include: { phones: true, channels: true },
      orderBy: { createdAt: 'asc' },
    });
    expect(contacts.map((c) => [c.name, c.email, c.phone, c.phones.map((p) => p.number), c.channels.map((l) => l.channelId)])).toEqual([
      ['+14155552671', null, '+14155552671', ['+14155552671'], [s.channel.id]],
      ['Bea', 'bea@example.com', null, [], [s.channel.id]],
    ]);
  });

  it('resolves to, then contact, then the legacy sender only when neither is present', async () => {
    const s = await messagingSetup(app);
    const a = await s.contact({ email: 'a@example.com' });
    const b = await s.contact({ email: 'b@example.com' });
    const c = await s.contact({ email: 'c@example.com' });
    const recipient = async (body: Record<string, unknown>) => (await s.send({ message: 'x', ...body })).body.data.message.contactId;
    expect(await recipient({ to: a.id, contact: { email: 'b@example.com' }, sender: { email: 'c@example.com' } })).toBe(a.id);
    expect(await recipient({ contact: { email: 'b@example.com' }, sender: { email: 'c@example.com' } })).toBe(b.id);
    expect(await recipient({ to: null, contact: { email: 'b@example.com' }, sender: { email: 'c@example.com' } })).toBe(b.id);
    expect(await recipient({ sender: { email: 'c@example.com' } })).toBe(c.id);
  });

  it('validates recipient details with the contact rules, under dotted keys', async () => {
    const s = await messagingSetup(app);
    expect((await s.send({ to: { phone: '+31 6 12' }, message: 'x' })).body.errors).toEqual({
      'to.phone': ['The phone must be a valid E.164 number: a leading +, the country code and digits only.'],
    });
    expect((await s.send({ contact: { name: 'Only a name' }, message: 'x' })).body.errors).toEqual({ contact: ['The recipient needs an email or a phone.'] });
    expect((await s.send({ sender: { email: 'nope' }, message: 'x' })).body.errors).toEqual({ 'sender.email': ['The email must be a valid email address.'] });
  });
});

describe('POST /messages: attribution, content and media', () => {
  it('attributes to a workspace user by id or email, to an external actor otherwise, and to the channel without from', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'from@example.com' });
    const sender = async (from?: string) => (await s.send({ to: c.id, message: 'x', ...(from === undefined ? {} : { from }) })).body.data.message.sender;
    expect(await sender(s.user.id)).toEqual({ type: 'user', id: s.user.id, name: 'Agent Smith' });
    expect(await sender('agent@EXAMPLE.com')).toEqual({ type: 'user', id: s.user.id, name: 'Agent Smith' });
    expect(await sender('Zapier bot')).toEqual({ type: 'external', id: null, name: 'Zapier bot' });
    expect(await sender()).toEqual({ type: 'channel', id: s.channel.id, name: 'Main channel' });
    const blank = await s.send({ to: c.id, message: 'x', from: '  ' });
    expect(blank.status).toBe(422);
    expect(Object.keys(blank.body.errors)).toEqual(['from']);
  });

  it('requires a non-blank text message of at most 4096 characters, 65536 when encrypted', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'len@example.com' });
    expect((await s.send({ to: c.id })).body.errors).toEqual({ message: ['The message field is required.'] });
    expect((await s.send({ to: c.id, message: '   ' })).body.errors).toEqual({ message: ['The message field is required.'] });
    expect((await s.send({ to: c.id, message: 'x'.repeat(4097) })).body.errors).toEqual({ message: ['The message must not be greater than 4096 characters.'] });
    expect((await s.send({ to: c.id, message: 'x'.repeat(4096) })).status).toBe(202);
    expect((await s.send({ to: c.id, message: 'x'.repeat(60000), is_encrypted: true })).status).toBe(202);
    expect((await s.send({ to: c.id, message: 'x'.repeat(65537), is_encrypted: true })).body.errors).toEqual({
      message: ['The message must not be greater than 65536 characters.'],
    });
  });

  it('rejects an unknown type and non-boolean flags', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'flags@example.com' });
    const result = await s.send({ to: c.id, message: 'x', type: 'fax', silent: 'yes', is_encrypted: 1 });
    expect(result.status).toBe(422);
    expect(result.body.errors).toEqual({
      type: ['The type must be text or template.'],
      is_encrypted: ['The is_encrypted field must be true or false.'],
      silent: ['The silent field must be true or false.'],
    });
  });

  it('stores and shows up to 10 https media URLs, and rejects others', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'media@example.com' });
    const urls = ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.pdf?sig=1'];
    const sent = await s.send({ to: c.id, message: 'see attached', media_urls: urls });
    expect(sent.body.data.message.mediaUrls).toEqual(urls);
    expect((await app.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.data.message.id } })).mediaUrls).toEqual(urls);
    expect((await s.send({ to: c.id, message: 'x', media_urls: ['https://ok.example/a', 'http://plain.example/b'] })).body.errors).toEqual({
      'media_urls.1': ['Each media URL must be an https:// URL of at most 2048 characters.'],
    });
    expect((await s.send({ to: c.id, message: 'x', media_urls: [`https://x.example/${'a'.repeat(2048)}`] })).body.errors).toHaveProperty(['media_urls.0']);
    expect((await s.send({ to: c.id, message: 'x', media_urls: Array(11).fill('https://x.example/a') })).body.errors).toEqual({
      media_urls: ['The media_urls must be a list of at most 10 URLs.'],
    });
    expect((await s.send({ to: c.id, message: 'x', media_urls: 'https://x.example/a' })).body.errors).toEqual({
      media_urls: ['The media_urls must be a list of at most 10 URLs.'],
    });
  });
});

describe('POST /messages: templates', () => {
  it('renders an approved template of the acting channel with exactly its parameters', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'tpl@example.com' });
    const result = await s.send({ to: c.id, type: 'template', template: { name: 'order_ready', language: 'en', parameters: ['Ann', '#42'] } });
    expect(result.status).toBe(202);
    expect(result.body.data.message).toMatchObject({ type: 'template', body: 'Hi Ann, order #42 is ready.' });
    const stored = await app.db.prisma.message.findUniqueOrThrow({ where: { id: result.body.data.message.id } });
    expect([stored.templateId, stored.templateParameters]).toEqual([s.template.id, ['Ann', '#42']]);
    expect((await s.send({ to: c.id, type: 'template', template: { name: 'order_ready', parameters: ['Bo', '#7'] } })).status).toBe(202);
  });

  it('rejects wrong parameter counts, unknown, unapproved and foreign templates, and encryption', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'tpl2@example.com' });
    await createTemplate(app.db.prisma, { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'draft', language: 'en', body: 'Hi', status: 'pending' });
    const other = await addChannel(app.db.prisma, s.workspace.id, 'Other');
    await createTemplate(app.db.prisma, { workspaceId: s.workspace.id, channelId: other.channel.id, name: 'theirs', language: 'en', body: 'Hi', status: 'approved' });
    const send = (template: unknown, extra: Record<string, unknown> = {}) => s.send({ to: c.id, type: 'template', template, ...extra });
    expect((await send({ name: 'order_ready', parameters: ['only one'] })).body.errors).toEqual({ 'template.parameters': ['The template takes exactly 2 parameters.'] });
    const unknown = { 'template.name': ['The selected template does not exist or is not approved for this channel.'] };
    expect((await send({ name: 'nope', parameters: [] })).body.errors).toEqual(unknown);
    expect((await send({ name: 'draft', parameters: [] })).body.errors).toEqual(unknown);
    expect((await send({ name: 'theirs', parameters: [] })).body.errors).toEqual(unknown);
    expect((await send({ name: 'order_ready', language: 'fr', parameters: ['a', 'b'] })).body.errors).toEqual(unknown);
    expect((await send({ name: 'order_ready', parameters: ['a', 'b'] }, { is_encrypted: true })).body.errors).toEqual({
      is_encrypted: ['A template message cannot be encrypted.'],
    });
    expect((await s.send({ to: c.id, type: 'template' })).body.errors).toEqual({ template: ['The template field is required when type is template.'] });
    expect(await app.db.prisma.message.count({ where: { channelId: s.channel.id } })).toBe(0);
  });
});

describe('encrypted messages', () => {
  const CIPHERTEXT = 'U2FsdGVkX1+secretpayload/zebra==';

  it('store the ciphertext as is, show only a placeholder, and never match a search', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'enc@example.com' });
    const sent = await s.send({ to: c.id, message: CIPHERTEXT, is_encrypted: true, media_urls: ['https://cdn.example.com/sealed.bin'] });
    expect(sent.status).toBe(202);
    expect(sent.body.data.message).toMatchObject({ body: null, placeholder: 'Encrypted message hidden', isEncrypted: true, mediaUrls: ['https://cdn.example.com/sealed.bin'] });
    await s.send({ to: c.id, message: 'plain zebra talk' });

    const stored = await app.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.data.message.id } });
    expect(stored.body).toBe(CIPHERTEXT);
    expect(stored.isEncrypted).toBe(true);

    const list = await s.api.get('/messages');
    expect(list.body.data.map((m: { body: string | null }) => m.body)).toEqual(['plain zebra talk', null]);
    expect(list.body.data[1].placeholder).toBe('Encrypted message hidden');
    const found = await s.api.get('/messages?search=zebra');
    expect(found.body.data.map((m: { body: string }) => m.body)).toEqual(['plain zebra talk']);
    expect((await s.api.get('/messages?search=secretpayload')).body.data).toEqual([]);
    expect((await s.api.get(`/messages?search=${encodeURIComponent(CIPHERTEXT)}`)).body.data).toEqual([]);

    const everything = JSON.stringify([sent.body, list.body, found.body]) + app.logs.join('');
    expect(everything).not.toContain('secretpayload');
  });
});

describe('conversations', () => {
  it('reuse the open conversation, keep a closed one closed on silent sends, and reopen it otherwise', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'conv@example.com' });
    const first = (await s.send({ to: c.id, message: 'one' })).body.data.message;
    const second = (await s.send({ to: c.id, message: 'two', from: 'Zapier' })).body.data.message;
    expect(second.conversationId).toBe(first.conversationId);
    const conversationId = first.conversationId;

    const closed = await s.api.post(`/conversations/${conversationId}/close`);
    expect(closed.status).toBe(200);
    expect(closed.body.data.conversation).toMatchObject({ id: conversationId, status: 'closed', closedAt: expect.any(String) });

    const silent = (await s.send({ to: c.id, message: 'quiet', silent: true })).body.data.message;
    expect(silent).toMatchObject({ conversationId, silent: true });
    const afterSilent = (await s.api.get(`/conversations/${conversationId}`)).body.data.conversation;
    expect(afterSilent.status).toBe('closed');
    expect(afterSilent.stateChanges.map((x: { type: string }) => x.type)).toEqual(['opened', 'closed']);

    const loud = (await s.send({ to: c.id, message: 'loud', from: s.user.id })).body.data.message;
    expect(loud.conversationId).toBe(conversationId);
    const reopened = (await s.api.get(`/conversations/${conversationId}`)).body.data.conversation;
    expect(reopened).toMatchObject({ status: 'open', closedAt: null, contactId: c.id, channelId: s.channel.id });
    expect(reopened.stateChanges).toEqual([
      { type: 'opened', at: expect.any(String), actor: { type: 'channel', id: s.channel.id, name: 'Main channel' } },
      { type: 'closed', at: expect.any(String), actor: { type: 'channel', id: s.channel.id, name: 'Main channel' } },
      { type: 'reopened', at: expect.any(String), actor: { type: 'user', id: s.user.id, name: 'Agent Smith' } },
    ]);
    expect(reopened.lastMessageAt).toBe(loud.createdAt);
  });

  it('close and reopen are idempotent: a repeat is a 200 that records no state change', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'idem@example.com' });
    const { conversationId } = (await s.send({ to: c.id, message: 'x' })).body.data.message;
    await s.api.post(`/conversations/${conversationId}/close`);
    const again = await s.api.post(`/conversations/${conversationId}/close`);
    expect(again.status).toBe(200);
    expect(again.body.data.conversation.stateChanges.map((x: { type: string }) => x.type)).toEqual(['opened', 'closed']);
    await s.api.post(`/conversations/${conversationId}/reopen`);
    const reopenAgain = await s.api.post(`/conversations/${conversationId}/reopen`);
    expect(reopenAgain.body.data.conversation.stateChanges.map((x: { type: string }) => x.type)).toEqual(['opened', 'closed', 'reopened']);
  });

  it('list by status and contact, and 404 for malformed, unknown and other channels’ conversations', async () => {
    const s = await messagingSetup(app);
    const a = await s.contact({ email: 'la@example.com' });
    const b = await s.contact({ email: 'lb@example.com' });
    const convA = (await s.send({ to: a.id, message: 'x' })).body.data.message.conversationId;
    const convB = (await s.send({ to: b.id, message: 'x' })).body.data.message.conversationId;
    await s.api.post(`/conversations/${convA}/close`);
    const ids = async (query: string) => (await s.api.get(`/conversations${query}`)).body.data.map((x: { id: string }) => x.id);
    expect(await ids('')).toEqual([convB, convA]);
    expect(await ids('?status=closed')).toEqual([convA]);
    expect(await ids('?status=open')).toEqual([convB]);
    expect(await ids(`?contact_id=${b.id}`)).toEqual([convB]);
    expect((await s.api.get('/conversations?status=archived')).body.errors).toEqual({ status: ['The status must be open or closed.'] });
    expect((await s.api.get('/conversations?contact_id=x')).body.errors).toEqual({ contact_id: ['The contact_id must be a UUID.'] });

    const other = await addChannel(app.db.prisma, s.workspace.id, 'Other');
    const otherApi = restClient(app, s.host, other.apiKey);
    for (const [api, id] of [[otherApi, convA], [s.api, 'nope'], [s.api, '0193a2b4-0000-7000-8000-000000000000']] as const) {
      const result = await api.post(`/conversations/${id}/close`);
      expect(result.status).toBe(404);
      expect(result.body).toEqual({ status: 'error', message: 'Conversation not found.' });
    }
  });
});

describe('GET /messages and GET /templates', () => {
  it('list the acting channel’s messages newest first, filtered and paged', async () => {
    const s = await messagingSetup(app);
    const a = await s.contact({ email: 'ma@example.com' });
    const b = await s.contact({ email: 'mb@example.com' });
    const sent: { id: string; conversationId: string }[] = [];
    for (const [to, text] of [[a.id, 'alpha one'], [b.id, 'beta one'], [a.id, 'alpha two'], [b.id, 'beta two'], [a.id, 'alpha three']] as const) {
      sent.push((await s.send({ to, message: text })).body.data.message);
    }
    const other = await addChannel(app.db.prisma, s.workspace.id, 'Other');
    await restClient(app, s.host, other.apiKey).post('/messages', { to: a.id, message: 'alpha elsewhere' });

    const bodies = async (query: string) => (await s.api.get(`/messages${query}`)).body.data.map((m: { body: string }) => m.body);
    expect(await bodies('')).toEqual(['alpha three', 'beta two', 'alpha two', 'beta one', 'alpha one']);
    expect(await bodies(`?contact_id=${b.id}`)).toEqual(['beta two', 'beta one']);
    expect(await bodies(`?conversation_id=${sent[0]!.conversationId}`)).toEqual(['alpha three', 'alpha two', 'alpha one']);
    expect(await bodies('?search=alpha')).toEqual(['alpha three', 'alpha two', 'alpha one']);
    expect(await bodies(`?search=one&contact_id=${a.id}`)).toEqual(['alpha one']);

    const page1 = await s.api.get('/messages?limit=2&search=alpha');
    expect(page1.body.meta).toMatchObject({ per_page: 2, has_more: true });
    const page2 = await s.api.get(`/messages?limit=2&search=alpha&cursor=${page1.body.meta.next_cursor}`);
    expect(page2.body.data.map((m: { body: string }) => m.body)).toEqual(['alpha one']);
    expect(page2.body.meta.has_more).toBe(false);

    const plain1 = await s.api.get('/messages?limit=3');
    const plain2 = await s.api.get(`/messages?limit=3&cursor=${plain1.body.meta.next_cursor}`);
    expect([...plain1.body.data, ...plain2.body.data].map((m: { id: string }) => m.id)).toEqual(sent.map((m) => m.id).reverse());

    expect((await s.api.get('/messages?conversation_id=abc')).body.errors).toEqual({ conversation_id: ['The conversation_id must be a UUID.'] });
  });

  it('list the acting channel’s templates', async () => {
    const s = await messagingSetup(app);
    const other = await addChannel(app.db.prisma, s.workspace.id, 'Other');
    await createTemplate(app.db.prisma, { workspaceId: s.workspace.id, channelId: other.channel.id, name: 'theirs', language: 'en', body: 'x', status: 'approved' });
    const result = await s.api.get('/templates');
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      data: [
        {
          id: s.template.id,
          name: 'order_ready',
          language: 'en',
          category: 'utility',
          status: 'approved',
          body: 'Hi {{1}}, order {{2}} is ready.',
          parameterCount: 2,
        },
      ],
      meta: { per_page: 25, next_cursor: null, has_more: false },
    });
  });
});

describe.runIf(onPostgres)('races on PostgreSQL', () => {
  it('concurrent first messages to the same new recipient create one contact and one conversation', async () => {
    const s = await messagingSetup(app);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => s.send({ to: { phone: '+31687654321', email: 'race@example.com' }, message: `hi ${i}` })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(202));
    expect(new Set(results.map((r) => r.body.data.message.contactId)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.data.message.conversationId)).size).toBe(1);
    const conversation = (await s.api.get(`/conversations/${results[0]!.body.data.message.conversationId}`)).body.data.conversation;
    expect(conversation.stateChanges.map((x: { type: string }) => x.type)).toEqual(['opened']);
  });

  it('concurrent reopens of two closed conversations of one contact: one 200, the other the documented 422, never 500', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'two-closed@example.com' });
    const first = (await s.send({ to: c.id, message: 'one' })).body.data.message.conversationId;
    await s.api.post(`/conversations/${first}/close`);
    // A second conversation of the same pair, as an import or an older version may have left behind.
    const second = await app.db.prisma.conversation.create({
      data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: c.id, status: 'closed', closedAt: new Date() },
    });
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all([first, second.id].map((id) => s.api.post(`/conversations/${id}/reopen`)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
      const refused = results.find((r) => r.status === 422)!;
      expect(refused.body.errors).toEqual({ id: ['The contact already has an open conversation on this channel.'] });
      const opened = results.find((r) => r.status === 200)!.body.data.conversation.id;
      await s.api.post(`/conversations/${opened}/close`);
    }
  });

  it('concurrent sends to a closed conversation reopen it once', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'reopen-race@example.com' });
    const { conversationId } = (await s.send({ to: c.id, message: 'first' })).body.data.message;
    await s.api.post(`/conversations/${conversationId}/close`);
    const results = await Promise.all(Array.from({ length: 6 }, () => s.send({ to: c.id, message: 'again' })));
    expect(results.map((r) => r.body.data.message.conversationId)).toEqual(Array(6).fill(conversationId));
    const conversation = (await s.api.get(`/conversations/${conversationId}`)).body.data.conversation;
    expect(conversation.stateChanges.map((x: { type: string }) => x.type)).toEqual(['opened', 'closed', 'reopened']);
  });
});

describe('POST /messages: ignored recipients', () => {
  it('ignores whatever the lower-priority recipient fields hold', async () => {
    const s = await messagingSetup(app);
    const a = await s.contact({ email: 'winner@example.com' });
    const withBadSender = await s.send({ to: a.id, sender: { name: 'Legacy Bob' }, message: 'hi' });
    expect(withBadSender.status).toBe(202);
    expect(withBadSender.body.data.message.contactId).toBe(a.id);
    const withBadContact = await s.send({ to: a.id, contact: 'not-a-uuid', sender: 42, message: 'hi' });
    expect(withBadContact.status).toBe(202);
    const contactWins = await s.send({ contact: { email: 'winner@example.com' }, sender: 'garbage', message: 'hi' });
    expect(contactWins.body.data.message.contactId).toBe(a.id);
    const badWinner = await s.send({ contact: { phone: 'nope' }, sender: { email: 'winner@example.com' }, message: 'hi' });
    expect(badWinner.status).toBe(422);
    expect(Object.keys(badWinner.body.errors)).toEqual(['contact.phone']);
  });
});
