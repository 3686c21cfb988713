import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { edgeSetup, expect422On, type EdgeSetup } from '../helpers/edges.js';
import { bearer } from '../helpers/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const setup = () => edgeSetup(app);

/** What no stored text may hold: U+0000 (PostgreSQL cannot), and an unpaired surrogate (UTF-8 cannot). */
const UNSTORABLE: [label: string, bad: string, said: string][] = [
  ['U+0000', '\u0000', 'U+0000'],
  ['a lone high surrogate', '\ud800', 'surrogate'],
  ['a lone low surrogate', '\udfff', 'surrogate'],
];

describe.each(UNSTORABLE)('a string holding %s is a 422 on its field, and changes nothing', (label, NUL, said) => {
  const sends: [string, (s: EdgeSetup) => Record<string, unknown>][] = [
    ['message', () => ({ to: { phone: '+31612345001' }, message: `hi${NUL}there` })],
    ['from', () => ({ to: { phone: '+31612345001' }, message: 'hi', from: `Bo${NUL}b` })],
    ['to.name', () => ({ to: { phone: '+31612345001', name: `Jan${NUL}` }, message: 'hi' })],
    ['to.email', () => ({ to: { email: `a${NUL}@example.com` }, message: 'hi' })],
    ['contact.phone', () => ({ contact: { phone: `+3161234${NUL}5001` }, message: 'hi' })],
    ['to', () => ({ to: `00000000-0000-4000-8000-${NUL}00000000000`, message: 'hi' })],
    ['media_urls.0', () => ({ to: { phone: '+31612345001' }, message: 'hi', media_urls: [`https://example.com/a${NUL}.png`] })],
    ['template.name', () => ({ to: { phone: '+31612345001' }, type: 'template', template: { name: `order${NUL}`, parameters: ['a', 'b'] } })],
    ['template.language', () => ({ to: { phone: '+31612345001' }, type: 'template', template: { name: 'order_ready', language: `e${NUL}`, parameters: ['a', 'b'] } })],
    ['template.parameters.1', () => ({ to: { phone: '+31612345001' }, type: 'template', template: { name: 'order_ready', parameters: ['a', `b${NUL}`] } })],
  ];
  for (const [field, body] of sends) {
    it(`POST /messages: ${field}`, async () => {
      const s = await setup();
      const before = await s.counts();
      expect422On(await s.send(body(s)), field);
      expect(await s.counts()).toEqual(before);
    });
  }

  for (const field of ['name', 'email', 'phone']) {
    it(`POST /contacts and PATCH /contacts/{id}: ${field}`, async () => {
      const s = await setup();
      const existing = await s.contact({ email: 'nul@example.com' });
      const before = await s.counts();
      const values: Record<string, string> = { name: 'Ann', email: 'ann@example.com', phone: '+31612345002' };
      expect422On(await s.api.post('/contacts', { ...values, [field]: `${values[field]}${NUL}` }), field);
      expect422On(await s.api.patch(`/contacts/${existing.id}`, { [field]: `${values[field]}${NUL}` }), field);
      expect(await s.counts()).toEqual(before);
      expect((await s.api.get(`/contacts/${existing.id}`)).body.data.contact).toMatchObject({ name: 'Recipient', email: 'nul@example.com' });
    });
  }

  const queries: [string, string][] = [
    ['/contacts?search=', 'search'],
    ['/messages?search=', 'search'],
    ['/contacts/find?email=', 'email'],
    ['/contacts/find?phone=', 'phone'],
    ['/conversations?status=', 'status'],
    ['/conversations?contact_id=', 'contact_id'],
    ['/messages?conversation_id=', 'conversation_id'],
    ['/contacts?cursor=', 'cursor'],
  ];
  // A URL carries bytes: an unpaired surrogate has no UTF-8 form to send (a bad byte decodes as U+FFFD).
  for (const [path, field] of label === 'U+0000' ? queries : []) {
    it(`GET ${path}%00`, async () => {
      const s = await setup();
      expect422On(await s.api.get(`${path}a%00b`), field);
    });
  }

  it('a NUL in a field the send ignores (a lower-priority recipient, an unknown field) is still ignored', async () => {
    const s = await setup();
    const result = await s.send({ to: { phone: '+31612345003' }, sender: { name: `x${NUL}` }, extra: NUL, message: 'hi' });
    expect(result.status, JSON.stringify(result.body)).toBe(202);
  });

  it('GraphQL: variables and literals answer userErrors or BAD_USER_INPUT, never an internal error', async () => {
    const s = await setup();
    const before = await s.counts();
    const created = await s.gql(
      'mutation($input: CreateContactInput!) { createContact(input: $input) { contact { id } userErrors { field message } } }',
      { input: { name: `A${NUL}nn`, email: 'gql-nul@example.com' } },
    );
    expect(created.data.createContact).toEqual({ contact: null, userErrors: [{ field: ['input', 'name'], message: expect.stringContaining(said) }] });

    const sent = await s.gql(
      'mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } userErrors { field } } }',
      { input: { to: { phone: '+31612345004' }, message: 'hi', mediaUrls: ['https://example.com/a.png'], from: `x${NUL}` } },
    );
    expect(sent.data.sendMessage).toEqual({ message: null, userErrors: [{ field: ['input', 'from'] }] });

    const templated = await s.gql(
      'mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } userErrors { field } } }',
      { input: { to: { phone: '+31612345004' }, type: 'template', template: { name: 'order_ready', parameters: ['a', `b${NUL}`] } } },
    );
    expect(templated.data.sendMessage.userErrors).toEqual([{ field: ['input', 'template', 'parameters', '1'] }]);

    // In a literal: U+0000 is a valid escape, refused by the field; an unpaired surrogate is no valid
    // GraphQL string at all, refused by the parser.
    const escaped = JSON.stringify(NUL).slice(1, -1);
    for (const field of ['contacts', 'messages']) {
      const response = await app.fetch(s.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(s.apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ ${field}(search: "a${escaped}b") { edges { node { id } } } }` }),
      });
      const result = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
      expect(result.errors?.[0]?.extensions?.code, JSON.stringify(result)).toBe(label === 'U+0000' ? 'BAD_USER_INPUT' : 'GRAPHQL_PARSE_FAILED');
    }
    const searched = await s.gql('query($q: String) { contacts(search: $q) { edges { node { id } } } }', { q: `a${NUL}` });
    expect(searched.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await s.counts()).toEqual(before);
  });
});
