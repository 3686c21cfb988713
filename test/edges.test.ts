import http from 'node:http';
import net from 'node:net';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { importContact } from '../src/modules/contacts/contacts.service.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer } from './helpers/factories.js';
import { executeOperation } from './helpers/graphql.js';
import { messagingSetup } from './helpers/messaging.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

async function setup() {
  const s = await messagingSetup(app);
  const counts = async () => ({
    contacts: await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } }),
    messages: await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } }),
    conversations: await app.db.prisma.conversation.count({ where: { workspaceId: s.workspace.id } }),
  });
  /** Any GraphQL text, untyped: these documents probe the edges, they are not client code. */
  const gql = (query: string, variables?: Record<string, unknown>) =>
    executeOperation<any, any>(app, s.host, bearer(s.apiKey), parse(query), variables);
  return { ...s, counts, gql };
}

type Setup = Awaited<ReturnType<typeof setup>>;

const expect422On = (result: { status: number; body: any }, field: string) => {
  expect(result.status, JSON.stringify(result.body)).toBe(422);
  expect(result.body.errors, JSON.stringify(result.body)).toHaveProperty([field]);
  expect(result.body.message).toEqual(expect.any(String));
};

/** What no stored text may hold: U+0000 (PostgreSQL cannot), and an unpaired surrogate (UTF-8 cannot). */
const UNSTORABLE: [label: string, bad: string, said: string][] = [
  ['U+0000', '\u0000', 'U+0000'],
  ['a lone high surrogate', '\ud800', 'surrogate'],
  ['a lone low surrogate', '\udfff', 'surrogate'],
];

describe.each(UNSTORABLE)('a string holding %s is a 422 on its field, and changes nothing', (label, NUL, said) => {
  const sends: [string, (s: Setup) => Record<string, unknown>][] = [
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

describe('Host', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    const yoga = createApp({ db: app.db, env: app.env, logger: (await import('../src/logger.js')).createLogger({ ...app.env, LOG_LEVEL: 'silent' }) });
    server = http.createServer(yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** Sends raw request bytes to the real port; answers the status line and body. */
  function raw(request: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve({ status: Number(data.split(' ')[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) }));
    });
  }

  it('no Host (HTTP/1.0) and an empty Host reach no workspace, even one named after the server address: 401', async () => {
    const { channel } = await import('../src/modules/channels/channels.service.js').then(async ({ createChannel }) => {
      const { createWorkspace } = await import('../src/modules/workspaces/workspaces.service.js');
      const existing = await app.db.prisma.workspace.findUnique({ where: { hostname: '127.0.0.1' } });
      const workspace = existing ?? (await createWorkspace(app.db.prisma, { hostname: '127.0.0.1', name: 'Server address' }));
      return { channel: await createChannel(app.db.prisma, { workspaceId: workspace.id, name: 'Own', type: 'sms' }) };
    });
    const auth = `Authorization: Bearer ${channel.apiKey}\r\n`;
    const withHost = await raw(`GET /api/connect/channels HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}Connection: close\r\n\r\n`);
    expect(withHost.status).toBe(200);
    const noHost = await raw(`GET /api/connect/channels HTTP/1.0\r\n${auth}\r\n`);
    expect(noHost.status).toBe(401);
    expect(noHost.body).toContain('Unauthenticated.');
    expect((await raw(`GET /api/connect/channels HTTP/1.1\r\nHost: \r\n${auth}Connection: close\r\n\r\n`)).status).toBe(401);
    const query = '{"query":"{ channels { id } }"}';
    const graphql = await raw(`POST /graphql HTTP/1.0\r\n${auth}Content-Type: application/json\r\nContent-Length: ${query.length}\r\n\r\n${query}`);
    expect(graphql.status).toBe(401);
    expect(graphql.body).toContain('UNAUTHENTICATED');
  });
});

describe('path ids of any length', () => {
  const long = 'a'.repeat(150);
  it('are 401 without credentials and the resource 404 with them', async () => {
    const s = await setup();
    for (const [method, path, message] of [
      ['PATCH', `/contacts/${long}`, 'Contact not found.'],
      ['GET', `/contacts/${long}`, 'Contact not found.'],
      ['GET', `/conversations/${long}`, 'Conversation not found.'],
      ['POST', `/conversations/${long}/close`, 'Conversation not found.'],
      ['GET', `/contacts/${'b'.repeat(5000)}`, 'Contact not found.'],
    ] as const) {
      const init = method === 'PATCH' ? { body: JSON.stringify({ name: 'Ann' }), headers: { 'content-type': 'application/json' } } : {};
      const anonymous = await app.fetch(s.host, `/api/connect${path}`, { method, ...init });
      expect(anonymous.status, `${method} ${path.slice(0, 30)}`).toBe(401);
      const result = await app.fetch(s.host, `/api/connect${path}`, { method, ...init, headers: { ...init.headers, ...bearer(s.apiKey) } });
      expect(result.status).toBe(404);
      expect(await result.json()).toEqual({ status: 'error', message });
    }
  });
});

describe('null means absent', () => {
  it('on every optional field of a send', async () => {
    const s = await setup();
    const result = await s.send({
      to: { email: null, phone: '+31612345010', name: null },
      contact: null,
      sender: null,
      from: null,
      type: null,
      is_encrypted: null,
      silent: null,
      media_urls: null,
      template: null,
      message: 'hello',
    });
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    expect(result.body.data.message).toMatchObject({ type: 'text', isEncrypted: false, silent: false, mediaUrls: [], sender: { type: 'channel' } });
  });

  it('inside a template and a recipient, and for a contact create', async () => {
    const s = await setup();
    const templated = await s.send({ contact: { phone: '+31612345011', email: null }, type: 'template', template: { name: 'order_ready', language: null, parameters: ['Ann', '42'] } });
    expect(templated.status, JSON.stringify(templated.body)).toBe(202);
    expect(templated.body.data.message.body).toBe('Hi Ann, order 42 is ready.');
    const created = await s.api.post('/contacts', { name: 'Ann', email: null, phone: '+31612345012' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });

  it('still clears email and phone on update', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'clear@example.com', phone: '+31612345013' });
    const result = await s.api.patch(`/contacts/${c.id}`, { email: null });
    expect(result.status).toBe(200);
    expect(result.body.data.contact).toMatchObject({ email: null, phoneNumber: '+31612345013' });
  });
});

describe('405', () => {
  it('carries an Allow header with the methods of the path', async () => {
    const s = await setup();
    const cases: [string, string, string][] = [
      ['DELETE', '/contacts', 'GET, HEAD, POST'],
      ['PUT', '/contacts/00000000-0000-4000-8000-000000000000', 'GET, HEAD, PATCH'],
      ['GET', '/conversations/00000000-0000-4000-8000-000000000000/close', 'POST'],
      ['HEAD', '/conversations/00000000-0000-4000-8000-000000000000/close', 'POST'],
      ['DELETE', '/messages', 'GET, HEAD, POST'],
    ];
    for (const [method, path, allow] of cases) {
      const result = await app.fetch(s.host, `/api/connect${path}`, { method, headers: bearer(s.apiKey) });
      expect(result.status, `${method} ${path}`).toBe(405);
      expect(result.headers.get('allow')).toBe(allow);
    }
  });
});

describe('HEAD', () => {
  it('answers a GET route as GET does, without a body', async () => {
    const s = await setup();
    const get = await app.fetch(s.host, '/api/connect/contacts', { headers: bearer(s.apiKey) });
    const head = await app.fetch(s.host, '/api/connect/contacts', { method: 'HEAD', headers: bearer(s.apiKey) });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
    expect((await app.fetch(s.host, '/api/connect/contacts', { method: 'HEAD' })).status).toBe(401);
  });
});

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

describe('media_urls', () => {
  const refused = ['https:///a.png', 'https://exa mple.com/a.png', 'https://example.com/a b.png', 'https://example.com/a.png\n', 'http://example.com/a.png', 'https:a.png', 'https://'];
  it.each(refused)('refuses %j', async (url) => {
    const s = await setup();
    const result = await s.send({ to: { phone: '+31612345030' }, message: 'hi', media_urls: ['https://example.com/ok.png', url] });
    expect(result.status).toBe(422);
    expect(Object.keys(result.body.errors)).toEqual(['media_urls.1']);
  });
  it('accepts the scheme in any case', async () => {
    const s = await setup();
    const result = await s.send({ to: { phone: '+31612345031' }, message: 'hi', media_urls: ['HTTPS://Example.com/a.png', 'Https://example.com/b.png?x=1'] });
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    expect(result.body.data.message.mediaUrls).toEqual(['HTTPS://Example.com/a.png', 'Https://example.com/b.png?x=1']);
  });
});

describe('template sends are bounded like text messages', () => {
  it('a parameter over 4096 characters is a 422 on template.parameters.N', async () => {
    const s = await setup();
    const before = await s.counts();
    const result = await s.send({ to: { phone: '+31612345040' }, type: 'template', template: { name: 'order_ready', parameters: ['Ann', 'x'.repeat(4097)] } });
    expect(result.status).toBe(422);
    expect(result.body.errors).toEqual({ 'template.parameters.1': ['A template parameter must not be greater than 4096 characters.'] });
    expect(await s.counts()).toEqual(before);
  });
  it('a rendered body over 4096 characters is a 422 on template.parameters; 4096 is accepted', async () => {
    const s = await setup();
    const fixed = 'Hi , order  is ready.'.length;
    const over = await s.send({ to: { phone: '+31612345041' }, type: 'template', template: { name: 'order_ready', parameters: ['a'.repeat(4000), 'b'.repeat(4096 - 4000 - fixed + 1)] } });
    expect(over.status).toBe(422);
    expect(over.body.errors).toEqual({ 'template.parameters': ['The rendered template must not be greater than 4096 characters.'] });
    const exact = await s.send({ to: { phone: '+31612345041' }, type: 'template', template: { name: 'order_ready', parameters: ['a'.repeat(4000), 'b'.repeat(4096 - 4000 - fixed)] } });
    expect(exact.status, JSON.stringify(exact.body)).toBe(202);
    expect(Array.from(exact.body.data.message.body as string)).toHaveLength(4096);
  });
});

describe('cursors', () => {
  it('a forged cursor with a date PostgreSQL cannot hold is a 422 on cursor (GraphQL: BAD_USER_INPUT), never a 500', async () => {
    const s = await setup();
    for (const at of ['-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '1969-12-31T23:59:59.999Z']) {
      const cursor = Buffer.from(`${at}|00000000-0000-4000-8000-000000000000`).toString('base64url');
      for (const path of ['/contacts', '/messages', '/conversations', '/templates']) {
        const result = await s.api.get(`${path}?cursor=${cursor}`);
        expect(result.status, `${path} ${at}`).toBe(422);
        expect(result.body.errors).toEqual({ cursor: ['The cursor is invalid.'] });
      }
      const gql = await s.gql('query($after: String) { contacts(after: $after) { edges { node { id } } } }', { after: cursor });
      expect(gql.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });
});

describe('the access log', () => {
  it('logs every request with method, path (no query string), status and duration, GraphQL POST included', async () => {
    const s = await setup();
    app.logs.length = 0;
    await s.api.get('/contacts?search=secret-term');
    await s.gql('{ viewer { workspace { id } } }');
    const lines = app.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');
    expect(lines).toEqual([
      expect.objectContaining({ method: 'GET', path: '/api/connect/contacts', status: 200, ms: expect.any(Number) }),
      expect.objectContaining({ method: 'POST', path: '/graphql', status: 200, ms: expect.any(Number) }),
    ]);
    expect(app.logs.join('')).not.toContain('secret-term');
  });
});
