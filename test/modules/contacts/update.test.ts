import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { addChannel, workspaceWithChannel } from '../../helpers/factories.js';
import { restClient, type RestClient } from '../../helpers/rest.js';
import { deleteContact, importContact } from '../../../src/modules/contacts/contacts.service.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

/** A fresh workspace, its REST client, and helpers to make and read contacts. */
async function setup() {
  const ws = await workspaceWithChannel(app.db.prisma);
  const api = restClient(app, ws.host, ws.apiKey);
  async function contact(body: Record<string, unknown>) {
    const created = await api.post('/contacts', { name: 'Someone', ...body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.contact as { id: string; name: string; email: string | null; phoneNumber: string | null };
  }
  const legacy = (input: { name?: string; email?: string; phoneRaw?: string } = {}) =>
    importContact(app.db.prisma, { workspaceId: ws.workspace.id, name: input.name ?? 'Legacy', email: input.email, phoneRaw: input.phoneRaw, isGroup: false });
  const stored = (id: string) => app.db.prisma.contact.findUniqueOrThrow({ where: { id }, include: { phones: true } });
  return { ...ws, api, contact, legacy, stored };
}

const expect422 = (result: { status: number; body: any }, errors: Record<string, string[]>) => {
  expect(result.status, JSON.stringify(result.body)).toBe(422);
  expect(result.body.errors).toEqual(errors);
  expect(result.body.message).toBe(Object.values(errors)[0]![0]);
};

describe('PATCH /contacts/{contact}: success', () => {
  it('answers 200 with the updated contact under data.contact, phone named phoneNumber', async () => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'ann@example.com' });
    const result = await api.patch(`/contacts/${c.id}`, { name: 'Ann Smith', phone: '+31612345678' });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      data: {
        contact: {
          id: c.id,
          name: 'Ann Smith',
          email: 'ann@example.com',
          phoneNumber: '+31612345678',
          isGroup: false,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          optOuts: [],
        },
      },
    });
    expect(result.body.data.contact).not.toHaveProperty('phone');
  });

  it('trims strings before validating and storing them (rule 1)', async () => {
    const { api, contact, stored } = await setup();
    const c = await contact({ email: 'ann@example.com' });
    const result = await api.patch(`/contacts/${c.id}`, { name: '  Ann  ', email: '  Ann.New@Example.com ', phone: ' +447911123456 ' });
    expect(result.status).toBe(200);
    expect(result.body.data.contact).toMatchObject({ name: 'Ann', email: 'Ann.New@Example.com', phoneNumber: '+447911123456' });
    expect((await stored(c.id)).emailNormalized).toBe('ann.new@example.com');
  });

  it('leaves omitted fields unchanged', async () => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'keep@example.com', phone: '+31612345670' });
    const result = await api.patch(`/contacts/${c.id}`, { name: 'Renamed' });
    expect(result.body.data.contact).toMatchObject({ name: 'Renamed', email: 'keep@example.com', phoneNumber: '+31612345670' });
  });

  it('accepts names of 2 and 255 characters, counting characters rather than bytes', async () => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'n@example.com' });
    for (const name of ['Al', 'x'.repeat(255), '🙂🙂', 'É'.repeat(255)]) {
      const result = await api.patch(`/contacts/${c.id}`, { name });
      expect(result.status, name).toBe(200);
      expect(result.body.data.contact.name).toBe(name);
    }
  });

  it('clears email with null or a blank string, and phone likewise, while another method remains', async () => {
    const { api, contact, stored } = await setup();
    const a = await contact({ email: 'a@example.com', phone: '+31612345671' });
    expect((await api.patch(`/contacts/${a.id}`, { email: null })).body.data.contact.email).toBeNull();
    const b = await contact({ email: 'b@example.com', phone: '+31612345672' });
    expect((await api.patch(`/contacts/${b.id}`, { email: '   ' })).body.data.contact.email).toBeNull();
    const c = await contact({ email: 'c@example.com', phone: '+31612345673' });
    expect((await api.patch(`/contacts/${c.id}`, { phone: '' })).body.data.contact.phoneNumber).toBeNull();
    expect((await stored(c.id)).phones).toEqual([]);
    const d = await contact({ email: 'd@example.com', phone: '+31612345674' });
    expect((await api.patch(`/contacts/${d.id}`, { phone: null })).body.data.contact.phoneNumber).toBeNull();
  });

  it('replaces a phone with an email in one request (rule 2)', async () => {
    const { api, contact, stored } = await setup();
    const c = await contact({ phone: '+31612345675' });
    const result = await api.patch(`/contacts/${c.id}`, { phone: null, email: 'moved@example.com' });
    expect(result.status).toBe(200);
    expect(result.body.data.contact).toMatchObject({ email: 'moved@example.com', phoneNumber: null });
    expect((await stored(c.id)).phones).toEqual([]);
  });

  it('allows a name-only update of a legacy contact with neither email nor phone (rule 3)', async () => {
    const { api, legacy } = await setup();
    const c = await legacy();
    const result = await api.patch(`/contacts/${c.id}`, { name: 'Still legacy' });
    expect(result.status).toBe(200);
    expect(result.body.data.contact).toMatchObject({ name: 'Still legacy', email: null, phoneNumber: null });
  });

  it("accepts the contact's current email (in any case) and current phone (rule 4)", async () => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'same@example.com', phone: '+31612345676' });
    const result = await api.patch(`/contacts/${c.id}`, { email: 'SAME@example.com', phone: '+31612345676' });
    expect(result.status).toBe(200);
    expect(result.body.data.contact).toMatchObject({ email: 'SAME@example.com', phoneNumber: '+31612345676' });
  });

  it('keeps the stored variants of a legacy phone when its current number is sent again', async () => {
    const { api, legacy, stored } = await setup();
    const c = await legacy({ phoneRaw: '0031 6 1234 5679' });
    expect((await api.patch(`/contacts/${c.id}`, { phone: '+31612345679', name: 'Jan' })).status).toBe(200);
    expect((await stored(c.id)).phones.map((p) => [p.number, p.raw])).toEqual([['+31612345679', '0031 6 1234 5679']]);
  });

  it('moves updatedAt forward when a value changes, and leaves it when the request changes nothing', async () => {
    const { api, contact } = await setup();
    const c = await contact({ name: 'Ann', email: 'ann@example.com', phone: '+31612345678' });
    const before = (await api.get(`/contacts/${c.id}`)).body.data.contact.updatedAt as string;
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (const body of [{ name: 'Ann' }, { email: 'ann@example.com' }, { phone: '+31612345678' }, { name: 'Ann', phone: '+31612345678' }]) {
      const same = await api.patch(`/contacts/${c.id}`, body);
      expect(same.status).toBe(200);
      expect(same.body.data.contact.updatedAt, JSON.stringify(body)).toBe(before);
    }
    const changed = await api.patch(`/contacts/${c.id}`, { name: 'Ann Smith' });
    expect(changed.body.data.contact.updatedAt > before).toBe(true);
    expect((await api.get(`/contacts/${c.id}`)).body.data.contact.updatedAt).toBe(changed.body.data.contact.updatedAt);
  });

  it('ignores unsupported fields and cannot change status, assignments, channel links or metadata (rule 5)', async () => {
    const { api, contact, stored, workspace } = await setup();
    const c = await contact({ email: 'rule5@example.com' });
    const before = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: c.id }, include: { channels: true, assignments: true } });
    const other = await addChannel(app.db.prisma, workspace.id, 'Elsewhere');
    const result = await api.patch(`/contacts/${c.id}`, {
      name: 'Rule Five',
      status: 'blocked',
      metadata: { vip: true },
      channels: [other.channel.id],
      assignments: ['someone'],
      phoneNumber: '+31612345600',
      id: '00000000-0000-4000-8000-000000000000',
      isGroup: true,
    });
    expect(result.status).toBe(200);
    expect(result.body.data.contact).toMatchObject({ id: c.id, name: 'Rule Five', phoneNumber: null, isGroup: false });
    const after = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: c.id }, include: { channels: true, assignments: true } });
    expect({ status: after.status, metadata: after.metadata, channels: after.channels, assignments: after.assignments }).toEqual({
      status: before.status,
      metadata: before.metadata,
      channels: before.channels,
      assignments: before.assignments,
    });
    void stored;
  });

  it('lets any token of the workspace update any live contact, linked to its channel or not', async () => {
    const { api, contact, workspace, host } = await setup();
    const c = await contact({ email: 'linked@example.com' });
    const other = await addChannel(app.db.prisma, workspace.id, 'Other channel');
    const result = await restClient(app, host, other.apiKey).patch(`/contacts/${c.id}`, { name: 'Updated elsewhere' });
    expect(result.status).toBe(200);
    expect(result.body.data.contact.name).toBe('Updated elsewhere');
    void api;
  });
});

describe('PATCH /contacts/{contact}: 422', () => {
  it('rejects names that are too short, too long, blank, null or not strings', async () => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'names@example.com' });
    expect422(await api.patch(`/contacts/${c.id}`, { name: 'A' }), { name: ['The name must be at least 2 characters.'] });
    expect422(await api.patch(`/contacts/${c.id}`, { name: ' A ' }), { name: ['The name must be at least 2 characters.'] });
    expect422(await api.patch(`/contacts/${c.id}`, { name: 'x'.repeat(256) }), { name: ['The name must not be greater than 255 characters.'] });
    expect422(await api.patch(`/contacts/${c.id}`, { name: '   ' }), { name: ['The name cannot be cleared.'] });
    expect422(await api.patch(`/contacts/${c.id}`, { name: null }), { name: ['The name cannot be cleared.'] });
    expect422(await api.patch(`/contacts/${c.id}`, { name: 42 }), { name: ['The name must be a string.'] });
  });

  it('rejects invalid and over-long emails', async () => {
    const { api, contact } = await setup();
    const c = await contact({ phone: '+31612340001' });
    expect422(await api.patch(`/contacts/${c.id}`, { email: 'not-an-email' }), { email: ['The email must be a valid email address.'] });
    expect422(await api.patch(`/contacts/${c.id}`, { email: 'a@.b' }), { email: ['The email must be a valid email address.'] });
    expect422(await api.patch(`/contacts/${c.id}`, { email: `${'a'.repeat(244)}@example.com` }), {
      email: ['The email must not be greater than 255 characters.'],
    });
    expect422(await api.patch(`/contacts/${c.id}`, { email: ['a@b.co'] }), { email: ['The email must be a string or null.'] });
  });

  it.each([
    ['spaces', '+31 6 1234 5678'],
    ['punctuation', '+31-6-12345678'],
    ['no leading +', '31612345678'],
    ['a national number', '0612345678'],
    ['an unknown country code', '+99912345678'],
    ['too few digits for its country', '+3161234567'],
    ['letters', '+3161234567a'],
    ['a leading zero after +', '+0612345678'],
  ])('rejects a phone with %s', async (_label, phone) => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'phones@example.com' });
    expect422(await api.patch(`/contacts/${c.id}`, { phone }), {
      phone: ['The phone must be a valid E.164 number: a leading +, the country code and digits only.'],
    });
  });

  it('rejects clearing the last contact method, naming the field that cleared it (rule 2)', async () => {
    const { api, contact } = await setup();
    const phoneOnly = await contact({ phone: '+31612340002' });
    expect422(await api.patch(`/contacts/${phoneOnly.id}`, { phone: null }), { phone: ['The contact must keep at least one email or phone.'] });
    const emailOnly = await contact({ email: 'only@example.com' });
    expect422(await api.patch(`/contacts/${emailOnly.id}`, { email: '' }), { email: ['The contact must keep at least one email or phone.'] });
    const both = await contact({ email: 'both@example.com', phone: '+31612340003' });
    expect422(await api.patch(`/contacts/${both.id}`, { email: null, phone: ' ' }), {
      email: ['The contact must keep at least one email or phone.'],
      phone: ['The contact must keep at least one email or phone.'],
    });
  });

  it('rejects an email or phone sent to a legacy contact when none would remain', async () => {
    const { api, legacy } = await setup();
    const c = await legacy();
    expect422(await api.patch(`/contacts/${c.id}`, { email: null }), { email: ['The contact must keep at least one email or phone.'] });
  });

  it('rejects an empty body, a body of unsupported fields only, and a missing body', async () => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'body@example.com' });
    const empty = { body: ['At least one of name, email or phone must be given.'] };
    expect422(await api.patch(`/contacts/${c.id}`, {}), empty);
    expect422(await api.patch(`/contacts/${c.id}`, { status: 'vip', phoneNumber: '+31612345678' }), empty);
    expect422(await api.patch(`/contacts/${c.id}`), { body: ['The request body must be a JSON object.'] });
  });

  it.each([['[]'], ['"Ann"'], ['42'], ['null'], ['true']])('rejects a JSON body that is not an object: %s', async (raw) => {
    const { api, contact } = await setup();
    const c = await contact({ email: 'object@example.com' });
    expect422(await api.patchRaw(`/contacts/${c.id}`, raw), { body: ['The request body must be a JSON object.'] });
  });

  it('answers malformed JSON with 400 and changes nothing', async () => {
    const { api, contact, stored } = await setup();
    const c = await contact({ email: 'json@example.com' });
    const result = await api.patchRaw(`/contacts/${c.id}`, '{"name": "Broken",');
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ status: 'error', message: 'Malformed JSON body.' });
    expect((await stored(c.id)).name).toBe('Someone');
  });

  it('applies nothing when any field fails (rule 6)', async () => {
    const { api, contact, stored } = await setup();
    const c = await contact({ email: 'atomic@example.com', phone: '+31612340004' });
    const before = await stored(c.id);
    const result = await api.patch(`/contacts/${c.id}`, { name: 'Valid Name', email: 'new@example.com', phone: '+31 6 0000' });
    expect(result.status).toBe(422);
    expect(Object.keys(result.body.errors)).toEqual(['phone']);
    expect(await stored(c.id)).toEqual(before);
  });
});

describe('PATCH /contacts/{contact}: uniqueness', () => {
  it('rejects an email held by another live contact, in any case, naming that contact', async () => {
    const { api, contact, stored } = await setup();
    const holder = await contact({ email: 'taken@example.com' });
    const c = await contact({ email: 'mine@example.com' });
    const result = await api.patch(`/contacts/${c.id}`, { name: 'Changed', email: 'TAKEN@example.com' });
    expect422(result, { email: ['The email has already been taken.'] });
    expect(result.body.conflict).toEqual({ field: 'email', contactId: holder.id });
    expect((await stored(c.id)).name).toBe('Someone');
  });

  it('rejects a phone held by another live contact, naming that contact', async () => {
    const { api, contact } = await setup();
    const holder = await contact({ phone: '+31612340005' });
    const c = await contact({ email: 'p@example.com' });
    const result = await api.patch(`/contacts/${c.id}`, { phone: '+31612340005' });
    expect422(result, { phone: ['The phone has already been taken.'] });
    expect(result.body.conflict).toEqual({ field: 'phone', contactId: holder.id });
  });

  it('rejects a phone matching a stored legacy variant: 0031 6 1234 5678 blocks +31612345678', async () => {
    const { api, contact, legacy } = await setup();
    const holder = await legacy({ phoneRaw: '0031 6 1234 5678' });
    const c = await contact({ email: 'variant@example.com' });
    const result = await api.patch(`/contacts/${c.id}`, { phone: '+31612345678' });
    expect422(result, { phone: ['The phone has already been taken.'] });
    expect(result.body.conflict).toEqual({ field: 'phone', contactId: holder.id });
  });

  it('lets deleted contacts and other workspaces hold the same email and phone', async () => {
    const { api, contact } = await setup();
    const gone = await contact({ email: 'reuse@example.com', phone: '+31612340006' });
    await deleteContact(app.db.prisma, gone.id);
    const elsewhere = await setup();
    await elsewhere.contact({ email: 'reuse2@example.com', phone: '+31612340007' });
    const c = await contact({ name: 'Reuser', email: 'x@example.com' });
    const result = await api.patch(`/contacts/${c.id}`, { email: 'reuse@example.com', phone: '+31612340006' });
    expect(result.status).toBe(200);
    const second = await contact({ email: 'y@example.com' });
    expect((await api.patch(`/contacts/${second.id}`, { email: 'reuse2@example.com', phone: '+31612340007' })).status).toBe(200);
  });
});

describe('PATCH /contacts/{contact}: 404', () => {
  const NOT_FOUND = { status: 'error', message: 'Contact not found.' };

  it.each([
    ['malformed', () => 'not-a-uuid'],
    ['almost a UUID', () => '0193a2b4-0000-7000-8000-00000000000g'],
    ['unknown', () => '0193a2b4-0000-7000-8000-000000000000'],
  ])('answers 404 for a %s id', async (_label, id) => {
    const { api } = await setup();
    const result = await api.patch(`/contacts/${id()}`, { name: 'Nobody' });
    expect(result.status).toBe(404);
    expect(result.body).toEqual(NOT_FOUND);
  });

  it('answers 404 for a deleted contact and for a contact of another workspace, before validating the body', async () => {
    const { api, contact } = await setup();
    const gone = await contact({ email: 'gone@example.com' });
    await deleteContact(app.db.prisma, gone.id);
    expect((await api.patch(`/contacts/${gone.id}`, { name: 'Back' })).body).toEqual(NOT_FOUND);
    const other = await setup();
    const foreign = await other.contact({ email: 'foreign@example.com' });
    const result = await api.patch(`/contacts/${foreign.id}`, {});
    expect(result.status).toBe(404);
    expect(result.body).toEqual(NOT_FOUND);
    expect((await other.stored(foreign.id)).name).toBe('Someone');
  });
});
