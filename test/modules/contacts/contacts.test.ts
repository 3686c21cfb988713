import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteContact, importContact } from '../../../src/modules/contacts/contacts.service.js';
import { createTestApp, onPostgres, type TestApp } from '../../helpers/app.js';
import { addChannel, createConnection, workspaceWithChannel } from '../../helpers/factories.js';
import { appWithFailingInsert } from '../../helpers/fresh-database.js';
import { restClient } from '../../helpers/rest.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

async function setup() {
  const ws = await workspaceWithChannel(app.db.prisma);
  return { ...ws, api: restClient(app, ws.host, ws.apiKey) };
}

describe('POST /contacts', () => {
  it('creates a contact linked to the acting channel and answers 201', async () => {
    const { api, channel } = await setup();
    const result = await api.post('/contacts', { name: ' Ann ', email: ' Ann@Example.com ', phone: '+31612345678', status: 'ignored' });
    expect(result.status).toBe(201);
    expect(result.body).toEqual({
      data: {
        contact: {
          id: expect.any(String),
          name: 'Ann',
          email: 'Ann@Example.com',
          phoneNumber: '+31612345678',
          isGroup: false,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          optOuts: [],
        },
      },
    });
    const links = await app.db.prisma.contactChannel.findMany({ where: { contactId: result.body.data.contact.id } });
    expect(links.map((l) => l.channelId)).toEqual([channel.id]);
  });

  it('requires a name and an email or phone, with the update rules for each field, and creates nothing', async () => {
    const { api, workspace } = await setup();
    const noName = await api.post('/contacts', { email: 'a@example.com' });
    expect(noName.status).toBe(422);
    expect(noName.body.errors).toEqual({ name: ['The name field is required.'] });
    const noMethod = await api.post('/contacts', { name: 'Ann', email: '', phone: null });
    expect(noMethod.body.errors).toEqual({ email: ['An email or a phone is required.'], phone: ['An email or a phone is required.'] });
    const badPhone = await api.post('/contacts', { name: 'Ann', phone: '0612345678' });
    expect(badPhone.body.errors).toEqual({ phone: ['The phone must be a valid E.164 number: a leading +, the country code and digits only.'] });
    expect(await app.db.prisma.contact.count({ where: { workspaceId: workspace.id } })).toBe(0);
  });

  it('rejects a duplicate email or phone, naming the existing contact, and creates nothing', async () => {
    const { api, workspace } = await setup();
    const first = (await api.post('/contacts', { name: 'First', email: 'dup@example.com', phone: '+31612345679' })).body.data.contact;
    const byEmail = await api.post('/contacts', { name: 'Second', email: 'DUP@example.com' });
    expect(byEmail.status).toBe(422);
    expect(byEmail.body).toEqual({
      message: 'The email has already been taken.',
      errors: { email: ['The email has already been taken.'] },
      conflict: { field: 'email', contactId: first.id },
    });
    const byPhone = await api.post('/contacts', { name: 'Third', phone: '+31612345679' });
    expect(byPhone.body.conflict).toEqual({ field: 'phone', contactId: first.id });
    expect(await app.db.prisma.contact.count({ where: { workspaceId: workspace.id } })).toBe(1);
  });

  it('needs X-Channel-Uuid when the credential can act as several channels', async () => {
    const { host, workspace, channel } = await setup();
    const second = await addChannel(app.db.prisma, workspace.id, 'Second');
    const { token } = await createConnection(app.db.prisma, { workspaceId: workspace.id, name: 'CRM', channelIds: [channel.id, second.channel.id] });
    const without = await restClient(app, host, token).post('/contacts', { name: 'Ann', email: 'multi@example.com' });
    expect(without.status).toBe(400);
    expect(without.body).toEqual({ status: 'error', message: expect.stringContaining('X-Channel-Uuid') });
    const withHeader = await restClient(app, host, token, { 'x-channel-uuid': second.channel.id }).post('/contacts', {
      name: 'Ann',
      email: 'multi@example.com',
    });
    expect(withHeader.status).toBe(201);
    const links = await app.db.prisma.contactChannel.findMany({ where: { contactId: withHeader.body.data.contact.id } });
    expect(links.map((l) => l.channelId)).toEqual([second.channel.id]);
    // Over REST every contact route acts as one channel: a credential of several names it (the spec's rule).
    const bare = restClient(app, host, token);
    const id = withHeader.body.data.contact.id as string;
    for (const answer of [await bare.get(`/contacts/${id}`), await bare.get('/contacts'), await bare.patch(`/contacts/${id}`, { name: 'Ann B' })]) {
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain('X-Channel-Uuid');
    }
    expect((await app.db.prisma.contact.findUniqueOrThrow({ where: { id } })).name).toBe('Ann');
  });

  it('rejects a body over the size limit with 413', async () => {
    const { api } = await setup();
    const result = await api.post('/contacts', { name: 'Big', email: 'big@example.com', padding: 'x'.repeat(1024 * 1024) });
    expect(result.status).toBe(413);
    expect(result.body).toEqual({ status: 'error', message: 'Request body too large.' });
  });
});

describe('GET /contacts/{contact} and /contacts/find', () => {
  it('gets a live contact of the workspace and 404s otherwise', async () => {
    const { api } = await setup();
    const created = (await api.post('/contacts', { name: 'Ann', email: 'get@example.com' })).body.data.contact;
    expect((await api.get(`/contacts/${created.id}`)).body).toEqual({ data: { contact: created } });
    await deleteContact(app.db.prisma, created.id);
    for (const id of [created.id, 'nope', '0193a2b4-0000-7000-8000-000000000000']) {
      const result = await api.get(`/contacts/${id}`);
      expect(result.status).toBe(404);
      expect(result.body).toEqual({ status: 'error', message: 'Contact not found.' });
    }
  });

  it('finds by email in any case and by phone through E.164 and stored variants', async () => {
    const { api, workspace } = await setup();
    const ann = (await api.post('/contacts', { name: 'Ann', email: 'Find.Me@example.com', phone: '+14155552671' })).body.data.contact;
    const jan = await importContact(app.db.prisma, { workspaceId: workspace.id, name: 'Jan', phoneRaw: '0031 6 1234 5678', isGroup: false });
    expect((await api.get('/contacts/find?email=find.me%40EXAMPLE.com')).body.data.contact.id).toBe(ann.id);
    expect((await api.get('/contacts/find?phone=%2B14155552671')).body.data.contact.id).toBe(ann.id);
    expect((await api.get('/contacts/find?phone=%2B31612345678')).body.data.contact.id).toBe(jan.id);
    expect((await api.get('/contacts/find?phone=0031%206%201234%205678')).body.data.contact.id).toBe(jan.id);
  });

  it('reads an unencoded + in ?phone= and ?email= as the + it was meant to be', async () => {
    const { api } = await setup();
    const ann = (await api.post('/contacts', { name: 'Ann', phone: '+14155552671' })).body.data.contact;
    expect((await api.get('/contacts/find?phone=+14155552671')).body.data.contact.id).toBe(ann.id);
    const tagged = (await api.post('/contacts', { name: 'Tag', email: 'ann+news@example.com' })).body.data.contact;
    expect((await api.get('/contacts/find?email=ann+news@example.com')).body.data.contact.id).toBe(tagged.id);
  });

  it('answers 404 when nothing matches (deleted contacts included) and 422 without a key', async () => {
    const { api } = await setup();
    const gone = (await api.post('/contacts', { name: 'Gone', email: 'gone@example.com' })).body.data.contact;
    await deleteContact(app.db.prisma, gone.id);
    const missing = await api.get('/contacts/find?email=gone%40example.com');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ status: 'error', message: 'Contact not found.' });
    const neither = await api.get('/contacts/find?email=%20');
    expect(neither.status).toBe(422);
    expect(neither.body.errors).toEqual({ email: ['Give an email or a phone to find a contact by.'] });
  });

  it('never finds a contact of another workspace', async () => {
    const first = await setup();
    await first.api.post('/contacts', { name: 'Ann', email: 'private@example.com' });
    const second = await setup();
    expect((await second.api.get('/contacts/find?email=private%40example.com')).status).toBe(404);
  });
});

describe('GET /contacts', () => {
  async function seed(count: number) {
    const ws = await setup();
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push((await ws.api.post('/contacts', { name: `Contact ${i}`, email: `c${i}@example.com` })).body.data.contact.id);
    }
    return { ...ws, ids };
  }

  it('pages newest first with limit, next_cursor and has_more', async () => {
    const { api, ids } = await seed(7);
    const first = await api.get('/contacts?limit=3');
    expect(first.status).toBe(200);
    expect(first.body.meta).toEqual({ per_page: 3, next_cursor: expect.any(String), has_more: true });
    const second = await api.get(`/contacts?limit=3&cursor=${first.body.meta.next_cursor}`);
    const third = await api.get(`/contacts?limit=3&cursor=${second.body.meta.next_cursor}`);
    expect(third.body.meta).toEqual({ per_page: 3, next_cursor: null, has_more: false });
    const seen = [...first.body.data, ...second.body.data, ...third.body.data].map((c: { id: string }) => c.id);
    expect(seen).toEqual([...ids].reverse());
    expect((await api.get('/contacts')).body.meta.per_page).toBe(25);
  });

  it('never repeats or skips a row while rows are inserted between pages', async () => {
    const { api, ids } = await seed(6);
    const seen: string[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    do {
      const page: { body: { data: { id: string }[]; meta: { next_cursor: string | null } } } = await api.get(
        `/contacts?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.data.map((c) => c.id));
      cursor = page.body.meta.next_cursor;
      await api.post('/contacts', { name: `Late ${inserted}`, email: `late${inserted++}@example.com` });
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('leaves out deleted contacts and other workspaces, and searches name, email and phone', async () => {
    const { api, ids, workspace } = await seed(3);
    await deleteContact(app.db.prisma, ids[0]!);
    await api.post('/contacts', { name: 'Zoë Search', email: 'zoe@search.example', phone: '+31612300001' });
    await importContact(app.db.prisma, { workspaceId: workspace.id, name: 'Legacy Phone', phoneRaw: '0031 6 5555 1234', isGroup: false });
    await (await setup()).api.post('/contacts', { name: 'Zoë Search', email: 'other@search.example' });

    const all = (await api.get('/contacts')).body.data.map((c: { name: string }) => c.name);
    expect(all).toEqual(['Legacy Phone', 'Zoë Search', 'Contact 2', 'Contact 1']);
    const names = async (q: string) => (await api.get(`/contacts?search=${encodeURIComponent(q)}`)).body.data.map((c: { name: string }) => c.name);
    expect(await names('zoë')).toEqual(['Zoë Search']);
    expect(await names('SEARCH.example')).toEqual(['Zoë Search']);
    expect(await names('612300')).toEqual(['Zoë Search']);
    expect(await names('5555 1234')).toEqual(['Legacy Phone']);
    expect(await names('+31 (6) 1230-0')).toEqual(['Zoë Search']);
    // Digits inside a word are not a phone number: no name or email holds these terms.
    expect(await names('room-612300')).toEqual([]);
    expect(await names('zoe5555')).toEqual([]);
    expect(await names('contact 1')).toEqual(['Contact 1']);
    expect(await names('nobody')).toEqual([]);
  });

  it('treats % and _ in a search as themselves, not as wildcards', async () => {
    const { api } = await setup();
    await api.post('/contacts', { name: 'Plain Name', email: 'plain@example.com' });
    await api.post('/contacts', { name: '100% Real_Name', email: 'real@example.com' });
    const names = async (q: string) => (await api.get(`/contacts?search=${encodeURIComponent(q)}`)).body.data.map((c: { name: string }) => c.name);
    expect(await names('%')).toEqual(['100% Real_Name']);
    expect(await names('_')).toEqual(['100% Real_Name']);
    // As a wildcard, _ would match the space in "Plain Name".
    expect(await names('n_n')).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=2.5', 'limit'],
    ['cursor=garbage', 'cursor'],
    [`cursor=${Buffer.from('2026-01-01T00:00:00.000Z|not-a-uuid').toString('base64url')}`, 'cursor'],
  ])('rejects %s with 422 on %s', async (query, field) => {
    const { api } = await setup();
    const result = await api.get(`/contacts?${query}`);
    expect(result.status).toBe(422);
    expect(Object.keys(result.body.errors)).toEqual([field]);
  });
});

describe('unexpected failures', () => {
  it('roll the whole update back and answer exactly the 500 body', async () => {
    // A database fault on the last write of an update: the phone row insert.
    const local = await appWithFailingInsert('contact_phones', "NEW.number = '+31612999999'", 'disk on fire');
    try {
      const ws = await workspaceWithChannel(local.db.prisma);
      const api = restClient(local, ws.host, ws.apiKey);
      const created = (await api.post('/contacts', { name: 'Before', email: 'before@example.com', phone: '+31612345678' })).body.data.contact;
      const result = await api.patch(`/contacts/${created.id}`, { name: 'After', email: 'after@example.com', phone: '+31612999999' });
      expect(result.status).toBe(500);
      expect(result.body).toEqual({ status: 'error', message: 'Internal server error' });
      const stored = await local.db.prisma.contact.findUniqueOrThrow({ where: { id: created.id }, include: { phones: true } });
      expect([stored.name, stored.email, stored.phone, stored.phones.map((p) => p.number)]).toEqual([
        'Before',
        'before@example.com',
        '+31612345678',
        ['+31612345678'],
      ]);
      const logs = local.logs.join('');
      expect(logs).toContain('unexpected failure');
      expect(logs).not.toContain(ws.apiKey);
    } finally {
      await local.drop();
    }
  });
});

describe.runIf(onPostgres)('races on PostgreSQL', () => {
  it('lets exactly one of several concurrent creates with the same email win; the others get 422, never 500', async () => {
    const { api, workspace } = await setup();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.post('/contacts', { name: `Racer ${i}`, email: 'race@example.com' })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    const winner = results.find((r) => r.status === 201)!.body.data.contact.id;
    for (const loser of results.filter((r) => r.status === 422)) {
      expect(loser.body.conflict).toEqual({ field: 'email', contactId: winner });
    }
    expect(await app.db.prisma.contact.count({ where: { workspaceId: workspace.id } })).toBe(1);
  });

  it('lets exactly one of several concurrent creates with the same phone win, its phone row stored once; the others get 422 naming it', async () => {
    const { api, workspace } = await setup();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.post('/contacts', { name: `Racer ${i}`, email: `racer${i}@example.com`, phone: '+31612343434' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    const winner = results.find((r) => r.status === 201)!.body.data.contact.id;
    for (const loser of results.filter((r) => r.status === 422)) expect(loser.body.conflict).toEqual({ field: 'phone', contactId: winner });
    expect(await app.db.prisma.contact.count({ where: { workspaceId: workspace.id } })).toBe(1);
    expect(await app.db.prisma.contactPhone.count({ where: { workspaceId: workspace.id } })).toBe(1);
  });

  it('lets exactly one of several concurrent updates to the same phone win', async () => {
    const { api } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await api.post('/contacts', { name: `P ${i}`, email: `p${i}@example.com` })).body.data.contact.id);
    const results = await Promise.all(ids.map((id) => api.patch(`/contacts/${id}`, { phone: '+31612121212' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 422, 422, 422, 422, 422, 422, 422]);
    const holders = await app.db.prisma.contactPhone.findMany({ where: { number: '+31612121212', contactId: { in: ids } } });
    expect(holders).toHaveLength(1);
  });
});

describe('property: a rejected update changes nothing', () => {
  it('holds for arbitrary bodies', async () => {
    const { api, workspace } = await setup();
    await api.post('/contacts', { name: 'Taken', email: 'taken@example.com', phone: '+31612000000' });
    const target = (await api.post('/contacts', { name: 'Target', email: 'target@example.com', phone: '+31612000001' })).body.data.contact;
    const snapshot = () =>
      app.db.prisma.contact.findUniqueOrThrow({ where: { id: target.id }, include: { phones: { orderBy: { number: 'asc' } } } });

    const value = fc.oneof(
      fc.constant(null),
      fc.string({ maxLength: 300 }),
      fc.integer(),
      fc.boolean(),
      fc.constantFrom('', '  ', 'A', 'taken@example.com', '+31612000000', '+31 6 1200 0000', 'x@y', 'valid@example.com', '+31612000009'),
      fc.array(fc.string(), { maxLength: 2 }),
    );
    const body = fc.oneof(
      fc.record({ name: value, email: value, phone: value, status: value }, { requiredKeys: [] }),
      fc.constantFrom<unknown>([], 'text', 7, null),
    );
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const before = await snapshot();
        const result = await api.patch(`/contacts/${target.id}`, payload);
        expect([200, 422]).toContain(result.status);
        if (result.status === 422) expect(await snapshot()).toEqual(before);
      }),
      { numRuns: 60 },
    );
    expect(await app.db.prisma.contact.count({ where: { workspaceId: workspace.id } })).toBe(2);
  });
});
