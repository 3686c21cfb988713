import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { messagingSetup } from '../helpers/messaging.js';

/** docs/conventions.md: a REST body is JSON, declared so; a route that takes none takes nothing but `{}`. */

let app: TestApp;
let s: Awaited<ReturnType<typeof messagingSetup>>;
let contactId: string;
let conversationId: string;

beforeAll(async () => {
  app = await createTestApp();
  s = await messagingSetup(app);
  contactId = (await s.contact({ name: 'Typed', email: 'typed@example.com' })).id;
  const sent = await s.send({ to: contactId, message: 'hello' });
  conversationId = sent.body.data.message.conversationId;
});
afterAll(() => app.close());

async function state() {
  const { prisma } = app.db;
  const workspaceId = s.workspace.id;
  return {
    contacts: await prisma.contact.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } }),
    messages: await prisma.message.count({ where: { workspaceId } }),
    conversation: await prisma.conversation.findUniqueOrThrow({ where: { id: conversationId }, include: { stateChanges: true } }),
  };
}

function call(method: string, path: string, body: string | FormData | undefined, contentType: string | null) {
  const headers: Record<string, string> = { ...bearer(s.apiKey) };
  if (contentType !== null) headers['content-type'] = contentType;
  return app.fetch(s.host, `/api/connect${path}`, { method, headers, body });
}

const REFUSED = { status: 'error', message: 'Content-Type must be application/json.' };

describe('a REST body not declared application/json', () => {
  const contact = JSON.stringify({ name: 'Sneaky', email: 'sneaky@example.com' });
  const send = JSON.stringify({ to: { email: 'sneaky@example.com' }, message: 'hi' });
  const bodies: [string, string | null, () => string | FormData][] = [
    ['text/plain', 'text/plain', () => contact],
    ['text/plain; charset=utf-8', 'text/plain; charset=utf-8', () => contact],
    ['a form', 'application/x-www-form-urlencoded', () => 'name=Sneaky&email=sneaky%40example.com'],
    ['XML', 'application/xml', () => '<contact><name>Sneaky</name></contact>'],
    ['JSON with a charset other than UTF-8', 'application/json; charset=latin1', () => contact],
    ['a JSON look-alike', 'application/jsonx', () => contact],
    ['no content type', null, () => contact],
  ];
  for (const [what, type, body] of bodies) {
    it(`${what}: 415 on every write, and nothing changes`, async () => {
      const before = await state();
      for (const [method, path, payload] of [
        ['POST', '/contacts', body()],
        ['PATCH', `/contacts/${contactId}`, body()],
        ['POST', '/messages', typeof body() === 'string' && body() === contact ? send : body()],
        ['POST', `/conversations/${conversationId}/close`, '{}'],
      ] as const) {
        const response = await call(method, path, payload, type);
        expect(response.status, `${method} ${path}`).toBe(415);
        expect(await response.json()).toEqual(REFUSED);
      }
      expect(await state()).toEqual(before);
    });
  }

  it('multipart: 415, and nothing changes', async () => {
    const before = await state();
    const form = new FormData();
    form.set('name', 'Sneaky');
    form.set('email', 'sneaky@example.com');
    // fetch writes the multipart boundary into the content type itself.
    const response = await app.fetch(s.host, '/api/connect/contacts', { method: 'POST', headers: bearer(s.apiKey), body: form });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual(REFUSED);
    expect(await state()).toEqual(before);
  });

  it('application/json in any case, with parameters, is accepted', async () => {
    for (const [type, email] of [
      ['application/json; charset=utf-8', 'one@example.com'],
      ['Application/JSON', 'two@example.com'],
      ['application/json;charset="utf-8"', 'three@example.com'],
      ['application/json; version=1', 'four@example.com'],
    ] as const) {
      const response = await call('POST', '/contacts', JSON.stringify({ name: 'Typed', email }), type);
      expect(response.status, type).toBe(201);
    }
  });

  it('before the body is parsed: malformed JSON declared as text is a 415, not a 400', async () => {
    expect((await call('POST', '/contacts', '{not json', 'text/plain')).status).toBe(415);
    expect((await call('POST', '/contacts', '{not json', 'application/json')).status).toBe(400);
  });

  it('an empty body needs no content type: the route answers what is missing', async () => {
    const response = await call('POST', '/contacts', undefined, null);
    expect(response.status).toBe(422);
    expect((await response.json()).errors).toHaveProperty('body');
  });
});

describe('a body on close and reopen, which take none', () => {
  it('none, an empty one and {} are ignored', async () => {
    for (const [path, body, type] of [
      ['close', undefined, null],
      ['reopen', '', 'application/json'],
      ['close', '{}', 'application/json'],
      ['reopen', ' { } ', 'application/json; charset=utf-8'],
    ] as const) {
      const response = await call('POST', `/conversations/${conversationId}/${path}`, body, type);
      expect(response.status, `${path} ${JSON.stringify(body)}`).toBe(200);
    }
    expect((await state()).conversation.status).toBe('open');
  });

  it('anything else is a 422 on body, and nothing changes', async () => {
    const before = await state();
    for (const body of ['{"status":"closed"}', '[]', 'null', '"close"', '1', 'true']) {
      for (const path of ['close', 'reopen']) {
        const response = await call('POST', `/conversations/${conversationId}/${path}`, body, 'application/json');
        expect(response.status, `${path} ${body}`).toBe(422);
        expect(await response.json()).toEqual({
          message: 'This request takes no body: send none, or {}.',
          errors: { body: ['This request takes no body: send none, or {}.'] },
        });
      }
    }
    expect(await state()).toEqual(before);
  });
});
