import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importContact } from '../../../src/modules/contacts/contacts.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { edgeSetup } from '../../helpers/edges.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const setup = () => edgeSetup(app);

describe('email validity: the HTML standard with RFC 5321 lengths', () => {
  const valid = ['a!b@example.com', "o'brien+tag@example.co.uk", `${'l'.repeat(64)}@example.com`, 'user@localhost', '#~{}|@x-y.example'];
  const invalid: [string, string][] = [
    [`${'l'.repeat(65)}@example.com`, 'The part of the email before the @ must not be greater than 64 characters.'],
    [`${'l'.repeat(243)}@example.com`, 'The part of the email before the @ must not be greater than 64 characters.'],
    [`ab@${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(60)}.${'g'.repeat(60)}.exampless`, 'The email must not be greater than 255 characters.'],
    ['a b@example.com', 'The email must be a valid email address.'],
    ['jürgen@example.com', 'The email must be a valid email address.'],
    ['a@-example.com', 'The email must be a valid email address.'],
    ['a@example..com', 'The email must be a valid email address.'],
    ['a@@example.com', 'The email must be a valid email address.'],
  ];
  it.each(valid)('accepts %s', async (email) => {
    const s = await setup();
    const result = await s.api.post('/contacts', { name: 'Valid', email });
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    expect(result.body.data.contact.email).toBe(email);
  });
  it.each(invalid)('refuses %s', async (email, message) => {
    const s = await setup();
    const result = await s.api.post('/contacts', { name: 'Invalid', email });
    expect(result.status).toBe(422);
    expect(result.body.errors.email).toEqual([message]);
    const sent = await s.send({ to: { email }, message: 'hi' });
    expect(sent.body.errors['to.email']).toEqual([message]);
  });
});

describe('both email and phone taken', () => {
  it('reports both fields; conflict names the email holder (REST and GraphQL)', async () => {
    const s = await setup();
    const byEmail = await s.contact({ email: 'taken@example.com' });
    await s.contact({ phone: '+31612345020' });
    const mover = await s.contact({ email: 'mover@example.com' });
    const created = await s.api.post('/contacts', { name: 'Dup', email: 'TAKEN@example.com', phone: '+31612345020' });
    expect(created.status).toBe(422);
    expect(created.body).toEqual({
      message: 'The email has already been taken.',
      errors: { email: ['The email has already been taken.'], phone: ['The phone has already been taken.'] },
      conflict: { field: 'email', contactId: byEmail.id },
    });
    const updated = await s.api.patch(`/contacts/${mover.id}`, { email: 'taken@example.com', phone: '+31612345020' });
    expect(updated.body.errors).toEqual(created.body.errors);
    const gql = await s.gql('mutation($input: CreateContactInput!) { createContact(input: $input) { userErrors { field code } } }', {
      input: { name: 'Dup', email: 'taken@example.com', phone: '+31612345020' },
    });
    expect(gql.data.createContact.userErrors).toEqual([
      { field: ['input', 'email'], code: 'TAKEN' },
      { field: ['input', 'phone'], code: 'TAKEN' },
    ]);
  });
});

describe('update rule 4: the current value as stored', () => {
  it('a legacy phone sent exactly as stored is accepted and changes nothing', async () => {
    const s = await setup();
    const legacy = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Legacy', phoneRaw: '020 123 4567', isGroup: false });
    const before = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: legacy.id }, include: { phones: true } });
    expect(before.phone).toBe('020 123 4567');
    for (const phone of ['020 123 4567', '  020 123 4567 ']) {
      const result = await s.api.patch(`/contacts/${legacy.id}`, { phone });
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      expect(result.body.data.contact.phoneNumber).toBe('020 123 4567');
    }
    const renamed = await s.api.patch(`/contacts/${legacy.id}`, { name: 'Legacy Two', phone: '020 123 4567' });
    expect(renamed.status).toBe(200);
    const after = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: legacy.id }, include: { phones: true } });
    expect(after.phones).toEqual(before.phones);
    expect(after.phone).toBe('020 123 4567');
    const other = await s.api.patch(`/contacts/${legacy.id}`, { phone: '020 123 4568' });
    expect(other.status).toBe(422);
    expect(other.body.errors.phone).toEqual(['The phone must be a valid E.164 number: a leading +, the country code and digits only.']);
  });

  it('a legacy form the contact is also stored under counts as its current phone', async () => {
    const s = await setup();
    const legacy = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Variant', phoneRaw: '0031 6 1234 5679', isGroup: false });
    const before = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: legacy.id }, include: { phones: true } });
    expect(before.phone).toBe('+31612345679');
    const result = await s.api.patch(`/contacts/${legacy.id}`, { phone: ' 0031 6 1234 5679 ', name: 'Variant Two' });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.data.contact).toMatchObject({ phoneNumber: '+31612345679', name: 'Variant Two' });
    const after = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: legacy.id }, include: { phones: true } });
    expect(after.phones).toEqual(before.phones);
    // Another contact's stored form is no excuse.
    const other = await s.contact({ email: 'variant-other@example.com' });
    expect((await s.api.patch(`/contacts/${other.id}`, { phone: '0031 6 1234 5679' })).status).toBe(422);
  });

  it('a legacy email sent exactly as stored is accepted', async () => {
    const s = await setup();
    const legacy = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Legacy', email: 'old style@example.com', isGroup: false });
    expect((await s.api.patch(`/contacts/${legacy.id}`, { email: 'old style@example.com' })).status).toBe(200);
    expect((await s.api.patch(`/contacts/${legacy.id}`, { email: 'new style@example.com' })).status).toBe(422);
  });
});
