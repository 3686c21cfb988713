import { createHash, randomBytes } from 'node:crypto';
import {
  getNamedType,
  isInputObjectType,
  isScalarType,
  parse,
  type GraphQLInputType,
  type GraphQLObjectType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/schema.js';
import { DOCUMENTED_ROUTES } from '../../src/app.js';
import { createTemplate } from '../../src/modules/templates/templates.service.js';
import { createUser } from '../../src/modules/users/users.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addChannel, bearer, createConnection, workspaceWithChannel } from '../helpers/factories.js';
import { executeOperation } from '../helpers/graphql.js';
import { subscribeSse } from '../helpers/sse.js';
import { BROADCAST_MESSAGES } from '../../src/modules/broadcasts/broadcasts.schemas.js';

/**
 * Tenant isolation (issue 9). The routes and GraphQL fields are enumerated from
 * the router and the schema, so a route or field added later without an entry
 * here fails this file instead of going untested.
 *
 * Three parties: `home` (workspace A, channel A1) is the caller; `sibling` is
 * channel A2 of the same workspace (its conversations, messages and templates are
 * invisible to A1, its contacts are not: contacts are workspace-wide); `foreign`
 * is workspace B. Everything invisible carries MARK in its name or body, so a leak
 * is visible in any response text.
 */

const MARK = `FOREIGN${randomBytes(4).toString('hex')}`;

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
});
afterAll(() => app.close());

interface Raw {
  status: number;
  text: string;
  json: any;
  headers: Headers;
  /** What the caller sent: ids found here may be echoed back. */
  sent: string;
}

async function rest(host: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  const init: RequestInit = { method, headers: { ...bearer(token), ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await app.fetch(host, `/api/connect${path}`, init);
  const text = await response.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json, headers: response.headers, sent: `${path} ${init.body ?? ''} ${JSON.stringify(headers)}` };
}

type World = Awaited<ReturnType<typeof buildWorld>>;

async function buildWorld() {
  const prisma = app.db.prisma;
  const suffix = randomBytes(3).toString('hex');

  const a = await workspaceWithChannel(prisma, 'Home channel');
  const a2 = await addChannel(prisma, a.workspace.id, `${MARK} sibling channel`);
  const b = await workspaceWithChannel(prisma, `${MARK} foreign channel`);

  const asHome = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => rest(a.host, a.apiKey, method, path, body, headers);
  const asSibling = (method: string, path: string, body?: unknown) => rest(a.host, a2.apiKey, method, path, body);
  const asForeign = (method: string, path: string, body?: unknown) => rest(b.host, b.apiKey, method, path, body);
  const ok = (result: Raw, status: number) => {
    if (result.status !== status) throw new Error(`setup call answered ${result.status}: ${result.text}`);
    return result.json.data;
  };

  // Workspace B, through its own credential: two contacts, a message to each, one conversation closed.
  const foreignEmail = `foreign-${suffix}@example.com`;
  const foreignPhone = `+3161${String(parseInt(suffix, 16) % 10_000_000).padStart(7, '0')}`;
  const fc1 = ok(await asForeign('POST', '/contacts', { name: `${MARK} contact one`, email: foreignEmail, phone: foreignPhone }), 201).contact;
  // Contact two's details are taken again in the home workspace by a test; contact one's must stay unique to B.
  const foreign2 = { email: `foreign2-${suffix}@example.com`, phone: `+3162${foreignPhone.slice(5)}` };
  const fc2 = ok(await asForeign('POST', '/contacts', { name: `${MARK} contact two`, ...foreign2 }), 201).contact;
  const fm1 = ok(await asForeign('POST', '/messages', { to: fc1.id, message: `${MARK} foreign message one` }), 202).message;
  const fm2 = ok(await asForeign('POST', '/messages', { to: fc2.id, message: `${MARK} foreign message two` }), 202).message;
  ok(await asForeign('POST', `/conversations/${fm2.conversationId}/close`), 200);
  const foreignUser = await createUser(prisma, { workspaceId: b.workspace.id, name: `${MARK} foreign user`, email: `user-${suffix}@foreign.example` });
  const homeUser = await createUser(prisma, { workspaceId: a.workspace.id, name: 'Home user', email: `user-${suffix}@home.example` });
  const foreignTemplate = await createTemplate(prisma, {
    workspaceId: b.workspace.id,
    channelId: b.channel.id,
    name: `${MARK}_foreign_template`,
    language: 'en',
    body: `${MARK} foreign {{1}}`,
    status: 'approved',
  });

  // Channel A2 of the home workspace: its contacts are shared, its messages and conversations are not.
  const sm1 = ok(await asSibling('POST', '/messages', { to: { name: 'Shared one', email: `shared1-${suffix}@example.com` }, message: `${MARK} sibling message one` }), 202).message;
  const sm2 = ok(await asSibling('POST', '/messages', { to: { name: 'Shared two', email: `shared2-${suffix}@example.com` }, message: `${MARK} sibling message two` }), 202).message;
  ok(await asSibling('POST', `/conversations/${sm2.conversationId}/close`), 200);
  const siblingTemplate = await createTemplate(prisma, {
    workspaceId: a.workspace.id,
    channelId: a2.channel.id,
    name: `${MARK}_sibling_template`,
    language: 'en',
    body: `${MARK} sibling {{1}}`,
    status: 'approved',
  });

  // The caller's own objects: positive controls, so a wrongly built call cannot pass as a 404.
  const own = ok(await asHome('POST', '/contacts', { name: 'Own contact', email: `own-${suffix}@example.com` }), 201).contact;
  const ownMessage = ok(await asHome('POST', '/messages', { to: own.id, message: 'own message' }), 202).message;
  await createTemplate(prisma, { workspaceId: a.workspace.id, channelId: a.channel.id, name: 'own_template', language: 'en', body: 'Own {{1}}', status: 'approved' });

  const ids = {
    foreign: {
      contact: [fc1.id, fc2.id] as string[],
      conversation: [fm1.conversationId, fm2.conversationId] as string[],
      message: [fm1.id, fm2.id] as string[],
    },
    sibling: {
      /** Contacts A2 created: visible to A1 by the spec, but A1 has no messages or conversations with them. */
      contact: [sm1.contactId, sm2.contactId] as string[],
      conversation: [sm1.conversationId, sm2.conversationId] as string[],
      message: [sm1.id, sm2.id] as string[],
    },
    own: { contact: own.id as string, conversation: ownMessage.conversationId as string, message: ownMessage.id as string },
  };

  /** Everything the caller must never see unless it put it in the request itself. */
  const secrets = [
    MARK,
    ...ids.foreign.contact,
    ...ids.foreign.conversation,
    ...ids.foreign.message,
    ...ids.sibling.conversation,
    ...ids.sibling.message,
    foreignEmail,
    foreignPhone,
    foreignTemplate.id,
    siblingTemplate.id,
    b.workspace.id,
    b.channel.id,
    a2.channel.id,
  ];

  /** The invisible side's state, to show that no refused call changed it. */
  async function invisibleState() {
    const conversationIds = [...ids.foreign.conversation, ...ids.sibling.conversation];
    return {
      contacts: await prisma.contact.findMany({ where: { id: { in: ids.foreign.contact } }, orderBy: { id: 'asc' } }),
      conversations: await prisma.conversation.findMany({
        where: { id: { in: conversationIds } },
        include: { stateChanges: true },
        orderBy: { id: 'asc' },
      }),
      foreignContacts: await prisma.contact.count({ where: { workspaceId: b.workspace.id } }),
      messages: await prisma.message.count({ where: { channelId: { in: [b.channel.id, a2.channel.id] } } }),
    };
  }

  return { a, a2, b, asHome, asForeign, ids, secrets, foreignEmail, foreignPhone, foreign2, foreignUser, homeUser, foreignTemplate, siblingTemplate, invisibleState };
}

let world: World;
beforeAll(async () => {
  world = await buildWorld();
});

/** No response text holds a marker or an id of the invisible side that the caller did not send itself. */
function expectNoLeak(what: string, text: string, sent: string) {
  for (const secret of world.secrets) {
    if (sent.includes(secret)) continue;
    expect(text.includes(secret), `${what} leaks ${secret === MARK ? 'a FOREIGN marker' : secret}: ${text.slice(0, 500)}`).toBe(false);
  }
}

function expectNo5xx(what: string, result: { status: number; text: string }) {
  expect(result.status, `${what}: ${result.text.slice(0, 300)}`).toBeLessThan(500);
}

// ───────────────────────────── REST ─────────────────────────────

type Resource = 'contact' | 'conversation' | 'message';

/**
 * How to call each route that takes an id in its path. `own`: what the caller's own id answers
 * when it is not a success (a message without files has no media 0), so that the refusal of
 * another's id is still told apart from a wrongly built call.
 */
const PATH_ROUTES: Record<string, { resource: Resource; body?: unknown; bodyFor?: (w: World) => unknown; own?: { status: number; message: string } }> = {
  'GET /contacts/:contact': { resource: 'contact' },
  'PATCH /contacts/:contact': { resource: 'contact', body: { name: 'Renamed by another tenant' } },
  'GET /conversations/:id': { resource: 'conversation' },
  'POST /conversations/:id/close': { resource: 'conversation' },
  'POST /conversations/:id/reopen': { resource: 'conversation' },
  'POST /conversations/:id/assign': { resource: 'conversation', body: { user: null } },
  'POST /conversations/:id/read': { resource: 'conversation' },
  'POST /conversations/:id/labels': { resource: 'conversation', body: { add: ['isolation'] } },
  'POST /conversations/:id/activity': { resource: 'conversation', bodyFor: (w) => ({ typing: false, from: w.homeUser.id }) },
  'GET /messages/:id/media/:index': { resource: 'message', own: { status: 404, message: 'Media not found.' } },
};

/** Channel-scoped resources are invisible to another channel of the same workspace too; contacts are workspace-wide. */
const CHANNEL_SCOPED: Record<Resource, boolean> = { contact: false, conversation: true, message: true };
const NOT_FOUND: Record<Resource, string> = { contact: 'Contact not found.', conversation: 'Conversation not found.', message: 'Message not found.' };

/** Each route without a path id: the id-bearing query parameters it filters by, or the probes it needs. */
const LIST_ROUTES: Record<string, { idFilters: Record<string, Resource>; search?: boolean }> = {
  'GET /channels': { idFilters: {} },
  'GET /contacts': { idFilters: {}, search: true },
  'GET /templates': { idFilters: {} },
  'GET /messages': { idFilters: { contact_id: 'contact', conversation_id: 'conversation' }, search: true },
  'GET /conversations': { idFilters: { contact_id: 'contact' } },
  'GET /users': { idFilters: {} },
};

/** Routes without a path id that are not plain lists: each has its own test below. */
const OTHER_ROUTES = ['GET /contacts/find', 'POST /contacts', 'POST /contacts/import', 'POST /messages', 'POST /sessions', 'GET /sessions', 'DELETE /sessions', 'DELETE /sessions/:id', 'POST /graphql/documents',
  // Broadcasts: another workspace's and another channel's are 404 (test/modules/broadcasts/broadcasts.test.ts).
  'POST /broadcasts', 'GET /broadcasts', 'GET /broadcasts/:id', 'GET /broadcasts/:id/recipients', 'POST /broadcasts/:id/pause', 'POST /broadcasts/:id/resume',
  'POST /broadcasts/:id/cancel'];

const restRoutes = DOCUMENTED_ROUTES.rest
  .map((route) => `${route.method} ${route.path}`);

describe('REST routes are enumerated from the router', () => {
  it('every route is known to this file', () => {
    expect(restRoutes.length).toBeGreaterThan(0);
    for (const route of restRoutes) {
      if (route.includes(':') && !OTHER_ROUTES.includes(route)) {
        expect(
          PATH_ROUTES[route],
          `${route} takes an id in its path but test/rest/isolation.test.ts does not know how to call it: add it to PATH_ROUTES`,
        ).toBeDefined();
      } else {
        expect(
          LIST_ROUTES[route] ?? OTHER_ROUTES.includes(route),
          `${route} is not covered by test/rest/isolation.test.ts: add it to LIST_ROUTES or OTHER_ROUTES with a test`,
        ).toBeTruthy();
      }
    }
  });

  it('every route this file knows still exists', () => {
    for (const route of [...Object.keys(PATH_ROUTES), ...Object.keys(LIST_ROUTES), ...OTHER_ROUTES]) {
      expect(restRoutes, `${route} is in test/rest/isolation.test.ts but no longer in the router`).toContain(route);
    }
  });
});

describe('REST: ids in paths', () => {
  for (const route of restRoutes.filter((r) => r.includes(':') && !OTHER_ROUTES.includes(r))) {
    it(`${route}: another workspace's ids${PATH_ROUTES[route] && CHANNEL_SCOPED[PATH_ROUTES[route].resource] ? " and another channel's" : ''} are 404`, async () => {
      const entry = PATH_ROUTES[route];
      if (!entry) throw new Error(`${route} has a path parameter and no entry in PATH_ROUTES`);
      const [method, pattern] = route.split(' ') as [string, string];
      const fill = (id: string) => pattern.replace(':index', '0').replace(/:[A-Za-z_]+/g, id);
      const before = await world.invisibleState();

      const own = await world.asHome(method, fill(world.ids.own[entry.resource]), entry.bodyFor?.(world) ?? entry.body);
      if (entry.own) expect([own.status, own.json], `${route} with the caller's own id: ${own.text}`).toEqual([entry.own.status, { status: 'error', message: entry.own.message }]);
      else expect(own.status, `${route} with the caller's own id: ${own.text}`).toBeLessThan(300);

      const invisible = [...world.ids.foreign[entry.resource], ...(CHANNEL_SCOPED[entry.resource] ? world.ids.sibling[entry.resource] : [])];
      for (const id of invisible) {
        // Upper case too: ids are matched without regard to case, scoping must be as well.
        for (const variant of [id, id.toUpperCase()]) {
          const result = await world.asHome(method, fill(variant), entry.bodyFor?.(world) ?? entry.body);
          expectNo5xx(route, result);
          expect(result.status, `${route} with ${variant}: ${result.text}`).toBe(404);
          expect(result.json).toEqual({ status: 'error', message: NOT_FOUND[entry.resource] });
          expectNoLeak(route, result.text, result.sent);
        }
      }
      if (!CHANNEL_SCOPED[entry.resource]) {
        // Workspace-wide: a contact created through another channel is the caller's to read and update.
        for (const id of world.ids.sibling[entry.resource]) {
          const result = await world.asHome(method, fill(id), entry.bodyFor?.(world) ?? entry.body);
          expect(result.status, `${route} with a contact of the same workspace: ${result.text}`).toBe(200);
        }
      }
      expect(await world.invisibleState()).toEqual(before);
    });
  }
});

describe('REST: sessions', () => {
  const ok = (result: Raw, status: number) => {
    if (result.status !== status) throw new Error(`call answered ${result.status}: ${result.text}`);
    return result.json.data;
  };

  it('minting, listing and revoking never reach another workspace’s users, channels or sessions', async () => {
    const w = world;
    const channelMessage = (id: string) => `The channel ${id} is not an active channel this credential can act as.`;
    const refusals: [unknown, string, string][] = [
      [{ user: w.foreignUser.id }, 'user', 'No user of this workspace has this id or email.'],
      [{ user: w.foreignUser.email }, 'user', 'No user of this workspace has this id or email.'],
      [{ user: w.homeUser.id, channels: [w.b.channel.id] }, 'channels', channelMessage(w.b.channel.id)],
      [{ user: w.homeUser.id, channels: [w.a2.channel.id] }, 'channels', channelMessage(w.a2.channel.id)],
    ];
    for (const [body, field, message] of refusals) {
      const result = await w.asHome('POST', '/sessions', body);
      expect(result.status, result.text).toBe(422);
      expect(result.json.errors).toEqual({ [field]: [message] });
      expectNoLeak('POST /sessions', result.text, result.sent);
    }
    const foreign = ok(await w.asForeign('POST', '/sessions', { user: w.foreignUser.id }), 201).session;
    const sibling = ok(await rest(w.a.host, w.a2.apiKey, 'POST', '/sessions', { user: w.homeUser.id }), 201).session;
    const own = ok(await w.asHome('POST', '/sessions', { user: w.homeUser.id }), 201).session;
    const listed = await w.asHome('GET', '/sessions?limit=100');
    expect(listed.json.data.map((x: { id: string }) => x.id)).toEqual([own.id]);
    expectNoLeak('GET /sessions', listed.text, listed.sent);
    expect((await w.asHome('GET', `/sessions?user=${w.foreignUser.id}`)).status).toBe(422);
    for (const id of [foreign.id, sibling.id, foreign.id.toUpperCase()]) {
      const result = await w.asHome('DELETE', `/sessions/${id}`);
      expect(result.status, result.text).toBe(404);
      expect(result.json).toEqual({ status: 'error', message: 'Session not found.' });
    }
    expect((await w.asHome('DELETE', `/sessions?user=${w.foreignUser.id}`)).status).toBe(422);
    expect((await w.asHome('DELETE', `/sessions?user=${w.homeUser.id}`)).json).toEqual({ data: { revoked: 1 } });
    expect((await rest(w.b.host, foreign.token, 'GET', '/channels')).status).toBe(200);
    expect((await rest(w.a.host, sibling.token, 'GET', '/channels')).status).toBe(200);
    // A session of another workspace is unknown at this host.
    expect((await rest(w.a.host, foreign.token, 'GET', '/channels')).status).toBe(401);
  });
});

describe('REST: lists and id filters', () => {
  for (const route of restRoutes.filter((r) => LIST_ROUTES[r])) {
    const entry = LIST_ROUTES[route]!;
    const path = route.split(' ')[1]!;
    it(`${route}: shows nothing of the other workspace or channel, and its id filters find nothing of theirs`, async () => {
      const plain = await world.asHome('GET', `${path}?limit=100`);
      expect(plain.status, plain.text).toBe(200);
      expect(plain.json.data.length, `${route} lists the caller's own objects`).toBeGreaterThan(0);
      expectNoLeak(route, plain.text, plain.sent);

      if (entry.search) {
        const searched = await world.asHome('GET', `${path}?search=${MARK}`);
        expect(searched.status, searched.text).toBe(200);
        expect(searched.json.data).toEqual([]);
      }

      for (const [parameter, resource] of Object.entries(entry.idFilters)) {
        const own = await world.asHome('GET', `${path}?${parameter}=${world.ids.own[resource]}`);
        expect(own.status, own.text).toBe(200);
        expect(own.json.data.length, `${route}?${parameter}= the caller's own id finds its objects`).toBeGreaterThan(0);
        // A contact of the same workspace is visible, but the caller's channel has nothing with it.
        const invisible = [...world.ids.foreign[resource], ...world.ids.sibling[resource]];
        for (const id of invisible) {
          for (const query of [`${parameter}=${id}`, `${parameter}=${id.toUpperCase()}`, `${parameter}=${id}&search=${MARK}`]) {
            if (query.includes('search') && !entry.search) continue;
            const result = await world.asHome('GET', `${path}?${query}`);
            expectNo5xx(route, result);
            expect(result.status, `${route}?${query}: ${result.text}`).toBe(200);
            expect(result.json.data, `${route}?${query}`).toEqual([]);
            expectNoLeak(`${route}?${query}`, result.text, result.sent);
          }
        }
      }
    });
  }

  it('GET /contacts/find: another workspace\'s email and phone are not found', async () => {
    for (const query of [`email=${world.foreignEmail}`, `email=${world.foreignEmail.toUpperCase()}`, `phone=${encodeURIComponent(world.foreignPhone)}`]) {
      const result = await world.asHome('GET', `/contacts/find?${query}`);
      expect(result.status, `?${query}: ${result.text}`).toBe(404);
      expect(result.json).toEqual({ status: 'error', message: 'Contact not found.' });
      expectNoLeak('GET /contacts/find', result.text, result.sent);
    }
  });
});

describe('REST: ids and references in bodies and headers', () => {
  it('POST /messages: another workspace\'s contact UUID in to, contact or sender is a 422 and sends nothing', async () => {
    const before = await world.invisibleState();
    const ownMessages = () => app.db.prisma.message.count({ where: { channelId: world.a.channel.id } });
    const sentBefore = await ownMessages();
    for (const field of ['to', 'contact', 'sender']) {
      for (const id of world.ids.foreign.contact) {
        for (const variant of [id, id.toUpperCase(), ` ${id} `]) {
          const result = await world.asHome('POST', '/messages', { [field]: variant, message: 'hello' });
          expectNo5xx('POST /messages', result);
          expect(result.status, `${field}: ${variant} → ${result.text}`).toBe(422);
          expect(result.json.errors, result.text).toEqual({ [field]: ['The selected contact does not exist.'] });
          expectNoLeak('POST /messages', result.text, result.sent);
        }
      }
    }
    expect(await ownMessages()).toBe(sentBefore);
    expect(await world.invisibleState()).toEqual(before);
  });

  it('POST /messages: another workspace\'s user in from is only an external name; another channel\'s template is unknown', async () => {
    for (const from of [world.foreignUser.id, world.foreignUser.email]) {
      const result = await world.asHome('POST', '/messages', { to: world.ids.own.contact, message: 'attributed', from });
      expect(result.status, result.text).toBe(202);
      expect(result.json.data.message.sender).toEqual({ type: 'external', id: null, name: from });
      expectNoLeak('POST /messages from', result.text, result.sent);
    }
    for (const template of [world.foreignTemplate, world.siblingTemplate]) {
      const result = await world.asHome('POST', '/messages', {
        to: world.ids.own.contact,
        type: 'template',
        template: { name: template.name, language: 'en', parameters: ['x'] },
      });
      expect(result.status, result.text).toBe(422);
      expect(Object.keys(result.json.errors)).toEqual(['template.name']);
    }
  });

  it('POST /contacts: another workspace\'s email and phone are free here, and no conflict names its contact', async () => {
    const result = await world.asHome('POST', '/contacts', { name: 'Same details', ...world.foreign2 });
    expect(result.status, result.text).toBe(201);
    expect(world.ids.foreign.contact).not.toContain(result.json.data.contact.id);
    expectNoLeak('POST /contacts', result.text, result.sent);
  });

  it('POST /contacts/import: another workspace\'s contacts are never matched, and no answer names one', async () => {
    const rows = [{ name: 'Imported twin', ...world.foreign2 }, { name: 'Imported upper', email: world.foreign2.email.toUpperCase() }];
    const result = await world.asHome('POST', '/contacts/import', { contacts: rows });
    expect(result.status, result.text).toBe(200);
    const results = result.json.data.results as { id: string | null; status: string }[];
    expect(results.map((row) => row.status).every((status) => status === 'created' || status === 'matched'), result.text).toBe(true);
    for (const row of results) expect(world.ids.foreign.contact).not.toContain(row.id);
    expectNoLeak('POST /contacts/import', result.text, result.sent);
  });

  it('Idempotency-Key: another workspace\'s key replays nothing here', async () => {
    const key = `isolation-${randomBytes(4).toString('hex')}`;
    const body = { name: 'Idempotent twin', email: `twin-${key}@example.com` };
    const first = await rest(world.b.host, world.b.apiKey, 'POST', '/contacts', body, { 'idempotency-key': key });
    expect(first.status, first.text).toBe(201);
    const second = await world.asHome('POST', '/contacts', body, { 'idempotency-key': key });
    expect(second.status, second.text).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.json.data.contact.id).not.toBe(first.json.data.contact.id);
  });

  it('POST /graphql/documents: a document another workspace registered is unknown here, and stays its own', async () => {
    const text = `query Isolated${randomBytes(4).toString('hex')} { viewer { workspace { id name } } }`;
    const hash = createHash('sha256').update(text).digest('hex');
    const registered = await rest(world.b.host, world.b.apiKey, 'POST', '/graphql/documents', { [hash]: text });
    expect(registered.json).toEqual({ data: { stored: 1 } });
    const byId = async (host: string, token: string) => {
      const response = await app.fetch(host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ documentId: `sha256:${hash}` }),
      });
      return { status: response.status, text: await response.text() };
    };
    const here = await byId(world.a.host, world.a.apiKey);
    expect(JSON.parse(here.text)).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
    expect(here.text).not.toContain(MARK);
    expect(JSON.parse((await byId(world.b.host, world.b.apiKey)).text).data.viewer.workspace.id).toBe(world.b.workspace.id);
    // Registering it here stores it here: the other workspace's copy does not make it known already.
    const own = await world.asHome('POST', '/graphql/documents', { [hash]: text });
    expect(own.json).toEqual({ data: { stored: 1 } });
    expect(JSON.parse((await byId(world.a.host, world.a.apiKey)).text).data.viewer.workspace.id).toBe(world.a.workspace.id);
  });

  it('credentials and X-Channel-Uuid never cross a workspace', async () => {
    // Another workspace's key on this host, and this workspace's key on another host.
    for (const [host, token] of [
      [world.a.host, world.b.apiKey],
      [world.b.host, world.a.apiKey],
    ] as const) {
      const result = await rest(host, token, 'GET', '/contacts');
      expect(result.status).toBe(401);
      expectNoLeak('cross-host credential', result.text, result.sent);
    }
    const connection = await createConnection(app.db.prisma, { workspaceId: world.a.workspace.id, name: 'Both', channelIds: [world.a.channel.id, world.a2.channel.id] });
    const foreignChannel = await rest(world.a.host, connection.token, 'GET', '/messages', undefined, { 'x-channel-uuid': world.b.channel.id });
    expect(foreignChannel.status, foreignChannel.text).toBe(401);
    const channels = await rest(world.a.host, connection.token, 'GET', '/channels');
    expect(channels.status).toBe(200);
    expect(channels.json.data.map((c: { id: string }) => c.id).sort()).toEqual([world.a.channel.id, world.a2.channel.id].sort());
    expect(channels.text).not.toContain(world.b.channel.id);
  });
});

// ───────────────────────────── GraphQL ─────────────────────────────

/** Paths (`input.to.contactId`) of every ID an argument can carry, however deep in input objects. */
function idPaths(type: GraphQLInputType, path: string, seen: Set<string> = new Set()): string[] {
  const named = getNamedType(type);
  if (isScalarType(named)) return named.name === 'ID' ? [path] : [];
  if (!isInputObjectType(named) || seen.has(named.name)) return [];
  const inner = new Set(seen).add(named.name);
  return Object.values(named.getFields()).flatMap((field) => idPaths(field.type, `${path}.${field.name}`, inner));
}

function idTakingFields(): Record<string, string[]> {
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean) as GraphQLObjectType[];
  const found: Record<string, string[]> = {};
  for (const root of roots) {
    for (const field of Object.values(root.getFields())) {
      const paths = field.args.flatMap((arg) => idPaths(arg.type, arg.name));
      if (paths.length) found[`${root.name}.${field.name}`] = paths.sort();
    }
  }
  return found;
}

type Expectation =
  | { kind: 'null' }
  | { kind: 'visible' }
  | { kind: 'empty' }
  | { kind: 'nonEmpty' }
  | { kind: 'allNull' }
  | { kind: 'allVisible' }
  | { kind: 'userError'; object: string; code: 'NOT_FOUND' | 'INVALID'; field: readonly string[]; message: string }
  | { kind: 'success'; object: string }
  | { kind: 'imported' }
  | { kind: 'reported' }
  | { kind: 'activityError'; code: 'NOT_FOUND' | 'INVALID'; field: readonly string[] };

interface GraphQLCase {
  label: string;
  variables: Record<string, unknown>;
  expect: Expectation;
}

interface FieldEntry {
  /** The ID paths the schema gives this field; compared with the schema, so a new ID argument fails the file. */
  idPaths: string[];
  document: string;
  cases: (w: World) => GraphQLCase[];
}

const contactSelection = 'id name email phoneNumber';
const conversationSelection = 'id status contactId channelId contact { id name } stateChanges { type actor { id name } }';
const messageSelection = 'id body contactId conversationId channelId sender { id name } contact { id name } conversation { id contactId }';
const payloadErrors = 'userErrors { field message code }';

const each = <T>(ids: string[], f: (id: string) => T[]) => ids.flatMap((id) => [...f(id), ...f(id.toUpperCase())]);

/** Every kind of node, each with what the others' fragments select without a conflict. */
const nodeSelection = `id __typename ... on Contact { ${contactSelection} } ... on Conversation { ${conversationSelection} } ... on Message { ${messageSelection} }
  ... on Template { name language } ... on Channel { name type } ... on User { name }`;

/** Ids of every kind of node the home channel's key may see, and of those it may not: another workspace's, the sibling channel's. */
function nodeIds(w: World) {
  return {
    visible: [w.ids.own.contact, w.ids.own.conversation, w.ids.own.message, ...w.ids.sibling.contact, w.a.channel.id, w.homeUser.id],
    invisible: [
      ...w.ids.foreign.contact,
      ...w.ids.foreign.conversation,
      ...w.ids.foreign.message,
      w.foreignTemplate.id,
      w.foreignUser.id,
      w.b.channel.id,
      ...w.ids.sibling.conversation,
      ...w.ids.sibling.message,
      w.siblingTemplate.id,
      w.a2.channel.id,
    ],
  };
}

const GRAPHQL_FIELDS: Record<string, FieldEntry> = {
  'Query.node': {
    idPaths: ['id'],
    document: `query ($id: ID!) { node(id: $id) { ${nodeSelection} } }`,
    cases: (w) => [
      ...each(nodeIds(w).visible, (id) => [{ label: `visible ${id}`, variables: { id }, expect: { kind: 'visible' } as const }]),
      ...each(nodeIds(w).invisible, (id) => [{ label: `invisible ${id}`, variables: { id }, expect: { kind: 'null' } as const }]),
    ],
  },
  'Query.nodes': {
    idPaths: ['ids'],
    document: `query ($ids: [ID!]!) { nodes(ids: $ids) { ${nodeSelection} } }`,
    cases: (w) => [
      { label: 'visible', variables: { ids: nodeIds(w).visible }, expect: { kind: 'allVisible' } },
      { label: 'invisible', variables: { ids: nodeIds(w).invisible }, expect: { kind: 'allNull' } },
      { label: 'invisible, upper case', variables: { ids: nodeIds(w).invisible.map((id) => id.toUpperCase()) }, expect: { kind: 'allNull' } },
    ],
  },
  'Query.contact': {
    idPaths: ['id'],
    document: `query ($id: ID!) { contact(id: $id) { ${contactSelection} } }`,
    cases: (w) => [
      { label: 'own', variables: { id: w.ids.own.contact }, expect: { kind: 'visible' } },
      ...w.ids.sibling.contact.map((id) => ({ label: 'same workspace, other channel', variables: { id }, expect: { kind: 'visible' } as const })),
      ...each(w.ids.foreign.contact, (id) => [{ label: `other workspace ${id}`, variables: { id }, expect: { kind: 'null' } as const }]),
    ],
  },
  'Query.conversation': {
    idPaths: ['id'],
    document: `query ($id: ID!) { conversation(id: $id) { ${conversationSelection} } }`,
    cases: (w) => [
      { label: 'own', variables: { id: w.ids.own.conversation }, expect: { kind: 'visible' } },
      ...each([...w.ids.foreign.conversation, ...w.ids.sibling.conversation], (id) => [{ label: id, variables: { id }, expect: { kind: 'null' } as const }]),
    ],
  },
  'Query.conversations': {
    idPaths: ['assigneeId', 'channelId', 'contactId'],
    document: `query ($contactId: ID) { conversations(first: 100, contactId: $contactId) { edges { node { ${conversationSelection} } } } }`,
    cases: (w) => [
      { label: 'own', variables: { contactId: w.ids.own.contact }, expect: { kind: 'nonEmpty' } },
      ...each([...w.ids.foreign.contact, ...w.ids.sibling.contact], (contactId) => [{ label: contactId, variables: { contactId }, expect: { kind: 'empty' } as const }]),
    ],
  },
  'Query.messages': {
    idPaths: ['contactId', 'conversationId'],
    document: `query ($contactId: ID, $conversationId: ID, $search: String) {
      messages(first: 100, contactId: $contactId, conversationId: $conversationId, search: $search) { edges { node { ${messageSelection} } } }
    }`,
    cases: (w) => [
      { label: 'own contact', variables: { contactId: w.ids.own.contact }, expect: { kind: 'nonEmpty' } },
      { label: 'own conversation', variables: { conversationId: w.ids.own.conversation }, expect: { kind: 'nonEmpty' } },
      ...each([...w.ids.foreign.contact, ...w.ids.sibling.contact], (contactId) => [
        { label: `contactId ${contactId}`, variables: { contactId }, expect: { kind: 'empty' } as const },
        { label: `contactId ${contactId} with search`, variables: { contactId, search: MARK }, expect: { kind: 'empty' } as const },
      ]),
      ...each([...w.ids.foreign.conversation, ...w.ids.sibling.conversation], (conversationId) => [
        { label: `conversationId ${conversationId}`, variables: { conversationId }, expect: { kind: 'empty' } as const },
        { label: `conversationId ${conversationId} with search`, variables: { conversationId, search: MARK }, expect: { kind: 'empty' } as const },
      ]),
    ],
  },
  'Mutation.updateContact': {
    idPaths: ['id'],
    document: `mutation ($id: ID!) { updateContact(id: $id, input: { name: "Renamed by another tenant" }) { contact { ${contactSelection} } ${payloadErrors} } }`,
    cases: (w) => [
      { label: 'own', variables: { id: w.ids.own.contact }, expect: { kind: 'success', object: 'contact' } },
      ...each(w.ids.foreign.contact, (id) => [
        {
          label: id,
          variables: { id },
          expect: { kind: 'userError', object: 'contact', code: 'NOT_FOUND', field: ['id'], message: 'Contact not found.' } as const,
        },
      ]),
    ],
  },
  'Mutation.closeConversation': {
    idPaths: ['id'],
    document: `mutation ($id: ID!) { closeConversation(id: $id) { conversation { ${conversationSelection} } ${payloadErrors} } }`,
    cases: (w) => conversationMutationCases(w),
  },
  'Mutation.reopenConversation': {
    idPaths: ['id'],
    document: `mutation ($id: ID!) { reopenConversation(id: $id) { conversation { ${conversationSelection} } ${payloadErrors} } }`,
    cases: (w) => conversationMutationCases(w),
  },
  'Mutation.assignConversation': {
    idPaths: ['id', 'userId'],
    document: `mutation ($id: ID!) { assignConversation(id: $id, userId: null) { conversation { ${conversationSelection} } ${payloadErrors} } }`,
    cases: (w) => conversationMutationCases(w),
  },
  'Mutation.reportActivity': {
    idPaths: ['conversationId', 'from'],
    document: `mutation ($id: ID!, $from: ID) { reportActivity(conversationId: $id, typing: false, from: $from) { reported ${payloadErrors} } }`,
    cases: (w) => [
      { label: 'own', variables: { id: w.ids.own.conversation, from: w.homeUser.id }, expect: { kind: 'reported' } },
      ...each([...w.ids.foreign.conversation, ...w.ids.sibling.conversation], (id) => [
        { label: id, variables: { id, from: w.homeUser.id }, expect: { kind: 'activityError', field: ['conversationId'], code: 'NOT_FOUND' } as const },
      ]),
      ...[w.foreignUser.id, w.foreignUser.email].map((from) => ({
        label: `from ${from}`,
        variables: { id: w.ids.own.conversation, from },
        expect: { kind: 'activityError', field: ['from'], code: 'INVALID' } as const,
      })),
    ],
  },
  'Mutation.markConversationRead': {
    idPaths: ['id', 'throughMessageId'],
    document: `mutation ($id: ID!) { markConversationRead(id: $id) { conversation { ${conversationSelection} } ${payloadErrors} } }`,
    cases: (w) => conversationMutationCases(w),
  },
  'Mutation.updateConversationLabels': {
    idPaths: ['id'],
    document: `mutation ($id: ID!) { updateConversationLabels(id: $id, add: ["isolation"]) { conversation { ${conversationSelection} } ${payloadErrors} } }`,
    cases: (w) => conversationMutationCases(w),
  },
  'Mutation.sendMessage': {
    idPaths: ['input.channelId', 'input.contact.contactId', 'input.sender.contactId', 'input.to.contactId'],
    document: `mutation ($input: SendMessageInput!) { sendMessage(input: $input) { message { ${messageSelection} } ${payloadErrors} } }`,
    cases: (w) => [
      { label: 'own', variables: { input: { to: { contactId: w.ids.own.contact }, message: 'own' } }, expect: { kind: 'success', object: 'message' } },
      { label: 'own channelId', variables: { input: { to: { contactId: w.ids.own.contact }, message: 'own', channelId: w.a.channel.id } }, expect: { kind: 'success', object: 'message' } },
      ...each([w.b.channel.id, w.a2.channel.id], (channelId) => [
        {
          label: `channelId ${channelId}`,
          variables: { input: { to: { contactId: w.ids.own.contact }, message: 'hello', channelId } },
          expect: { kind: 'userError', object: 'message', code: 'INVALID', field: ['input', 'channelId'], message: 'The channelId must be a channel this credential can act as.' } as const,
        },
      ]),
      ...(['to', 'contact', 'sender'] as const).flatMap((field) =>
        each(w.ids.foreign.contact, (contactId) => [
          {
            label: `${field}.contactId ${contactId}`,
            variables: { input: { [field]: { contactId }, message: 'hello' } },
            expect: { kind: 'userError', object: 'message', code: 'INVALID', field: ['input', field], message: 'The selected contact does not exist.' } as const,
          },
        ]),
      ),
    ],
  },
  'Mutation.createContact': {
    idPaths: ['input.channelId'],
    document: `mutation ($input: CreateContactInput!) { createContact(input: $input) { contact { ${contactSelection} } ${payloadErrors} } }`,
    cases: (w) => [
      {
        label: 'own channelId',
        variables: { input: { name: 'Linked', email: `linked-${w.a.channel.id}@example.com`, channelId: w.a.channel.id } },
        expect: { kind: 'success', object: 'contact' },
      },
      ...each([w.b.channel.id, w.a2.channel.id], (channelId) => [
        {
          label: `channelId ${channelId}`,
          variables: { input: { name: 'Elsewhere', email: 'elsewhere@example.com', channelId } },
          expect: { kind: 'userError', object: 'contact', code: 'INVALID', field: ['input', 'channelId'], message: 'The channelId must be a channel this credential can act as.' } as const,
        },
      ]),
    ],
  },
  'Mutation.importContacts': {
    idPaths: ['input.channelId'],
    document: `mutation ($input: ImportContactsInput!) { importContacts(input: $input) { results { index status contact { ${contactSelection} } ${payloadErrors} } ${payloadErrors} } }`,
    cases: (w) => [
      {
        label: 'own channelId',
        variables: { input: { contacts: [{ name: 'Imported', email: `imported-${w.a.channel.id}@example.com` }], channelId: w.a.channel.id } },
        expect: { kind: 'imported' },
      },
      ...each([w.b.channel.id, w.a2.channel.id], (channelId) => [
        {
          label: `channelId ${channelId}`,
          variables: { input: { contacts: [{ name: 'Elsewhere', email: 'elsewhere-import@example.com' }], channelId } },
          expect: { kind: 'userError', object: 'results', code: 'INVALID', field: ['input', 'channelId'], message: 'The channelId must be a channel this credential can act as.' } as const,
        },
      ]),
    ],
  },
  'Mutation.createSession': {
    idPaths: ['input.channelIds'],
    document: `mutation ($input: CreateSessionInput!) { createSession(input: $input) { session { id channelIds user { id } } ${payloadErrors} } }`,
    cases: (w) => [
      { label: 'own', variables: { input: { user: w.homeUser.id, channelIds: [w.a.channel.id] } }, expect: { kind: 'success', object: 'session' } },
      ...each([w.b.channel.id, w.a2.channel.id], (id) => [
        {
          label: `channelIds ${id}`,
          variables: { input: { user: w.homeUser.id, channelIds: [id] } },
          expect: { kind: 'userError', object: 'session', code: 'INVALID', field: ['input', 'channelIds'], message: `The channel ${id} is not an active channel this credential can act as.` } as const,
        },
      ]),
      ...[w.foreignUser.id, w.foreignUser.email].map((user) => ({
        label: `user ${user}`,
        variables: { input: { user } },
        expect: { kind: 'userError', object: 'session', code: 'INVALID', field: ['input', 'user'], message: 'No user of this workspace has this id or email.' } as const,
      })),
    ],
  },
  'Subscription.messageAdded': {
    idPaths: ['channelId', 'conversationId'],
    document: `subscription ($conversationId: ID, $channelId: ID) { messageAdded(conversationId: $conversationId, channelId: $channelId) { ${messageSelection} } }`,
    // Subscriptions are exercised over SSE in their own test below; a channelId the credential cannot act as
    // is refused when the stream starts (test/graphql/channel-wide.test.ts).
    cases: () => [],
  },
  'Subscription.messageUpdated': {
    idPaths: ['channelId', 'conversationId'],
    document: `subscription ($conversationId: ID, $channelId: ID) { messageUpdated(conversationId: $conversationId, channelId: $channelId) { ${messageSelection} } }`,
    // Filtered as messageAdded is, after the same workspace and channel check; test/graphql/live-statuses.test.ts streams it.
    cases: () => [],
  },
  'Subscription.conversationActivity': {
    idPaths: ['conversationId'],
    document: `subscription ($conversationId: ID!) { conversationActivity(conversationId: $conversationId) { conversationId user { id name } typing viewing at } }`,
    // Refused at subscribe for a conversation the credential cannot read: test/modules/activity/activity.test.ts.
    cases: () => [],
  },
  'Subscription.conversationUpdated': {
    idPaths: ['channelId', 'id'],
    document: `subscription ($id: ID, $channelId: ID) { conversationUpdated(id: $id, channelId: $channelId) { ${conversationSelection} } }`,
    // Filtered after the workspace and channel check; test/graphql/live-statuses.test.ts streams it by id,
    // test/graphql/channel-wide.test.ts refuses a channelId the credential cannot act as.
    cases: () => [],
  },
  // Broadcasts: the world has none, so every id is another workspace's or channel's object or none at all;
  // a broadcast of another workspace or channel is answered as unknown in test/modules/broadcasts/broadcasts.test.ts.
  'Query.broadcast': {
    idPaths: ['id'],
    document: `query ($id: ID!) { broadcast(id: $id) { id } }`,
    cases: (w) => broadcastIds(w).map((id) => ({ label: id, variables: { id }, expect: { kind: 'null' } as const })),
  },
  'Subscription.broadcastUpdated': {
    idPaths: ['id'],
    document: `subscription ($id: ID!) { broadcastUpdated(id: $id) { id status counts { total sent } } }`,
    // Refused at subscribe, as Query.broadcast answers it, for another workspace's or channel's broadcast:
    // test/modules/broadcasts/broadcast-updates.test.ts.
    cases: () => [],
  },
  'Mutation.pauseBroadcast': broadcastMutation('pauseBroadcast'),
  'Mutation.resumeBroadcast': broadcastMutation('resumeBroadcast'),
  'Mutation.cancelBroadcast': broadcastMutation('cancelBroadcast'),
  'Mutation.createBroadcast': {
    idPaths: ['input.audience.contacts', 'input.channelId'],
    document: `mutation ($input: CreateBroadcastInput!) { createBroadcast(input: $input) { broadcast { id } ${payloadErrors} } }`,
    cases: (w) => [
      // Ids in their stored (lower) case: the refusal names the ids it was sent, normalised.
      ...w.ids.foreign.contact.flatMap((id) => [
        {
          label: `contact ${id}`,
          variables: { input: { name: 'b', audience: { contacts: [id] }, message: { type: 'text', message: 'hi' } } },
          expect: { kind: 'userError', object: 'broadcast', code: 'INVALID', field: ['input', 'audience', 'contacts'], message: BROADCAST_MESSAGES.contactsUnknown([id]) } as const,
        },
      ]),
      ...each([w.b.channel.id, w.a2.channel.id], (id) => [
        {
          label: `channel ${id}`,
          variables: { input: { name: 'b', channelId: id, audience: { contacts: [w.ids.own.contact] }, message: { type: 'text', message: 'hi' } } },
          expect: { kind: 'userError', object: 'broadcast', code: 'INVALID', field: ['input', 'channelId'], message: BROADCAST_MESSAGES.channel } as const,
        },
      ]),
    ],
  },
};

/** Ids that are no broadcast the caller can see: other objects' of this and other workspaces. */
function broadcastIds(w: World): string[] {
  return each([...w.ids.foreign.message, ...w.ids.sibling.message, w.b.channel.id], (id) => [id]);
}

function broadcastMutation(name: string): FieldEntry {
  return {
    idPaths: ['id'],
    document: `mutation ($id: ID!) { ${name}(id: $id) { broadcast { id } ${payloadErrors} } }`,
    cases: (w) =>
      broadcastIds(w).map((id) => ({
        label: id,
        variables: { id },
        expect: { kind: 'userError', object: 'broadcast', code: 'NOT_FOUND', field: ['id'], message: 'Broadcast not found.' } as const,
      })),
  };
}

function conversationMutationCases(w: World): GraphQLCase[] {
  return [
    { label: 'own', variables: { id: w.ids.own.conversation }, expect: { kind: 'success', object: 'conversation' } },
    ...each([...w.ids.foreign.conversation, ...w.ids.sibling.conversation], (id) => [
      {
        label: id,
        variables: { id },
        expect: { kind: 'userError', object: 'conversation', code: 'NOT_FOUND', field: ['id'], message: 'Conversation not found.' } as const,
      },
    ]),
  ];
}

async function gql(query: string, variables: Record<string, unknown>) {
  const response = await app.fetch(world.a.host, '/graphql', {
    method: 'POST',
    headers: { ...bearer(world.a.apiKey), 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] } };
}

describe('GraphQL fields are enumerated from the schema', () => {
  const inSchema = idTakingFields();

  it('every Query, Mutation and Subscription field taking an ID is in the table, with every ID it can carry', () => {
    expect(Object.keys(inSchema).length).toBeGreaterThan(0);
    for (const [field, paths] of Object.entries(inSchema)) {
      const entry = GRAPHQL_FIELDS[field];
      expect(entry, `${field} takes an ID (${paths.join(', ')}) but test/rest/isolation.test.ts has no entry for it in GRAPHQL_FIELDS`).toBeDefined();
      expect([...entry!.idPaths].sort(), `${field} carries IDs at ${paths.join(', ')}; GRAPHQL_FIELDS covers ${entry!.idPaths.join(', ')}`).toEqual(paths);
    }
  });

  it('every field in the table still takes an ID', () => {
    for (const field of Object.keys(GRAPHQL_FIELDS)) {
      expect(inSchema[field], `${field} is in GRAPHQL_FIELDS but the schema has no such field taking an ID`).toBeDefined();
    }
  });
});

describe('GraphQL: every id-taking field with another workspace\'s and another channel\'s ids', () => {
  for (const [coordinate, entry] of Object.entries(GRAPHQL_FIELDS)) {
    if (coordinate.startsWith('Subscription.')) continue;
    const fieldName = coordinate.split('.')[1]!;
    it(coordinate, async () => {
      const before = await world.invisibleState();
      const cases = entry.cases(world);
      const shows = (kind: Expectation['kind']) => kind === 'visible' || kind === 'nonEmpty' || kind === 'success' || kind === 'imported' || kind === 'allVisible';
      expect(cases.some((c) => !shows(c.expect.kind))).toBe(true);
      for (const c of cases) {
        const what = `${coordinate} ${c.label}`;
        const result = await gql(entry.document, c.variables);
        expect(result.status, `${what}: ${result.text}`).toBe(200);
        expect(result.json.errors, `${what}: ${result.text}`).toBeUndefined();
        const value = result.json.data?.[fieldName];
        switch (c.expect.kind) {
          case 'null':
            expect(value, what).toBeNull();
            break;
          case 'visible':
            expect(value?.id, what).toEqual(expect.any(String));
            break;
          case 'empty':
            expect(value?.edges, what).toEqual([]);
            break;
          case 'nonEmpty':
            expect(value?.edges?.length, what).toBeGreaterThan(0);
            break;
          case 'allNull':
            expect(value, what).toEqual((c.variables.ids as string[]).map(() => null));
            break;
          case 'allVisible':
            expect(value?.map((node: { id: string } | null) => node?.id), what).toEqual(c.variables.ids);
            break;
          case 'success':
            expect(value?.userErrors, `${what}: ${result.text}`).toEqual([]);
            expect(value?.[c.expect.object]?.id, what).toEqual(expect.any(String));
            break;
          case 'imported':
            expect(value?.userErrors, `${what}: ${result.text}`).toEqual([]);
            expect(value?.results?.map((row: { status: string; contact: { id: string } | null }) => [row.status, typeof row.contact?.id]), what).toEqual([['created', 'string']]);
            break;
          case 'reported':
            expect(value, `${what}: ${result.text}`).toEqual({ reported: true, userErrors: [] });
            break;
          case 'activityError':
            expect(value?.reported, what).toBe(false);
            expect(value?.userErrors?.map((e: { field: string[]; code: string }) => [e.field, e.code]), `${what}: ${result.text}`).toEqual([[c.expect.field, c.expect.code]]);
            break;
          case 'userError':
            expect(value?.[c.expect.object], what).toBeNull();
            expect(value?.userErrors, `${what}: ${result.text}`).toEqual([{ field: c.expect.field, message: c.expect.message, code: c.expect.code }]);
            break;
        }
        if (!shows(c.expect.kind)) {
          expectNoLeak(what, result.text, JSON.stringify(c.variables));
        }
      }
      expect(await world.invisibleState()).toEqual(before);
    });
  }

  it('findContact, contacts, templates and channels show nothing of another workspace or channel', async () => {
    const reads: [string, Record<string, unknown>, (data: any) => void][] = [
      [`query ($email: String) { findContact(email: $email) { ${contactSelection} } }`, { email: world.foreignEmail }, (d) => expect(d.findContact).toBeNull()],
      [`query ($phone: String) { findContact(phone: $phone) { ${contactSelection} } }`, { phone: world.foreignPhone }, (d) => expect(d.findContact).toBeNull()],
      [`query ($search: String) { contacts(first: 100, search: $search) { edges { node { ${contactSelection} } } } }`, { search: MARK }, (d) => expect(d.contacts.edges).toEqual([])],
      [`query { contacts(first: 100) { edges { node { ${contactSelection} } } } }`, {}, (d) => expect(d.contacts.edges.length).toBeGreaterThan(0)],
      [`query { templates(first: 100) { edges { node { id name body } } } }`, {}, (d) => expect(d.templates.edges.map((e: any) => e.node.name)).toEqual(['own_template'])],
      [`query { channels { id name } viewer { workspace { id name } channel { id name } } }`, {}, (d) => expect(d.channels).toHaveLength(1)],
      [`query { messages(first: 100) { edges { node { ${messageSelection} } } } }`, {}, (d) => expect(d.messages.edges.length).toBeGreaterThan(0)],
      [`query ($search: String) { messages(first: 100, search: $search) { edges { node { id } } } }`, { search: MARK }, (d) => expect(d.messages.edges).toEqual([])],
      [`query { conversations(first: 25) { edges { node { ${conversationSelection} messages(first: 25) { edges { node { id body } } } } } } }`, {}, (d) => expect(d.conversations.edges.length).toBeGreaterThan(0)],
    ];
    for (const [query, variables, check] of reads) {
      const result = await gql(query, variables);
      expect(result.status, result.text).toBe(200);
      expect(result.json.errors, result.text).toBeUndefined();
      check(result.json.data);
      expectNoLeak(query, result.text, JSON.stringify(variables));
    }
  });

  it('Subscription.messageAdded: another workspace\'s or channel\'s conversation id delivers nothing of theirs', async () => {
    const entry = GRAPHQL_FIELDS['Subscription.messageAdded']!;
    const document = parse(entry.document) as any;
    const open = (conversationId: string) =>
      subscribeSse((path, init) => app.fetch(world.a.host, path, init), bearer(world.a.apiKey), document, { conversationId });
    const foreignConversation = world.ids.foreign.conversation[0]!;
    const siblingConversation = world.ids.sibling.conversation[0]!;
    const streams = [await open(foreignConversation), await open(siblingConversation), await open(foreignConversation.toUpperCase())];
    const ownStream = await open(world.ids.own.conversation);
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const foreignSend = await world.asForeign('POST', '/messages', { to: world.ids.foreign.contact[0], message: `${MARK} live foreign` });
      expect(foreignSend.status, foreignSend.text).toBe(202);
      expect(foreignSend.json.data.message.conversationId).toBe(foreignConversation);
      const siblingSend = await rest(world.a.host, world.a2.apiKey, 'POST', '/messages', { to: world.ids.sibling.contact[0], message: `${MARK} live sibling` });
      expect(siblingSend.status, siblingSend.text).toBe(202);
      expect(siblingSend.json.data.message.conversationId).toBe(siblingConversation);
      // The caller's own message arrives after both: had the others been delivered, they would be here by now.
      const ownSend = await world.asHome('POST', '/messages', { to: world.ids.own.contact, message: 'live own' });
      expect(ownSend.status, ownSend.text).toBe(202);
      await ownStream.waitFor(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const stream of streams) {
        expect(stream.status).toBe(200);
        expect(stream.received, JSON.stringify(stream.received)).toEqual([]);
      }
    } finally {
      for (const stream of [...streams, ownStream]) await stream.close();
    }
  });
});
