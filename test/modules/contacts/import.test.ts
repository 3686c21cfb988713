import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, statementCountingApp, type TestApp } from '../../helpers/app.js';
import { bearer, workspaceWithChannel } from '../../helpers/factories.js';
import { postOperation } from '../../helpers/graphql.js';
import { sessionSetup } from '../../helpers/sessions.js';
import { restClient } from '../../helpers/rest.js';
import { importContact } from '../../../src/modules/contacts/contacts.service.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

async function setup() {
  const ws = await workspaceWithChannel(app.db.prisma);
  return { ...ws, api: restClient(app, ws.host, ws.apiKey) };
}

describe('POST /contacts/import', () => {
  it('creates new rows, matches existing ones by email (any case) or stored phone form, fails invalid ones with the 422 messages', async () => {
    const s = await setup();
    const ann = (await s.api.post('/contacts', { name: 'Ann', email: 'Ann@Example.com' })).body.data.contact;
    // A legacy contact stored under a non-E.164 form of its number.
    const legacy = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Legacy', phoneRaw: '0031 6 1234 5670', isGroup: false });
    const result = await s.api.post('/contacts/import', {
      contacts: [
        { name: 'Bo', email: 'bo@example.com', phone: '+31612340011' },
        { name: 'Ann Again', email: 'ann@EXAMPLE.com', phone: '+31612340012' },
        { name: 'Legacy Again', phone: '+31612345670' },
        { name: 'X', email: 'not-an-email' },
        { name: 'No Method' },
        'not an object',
        { name: 'Bo Twice', email: 'BO@example.com' },
        { name: 'Cy', phone: '+31612340013' },
      ],
    });
    expect(result.status).toBe(200);
    const rows = result.body.data.results;
    expect(rows).toEqual([
      { index: 0, id: expect.any(String), status: 'created' },
      { index: 1, id: ann.id, status: 'matched' },
      { index: 2, id: legacy.id, status: 'matched' },
      { index: 3, id: null, status: 'failed', errors: { name: ['The name must be at least 2 characters.'], email: ['The email must be a valid email address.'] } },
      { index: 4, id: null, status: 'failed', errors: { email: ['An email or a phone is required.'], phone: ['An email or a phone is required.'] } },
      { index: 5, id: null, status: 'failed', errors: { body: ['The request body must be a JSON object.'] } },
      { index: 6, id: rows[0].id, status: 'matched' },
      { index: 7, id: expect.any(String), status: 'created' },
    ]);
    // Created rows are whole contacts, linked to the channel, findable by their phone; matched ones are left as they were.
    const bo = (await s.api.get(`/contacts/find?phone=%2B31612340011`)).body.data.contact;
    expect(bo).toMatchObject({ id: rows[0].id, name: 'Bo', email: 'bo@example.com', phoneNumber: '+31612340011', optOuts: [] });
    expect(await app.db.prisma.contactChannel.count({ where: { contactId: { in: [rows[0].id, rows[7].id] }, channelId: s.channel.id } })).toBe(2);
    expect((await s.api.get(`/contacts/${ann.id}`)).body.data.contact).toMatchObject({ name: 'Ann', phoneNumber: null });
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(4);

    // Importing the same rows again matches every valid one.
    const again = await s.api.post('/contacts/import', { contacts: [{ name: 'Bo', email: 'bo@example.com' }, { name: 'Cy', phone: '+31612340013' }] });
    expect(again.body.data.results).toEqual([
      { index: 0, id: rows[0].id, status: 'matched' },
      { index: 1, id: rows[7].id, status: 'matched' },
    ]);
  });

  it('refuses a body that is not a list of at most 10,000 contacts, and takes a body over the general limit up to 8 MiB', async () => {
    const s = await setup();
    expect((await s.api.post('/contacts/import', {})).status).toBe(422);
    expect((await s.api.post('/contacts/import', { contacts: [] })).body.errors).toEqual({ contacts: ['At least one contact must be given.'] });
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ name: `Person ${i}`, email: `p${i}@example.com` }));
    expect((await s.api.post('/contacts/import', { contacts: tooMany })).body.errors).toEqual({ contacts: ['At most 10000 contacts may be imported at once.'] });
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(0);

    // 10,000 rows with long names: well over 1 MiB.
    const many = Array.from({ length: 10_000 }, (_, i) => ({ name: `Person ${i} ${'x'.repeat(120)}`, email: `p${i}@example.com`, phone: `+3161${String(i).padStart(7, '0')}` }));
    expect(JSON.stringify({ contacts: many }).length).toBeGreaterThan(1024 * 1024);
    const big = await s.api.post('/contacts/import', { contacts: many });
    expect(big.status).toBe(200);
    expect(big.body.data.results.filter((row: { status: string }) => row.status === 'created')).toHaveLength(10_000);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(10_000);
  });
});

describe('importContacts (GraphQL)', () => {
  const IMPORT = `mutation ($input: ImportContactsInput!) {
    importContacts(input: $input) {
      results { index status contact { id name email phoneNumber optOuts { channelId } } userErrors { field message code } }
      userErrors { field message code } } }`;

  it('answers each row with its status, its contact and, for a failed row, userErrors on the input path', async () => {
    const s = await setup();
    const ann = (await s.api.post('/contacts', { name: 'Ann', email: 'ann@example.com' })).body.data.contact;
    const run = (contacts: unknown[]) => postOperation(app, s.host, bearer(s.apiKey), { query: IMPORT, variables: { input: { contacts } } });
    const answer = await run([
      { name: 'Bo', email: 'bo@example.com', phone: '+31612340021' },
      { name: 'Ann Again', email: 'ANN@example.com' },
      { name: 'Bo Twice', phone: '+31612340021' },
      { name: 'X', email: 'not-an-email' },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.errors).toBeUndefined();
    const { results, userErrors } = answer.data.importContacts;
    expect(userErrors).toEqual([]);
    expect(results).toEqual([
      { index: 0, status: 'created', contact: { id: expect.any(String), name: 'Bo', email: 'bo@example.com', phoneNumber: '+31612340021', optOuts: [] }, userErrors: [] },
      { index: 1, status: 'matched', contact: { id: ann.id, name: 'Ann', email: 'ann@example.com', phoneNumber: null, optOuts: [] }, userErrors: [] },
      { index: 2, status: 'matched', contact: { id: results[0].contact.id, name: 'Bo', email: 'bo@example.com', phoneNumber: '+31612340021', optOuts: [] }, userErrors: [] },
      {
        index: 3,
        status: 'failed',
        contact: null,
        userErrors: [
          { field: ['input', 'contacts', '3', 'name'], message: 'The name must be at least 2 characters.', code: 'INVALID' },
          { field: ['input', 'contacts', '3', 'email'], message: 'The email must be a valid email address.', code: 'INVALID' },
        ],
      },
    ]);
    // Created contacts are linked to the acting channel, as over REST.
    expect(await app.db.prisma.contactChannel.count({ where: { contactId: results[0].contact.id, channelId: s.channel.id } })).toBe(1);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(2);

    // The input as a whole: no rows, or more than 10,000, is a userError on input.contacts and nothing else.
    const empty = await run([]);
    expect(empty.data.importContacts).toEqual({ results: null, userErrors: [{ field: ['input', 'contacts'], message: 'At least one contact must be given.', code: 'INVALID' }] });
  });

  it('is refused to a session (backend credentials only): FORBIDDEN, nothing stored', async () => {
    const s = await sessionSetup(app);
    const refused = await postOperation(app, s.host, bearer(s.session.token), {
      query: IMPORT,
      variables: { input: { contacts: [{ name: 'Sneaky', email: 'sneaky@example.com' }] } },
    });
    expect(refused.status).toBe(200);
    expect(refused.data).toEqual({ importContacts: null });
    expect(refused.errors).toEqual([expect.objectContaining({ path: ['importContacts'], extensions: { code: 'FORBIDDEN' } })]);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id, email: 'sneaky@example.com' } })).toBe(0);
    // And over REST: 403.
    expect((await s.browser.post('/contacts/import', { contacts: [{ name: 'Sneaky', email: 'sneaky@example.com' }] })).status).toBe(403);
  });

  it('answers thirty rows with their contacts, in the order sent, read together', async () => {
    const counting = await statementCountingApp();
    try {
      const ws = await workspaceWithChannel(counting.app.db.prisma);
      const contacts = Array.from({ length: 30 }, (_, i) => ({ name: `Person ${i}`, email: `person${i}@example.com` }));
      let answer: any;
      const statements = await counting.counted(async () => {
        answer = await postOperation(counting.app, ws.host, bearer(ws.apiKey), { query: IMPORT, variables: { input: { contacts } } });
      });
      expect(answer.data.importContacts.results.map((row: { contact: { name: string } }) => row.contact.name)).toEqual(contacts.map((c) => c.name));
      // Authentication, the import, then the contacts and their opt-outs: one statement each, whatever the rows.
      expect(statements.filter((sql) => /FROM "public"."contacts"/.test(sql))).toHaveLength(1);
      expect(statements.length).toBeLessThanOrEqual(4);
    } finally {
      await counting.app.close();
    }
  });
});
