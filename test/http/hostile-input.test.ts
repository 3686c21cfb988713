import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/logger.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, createConnection, addChannel } from '../helpers/factories.js';
import { messagingSetup } from '../helpers/messaging.js';

/**
 * Hostile input over the real HTTP surface (issue 9). For every body, query
 * string, header and GraphQL variable the app parses: never a 5xx; a 4xx changes
 * nothing; a 2xx answers the documented shape.
 */

const RUNS = 40;

let app: TestApp;
let s: Awaited<ReturnType<typeof setup>>;

beforeAll(async () => {
  app = await createTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
  s = await setup();
});
afterAll(() => app.close());

async function setup() {
  const m = await messagingSetup(app);
  const target = await m.contact({ name: 'Target', email: 'target@example.com', phone: '+31612340000' });
  const sent = await m.send({ to: target.id, message: 'first' });
  if (sent.status !== 202) throw new Error(JSON.stringify(sent.body));
  const conversationId = sent.body.data.message.conversationId as string;
  const sibling = await addChannel(app.db.prisma, m.workspace.id, 'Sibling');
  const connection = await createConnection(app.db.prisma, { workspaceId: m.workspace.id, name: 'Both', channelIds: [m.channel.id, sibling.channel.id] });
  return { ...m, target, conversationId, sibling, connection };
}

/** What a refused request must leave as it was. */
async function snapshot() {
  const prisma = app.db.prisma;
  const workspaceId = s.workspace.id;
  const [contacts, messages, conversations, stateChanges, target, conversation] = await Promise.all([
    prisma.contact.count({ where: { workspaceId } }),
    prisma.message.count({ where: { workspaceId } }),
    prisma.conversation.count({ where: { workspaceId } }),
    prisma.conversationStateChange.count({ where: { conversation: { workspaceId } } }),
    prisma.contact.findUniqueOrThrow({ where: { id: s.target.id }, include: { phones: { select: { number: true } }, channels: { select: { channelId: true } } } }),
    prisma.conversation.findUniqueOrThrow({ where: { id: s.conversationId } }),
  ]);
  return { contacts, messages, conversations, stateChanges, target, conversation };
}

// ───────────────────────────── the documented shapes ─────────────────────────────

const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const iso = z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const contactView = z.strictObject({
  id: uuid,
  name: z.string(),
  email: z.string().nullable(),
  phoneNumber: z.string().nullable(),
  isGroup: z.boolean(),
  createdAt: iso,
  updatedAt: iso,
  optOuts: z.array(z.strictObject({ channelId: uuid, at: iso, source: z.enum(['keyword', 'provider']) })),
});
const actor = z.strictObject({ type: z.enum(['channel', 'user', 'external', 'contact']), id: uuid.nullable(), name: z.string().nullable() });
const messageView = z.strictObject({
  id: uuid,
  conversationId: uuid,
  contactId: uuid,
  channelId: uuid,
  direction: z.enum(['outbound', 'inbound']),
  type: z.enum(['text', 'template']),
  body: z.string().nullable(),
  placeholder: z.literal('Encrypted message hidden').optional(),
  isEncrypted: z.boolean(),
  status: z.enum(['queued', 'sent', 'delivered', 'read', 'failed', 'received']),
  failureReason: z.string().nullable(),
  sender: actor,
  silent: z.boolean(),
  mediaUrls: z.array(z.string()),
  media: z.array(z.strictObject({ index: z.int(), contentType: z.string().nullable(), filename: z.string().nullable() })),
  broadcastId: uuid.nullable(),
  createdAt: iso,
});
const conversationView = z.strictObject({
  id: uuid,
  status: z.enum(['open', 'closed']),
  contactId: uuid,
  channelId: uuid,
  lastMessageAt: iso.nullable(),
  closedAt: iso.nullable(),
  createdAt: iso,
  stateChanges: z.array(z.strictObject({ type: z.enum(['opened', 'closed', 'reopened', 'assigned', 'unassigned']), at: iso, actor })),
  assignee: z.strictObject({ id: uuid, name: z.string(), email: z.string() }).nullable(),
  labels: z.array(z.string()),
  unreadCount: z.int().nonnegative(),
  lastReadAt: iso.nullable(),
  lastMessage: messageView.nullable(),
  assignedToMe: z.boolean(),
});
const channelView = z.strictObject({ id: uuid, name: z.string(), type: z.string(), status: z.string() });
const templateView = z.strictObject({
  id: uuid,
  name: z.string(),
  language: z.string(),
  category: z.string(),
  status: z.string(),
  body: z.string(),
  parameterCount: z.number().int(),
});
const collection = (item: z.ZodType) =>
  z.strictObject({ data: z.array(item), meta: z.strictObject({ per_page: z.number().int().min(1).max(100), next_cursor: z.string().nullable(), has_more: z.boolean() }) });
const errorBody = z.strictObject({ status: z.literal('error'), message: z.string().min(1) });
const validationBody = z.strictObject({
  message: z.string().min(1),
  errors: z.record(z.string(), z.array(z.string().min(1)).min(1)),
  conflict: z.strictObject({ field: z.string(), contactId: uuid }).optional(),
});

const SUCCESS: Record<string, { status: number; body: z.ZodType }> = {
  'POST /contacts': { status: 201, body: z.strictObject({ data: z.strictObject({ contact: contactView }) }) },
  'PATCH /contacts/:contact': { status: 200, body: z.strictObject({ data: z.strictObject({ contact: contactView }) }) },
  'GET /contacts/:contact': { status: 200, body: z.strictObject({ data: z.strictObject({ contact: contactView }) }) },
  'GET /conversations/:id': { status: 200, body: z.strictObject({ data: z.strictObject({ conversation: conversationView }) }) },
  'GET /contacts/find': { status: 200, body: z.strictObject({ data: z.strictObject({ contact: contactView }) }) },
  'POST /messages': { status: 202, body: z.strictObject({ data: z.strictObject({ message: messageView }) }) },
  'POST /conversations/:id': { status: 200, body: z.strictObject({ data: z.strictObject({ conversation: conversationView }) }) },
  'GET /contacts': { status: 200, body: collection(contactView) },
  'GET /messages': { status: 200, body: collection(messageView) },
  'GET /conversations': { status: 200, body: collection(conversationView) },
  'GET /templates': { status: 200, body: collection(templateView) },
  'GET /channels': { status: 200, body: collection(channelView) },
};

interface Outcome {
  status: number;
  text: string;
}

function describeRequest(request: unknown): string {
  const text = JSON.stringify(request) ?? String(request);
  return text.length > 600 ? `${text.slice(0, 600)}… (${text.length} characters)` : text;
}

/**
 * The three properties for one REST exchange. `changes`: whether a 2xx of this
 * route may change the workspace (reads never may).
 */
async function expectSafe(route: keyof typeof SUCCESS, request: unknown, before: Awaited<ReturnType<typeof snapshot>>, outcome: Outcome, changes: boolean) {
  const what = `${route} ${describeRequest(request)} → ${outcome.status} ${outcome.text.slice(0, 400)}`;
  expect(outcome.status, what).toBeLessThan(500);
  let body: unknown;
  try {
    body = JSON.parse(outcome.text);
  } catch {
    throw new Error(`not JSON: ${what}`);
  }
  if (outcome.status < 300) {
    const expected = SUCCESS[route]!;
    expect(outcome.status, what).toBe(expected.status);
    const parsed = expected.body.safeParse(body);
    expect(parsed.success, `${what}\n${parsed.error?.message}`).toBe(true);
  } else {
    const parsed = (outcome.status === 422 ? validationBody : errorBody).safeParse(body);
    expect(parsed.success, `${what}\n${parsed.error?.message}`).toBe(true);
  }
  if (outcome.status >= 400 || !changes) expect(await snapshot(), what).toEqual(before);
}

// ───────────────────────────── requests ─────────────────────────────

/** UTF-8 percent-encoding of any string, lone surrogates included (encodeURIComponent throws on those). */
function percentEncode(value: string): string {
  return Array.from(Buffer.from(value, 'utf8'), (byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

/**
 * JSON text of a value; strings `\u0001DEEP<n>\u0001` become `n` levels of nested
 * arrays and `\u0001OBJ<n>\u0001` `n` levels of nested objects, spliced into the
 * text (JSON.stringify itself would recurse that deep).
 */
function toJsonText(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/"\\u0001(DEEP|OBJ)(\d+)\\u0001"/g, (_, kind: string, n: string) =>
    kind === 'DEEP' ? `${'['.repeat(Number(n))}${']'.repeat(Number(n))}` : `${'{"__proto__":'.repeat(Number(n))}1${'}'.repeat(Number(n))}`,
  );
}

/** The Idempotency-Key to send with a generated body, if any. */
function keyFor(key: string | null): Record<string, string> {
  return key === null ? {} : { 'idempotency-key': key };
}

async function call(method: string, path: string, options: { body?: string; headers?: Record<string, string>; token?: string } = {}): Promise<Outcome> {
  const headers: Record<string, string> = { ...bearer(options.token ?? s.apiKey), ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers };
  const response = await app.fetch(s.host, `/api/connect${path}`, { method, headers, ...(options.body === undefined ? {} : { body: options.body }) });
  return { status: response.status, text: await response.text() };
}

// ───────────────────────────── hostile values ─────────────────────────────

const EDGE_STRINGS = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'An\u0000n',
  '\uD800',
  '\uDFFF',
  'Ann\uDBFF',
  '\uDC00Ann',
  '\uFFFF',
  '\uFFFE',
  '\u202Eevil\u202C',
  '\u200F\u200E\u061C',
  '\u00A0\u2028\u2029',
  '😀👩‍👩‍👧‍👦',
  'e\u0301\u0301\u0301\u0301',
  '\u0301\u0302',
  'Z\u0351\u0352\u0353\u0354\u0355\u0356\u0357\u0358\u0359',
  '\uFEFFAnn',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'null',
  "'; DROP TABLE contacts; --",
  '\\',
  '"',
  '%00',
  '%',
  '{{1}}',
  '+31612345678',
  '+٣١٦١٢٣٤٥٦٧٨',
  '+31 6 1234 5678',
  'a@b.co',
  'ann@exämple.com',
  'ANN@EXAMPLE.COM',
  'https://example.com/a.png',
  '00000000-0000-0000-0000-000000000000',
  '01A1FDD0-A631-76B3-83DB-27DF8AA4AA0F',
  'open',
  'closed',
  'text',
  'template',
];

const longString = fc.constantFrom(256, 4097, 65537, 200_000).chain((n) => fc.constantFrom('a', 'é', '😀', '\u0301', '\uD800').map((unit) => unit.repeat(n)));
const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EDGE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-composite', maxLength: 30 }) },
  { weight: 1, arbitrary: longString },
);
const deep = fc.integer({ min: 1000, max: 12_000 }).chain((n) => fc.constantFrom(`\u0001DEEP${n}\u0001`, `\u0001OBJ${n}\u0001`));
const scalar = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(0, -0, 1e308, -1, 2 ** 53 + 1, 1e-7),
);
const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'name', 'email', 'phone', 'to', 'contact', 'id', ''), fc.string({ maxLength: 8 }));
const { value: hostileValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    deep,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
}));

/** A field: a plausible value often enough to reach the writes, anything otherwise. */
/** A field of a body with many fields: plausible more often, so that whole bodies still get through. */
const mostly = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 6, arbitrary: plausible }, { weight: 1, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue });
const field = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 2, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue });
let serial = 0;
const freshEmail = fc.constant(null).map(() => `hostile-${Date.now().toString(36)}-${serial++}@example.com`);
const freshPhone = fc.constant(null).map(() => `+3161${String(1_000_000 + (serial++ % 8_999_999)).padStart(7, '0')}`);
const plausibleName = fc.constantFrom('Ann Smith', ' Bo ', 'Zoë 😀', 'عربي', 'e\u0301e\u0301');
/** Extra keys a body may carry: unsupported fields must be ignored, prototype keys must not bite. */
const extraKeys = fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'status', 'metadata', 'workspaceId', 'id', 'isGroup'), hostileValue, { maxKeys: 3 });

const body = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T, requiredKeys: (keyof T & string)[] = []) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.record(fields, { requiredKeys }), extraKeys).map(([known, extra]) => ({ ...extra, ...known })) },
    { weight: 1, arbitrary: hostileValue },
  );

const contactBody = body({ name: field(plausibleName), email: field(freshEmail), phone: field(freshPhone) });
const recipient = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null).map(() => s.target.id) },
  { weight: 1, arbitrary: hostileValue },
  body({ name: field(plausibleName), email: field(freshEmail), phone: field(freshPhone), contactId: hostileValue }),
);
const messageBody = body(
  {
    to: recipient,
    contact: recipient,
    sender: recipient,
    from: mostly(fc.constantFrom('Agent@Example.com', 'Bot')),
    type: mostly(fc.constantFrom('text', 'text', 'text', 'template')),
    message: mostly(fc.constantFrom('hello', 'ciphertext==')),
    is_encrypted: mostly(fc.boolean()),
    silent: mostly(fc.boolean()),
    template: mostly(fc.record({ name: mostly(fc.constant('order_ready')), language: mostly(fc.constant('en')), parameters: mostly(fc.constant(['Ann', '42'])) }, { requiredKeys: [] })),
    media_urls: mostly(fc.constant(['https://example.com/a.png'])),
  },
  ['message'],
);

const params = { numRuns: RUNS, endOnFailure: true } as const;

// ───────────────────────────── REST bodies ─────────────────────────────

describe('REST bodies', () => {
  it('POST /contacts', async () => {
    await fc.assert(
      fc.asyncProperty(contactBody, fc.option(fc.constantFrom('key-a', 'key-b')), async (value, idempotencyKey) => {
        const before = await snapshot();
        const text = toJsonText(value);
        const outcome = await call('POST', '/contacts', { body: text, headers: keyFor(idempotencyKey) });
        await expectSafe('POST /contacts', { body: text, idempotencyKey }, before, outcome, true);
      }),
      params,
    );
  });

  it('PATCH /contacts/{id}', async () => {
    await fc.assert(
      fc.asyncProperty(contactBody, fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: hostileString }), async (value, id) => {
        const before = await snapshot();
        const text = toJsonText(value);
        const path = `/contacts/${id === null ? s.target.id : percentEncode(id)}`;
        const outcome = await call('PATCH', path, { body: text });
        await expectSafe('PATCH /contacts/:contact', { path, body: text }, before, outcome, true);
      }),
      params,
    );
  });

  it('POST /messages', async () => {
    await fc.assert(
      fc.asyncProperty(messageBody, fc.option(fc.constantFrom('send-a', 'send-b')), async (value, idempotencyKey) => {
        const before = await snapshot();
        const text = toJsonText(value);
        const outcome = await call('POST', '/messages', { body: text, headers: keyFor(idempotencyKey) });
        await expectSafe('POST /messages', { body: text, idempotencyKey }, before, outcome, true);
      }),
      params,
    );
  });

  it('POST /conversations/{id}/close and /reopen', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('close', 'reopen'),
        fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: hostileString }),
        fc.option(hostileValue),
        async (action, id, value) => {
          const before = await snapshot();
          const path = `/conversations/${id === null ? s.conversationId : percentEncode(id)}/${action}`;
          const text = value === null ? undefined : toJsonText(value);
          const outcome = await call('POST', path, text === undefined ? {} : { body: text });
          await expectSafe('POST /conversations/:id', { path, body: text }, before, outcome, true);
        },
      ),
      params,
    );
  });
});

// ───────────────────────────── query strings ─────────────────────────────

const LIST_QUERIES: Record<string, string[]> = {
  '/contacts': ['limit', 'cursor', 'search'],
  '/messages': ['limit', 'cursor', 'search', 'contact_id', 'conversation_id'],
  '/conversations': ['limit', 'cursor', 'status', 'contact_id'],
  '/templates': ['limit', 'cursor'],
  '/channels': ['limit', 'cursor'],
  '/contacts/find': ['email', 'phone'],
};

const queryValue = fc.oneof(
  hostileString,
  fc.constantFrom('0', '1', '100', '101', '-1', '1e2', '0x10', ' 5', '5 ', '25.0', '99999999999999999999', 'NaN', 'Infinity'),
  fc.constantFrom('open', 'closed', 'OPEN', 'target@example.com', '+31612340000', ' 31612340000', 'MjAyNC0wMS0wMVQwMDowMDowMC4wMDBafDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMA'),
  fc.constant(null).map(() => s.target.id),
  fc.constant(null).map(() => s.conversationId),
);

describe('REST query strings', () => {
  it('every parameter of the list and find routes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(LIST_QUERIES)).chain((path) =>
          fc.tuple(fc.constant(path), fc.array(fc.tuple(fc.constantFrom(...LIST_QUERIES[path]!), queryValue), { maxLength: 4 })),
        ),
        async ([path, pairs]) => {
          const before = await snapshot();
          const query = pairs.map(([name, value]) => `${name}=${percentEncode(value)}`).join('&');
          const outcome = await call('GET', `${path}?${query}`);
          const route = path === '/contacts/find' ? 'GET /contacts/find' : (`GET ${path}` as keyof typeof SUCCESS);
          await expectSafe(route, { path, pairs }, before, outcome, false);
        },
      ),
      params,
    );
  });

  it('a read by a hostile id', async () => {
    await fc.assert(
      // An empty id is the list route itself (a trailing slash is ignored), and `.` and
      // `..` are dot segments that every URL client resolves before sending.
      fc.asyncProperty(hostileString.filter((id) => !['', '.', '..'].includes(id)), fc.constantFrom('/contacts/', '/conversations/'), async (id, prefix) => {
        const before = await snapshot();
        const outcome = await call('GET', `${prefix}${percentEncode(id)}`);
        expect(outcome.status, `${prefix}${JSON.stringify(id).slice(0, 200)} → ${outcome.text}`).toBe(404);
        await expectSafe(prefix === '/contacts/' ? 'GET /contacts/:contact' : 'GET /conversations/:id', { prefix, id }, before, outcome, false);
      }),
      params,
    );
  });
});

// ───────────────────────────── headers ─────────────────────────────

/** Header values as an HTTP client can send them: Latin-1 bytes without CR, LF or NUL. */
const headerText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.constantFrom('', ' ', 'Bearer', 'Bearer ', 'bearer  x', 'Basic dXNlcjpwYXNz', '\u00ff\u00fe', 'a'.repeat(8000)),
);
const headerCases = fc.record(
  {
    authorization: fc.oneof(
      fc.constant(null).map(() => `Bearer ${s.apiKey}`),
      fc.constant(null).map(() => `bearer\t${s.apiKey} `),
      fc.constant(null).map(() => `Bearer ${s.apiKey.slice(0, -1)}x`),
      fc.constant(null).map(() => `Bearer ${s.connection.token}`),
      headerText.map((t) => `Bearer ${t}`),
      headerText,
    ),
    'x-channel-uuid': fc.oneof(
      fc.constant(null).map(() => s.channel.id),
      fc.constant(null).map(() => s.channel.id.toUpperCase()),
      fc.constant(null).map(() => ` ${s.sibling.channel.id} `),
      headerText,
    ),
    'idempotency-key': headerText,
    'content-type': fc.oneof(fc.constantFrom('application/json', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded'), headerText),
  },
  { requiredKeys: [] },
);

describe('headers', () => {
  it('Authorization, X-Channel-Uuid, Idempotency-Key and Content-Type', async () => {
    await fc.assert(
      fc.asyncProperty(headerCases, fc.constantFrom('GET /contacts', 'POST /contacts', 'GET /channels'), contactBody, async (headers, route, value) => {
        const before = await snapshot();
        const [method, path] = route.split(' ') as [string, string];
        const { 'idempotency-key': key, ...others } = headers as Record<string, string>;
        const init: RequestInit = { method, headers: { accept: 'application/json', ...others, ...keyFor(key ?? null) } };
        if (method === 'POST') init.body = toJsonText(value);
        const response = await app.fetch(s.host, `/api/connect${path}`, init);
        const outcome = { status: response.status, text: await response.text() };
        await expectSafe(route as keyof typeof SUCCESS, { headers, body: init.body }, before, outcome, method === 'POST');
      }),
      params,
    );
  });

  it('Host', async () => {
    // TestApp.fetch derives the URL from the host, so a host no URL can hold goes through the app directly.
    const yoga = createApp({ db: app.db, env: app.env, logger: createLogger(app.env, new Writable({ write: (_c, _e, done) => done() })) });
    try {
      const hostValue = fc.oneof(
        headerText,
        fc.constantFrom('', ':', ':80', '[', '[::1]', '[::1]:4000', `${s.host}.`, `${s.host}:`, `${s.host}:99999`, s.host.toUpperCase(), `${s.host}, evil.test`, `${'a.'.repeat(2000)}test`),
      );
      await fc.assert(
        fc.asyncProperty(hostValue, fc.constantFrom('/api/connect/contacts', '/graphql'), async (host, path) => {
          const before = await snapshot();
          const headers = new Headers({ ...bearer(s.apiKey), host, 'content-type': 'application/json' });
          const response = await yoga.fetch(`http://connect.invalid${path}`, {
            method: path === '/graphql' ? 'POST' : 'GET',
            headers,
            ...(path === '/graphql' ? { body: JSON.stringify({ query: '{ viewer { workspace { id } } }' }) } : {}),
          });
          const text = await response.text();
          const what = `Host ${JSON.stringify(host).slice(0, 200)} ${path} → ${response.status} ${text.slice(0, 300)}`;
          expect(response.status, what).toBeLessThan(500);
          // The workspace host, in any case or with a valid port or a trailing dot, is the only one that authenticates.
          const port = /:(\d*)$/.exec(host)?.[1];
          const ours = host.toLowerCase().replace(/:\d*$/, '').replace(/\.$/, '') === s.host && !(port && (port.length > 5 || Number(port) > 65535));
          expect(response.status, what).toBe(ours ? 200 : 401);
          expect(await snapshot(), what).toEqual(before);
        }),
        params,
      );
    } finally {
      await yoga.dispose();
    }
  });
});

// ───────────────────────────── sizes and nesting, by example ─────────────────────────────

describe('sizes and nesting', () => {
  const LIMIT = 1024 * 1024;
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const nestedObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  /** A JSON object of exactly `size` bytes: `{"name":"xxx…"}` plus the given fields. */
  const sized = (size: number, rest = '') => {
    const shell = `{${rest}"name":""}`;
    return `{${rest}"name":"${'x'.repeat(size - shell.length)}"}`;
  };

  const examples: [string, string, string, Record<string, string>?][] = [
    ['POST /contacts', '/contacts', `{"name":${nested(10_000)}}`],
    ['POST /contacts', '/contacts', `{"name":"Ann","email":"deep@example.com","extra":${nested(100_000)}}`],
    ['POST /contacts', '/contacts', `{"name":"Ann","email":"deep3@example.com","extra":${nestedObject(10_000)}}`],
    ['PATCH /contacts/:contact', '/contacts/TARGET', `{"name":${nestedObject(10_000)}}`],
    ['PATCH /contacts/:contact', '/contacts/TARGET', nested(50_000)],
    ['POST /messages', '/messages', `{"to":${nestedObject(10_000)},"message":"hi"}`],
    ['POST /messages', '/messages', `{"to":"TARGET","message":"hi","template":{"name":"order_ready","parameters":${nested(10_000)}}}`],
    ['POST /messages', '/messages', `{"to":"TARGET","message":"hi","media_urls":${nested(10_000)}}`],
    ['POST /messages', '/messages', `{"to":"TARGET","message":"hi","ignored":${nested(10_000)}}`],
    ['POST /messages', '/messages', `{"to":"TARGET","message":"hi","media_urls":[${Array(150_000).fill('"https://e.co/a"').join(',')}]}`],
    ['POST /messages', '/messages', `{"to":"TARGET","type":"template","template":{"name":"order_ready","parameters":[${Array(200_000).fill('"a"').join(',')}]}}`],
    ['POST /contacts', '/contacts', sized(LIMIT)],
    ['POST /contacts', '/contacts', sized(LIMIT + 1)],
    ['POST /messages', '/messages', sized(LIMIT, '"to":"TARGET","message":"hi",')],
    ['POST /messages', '/messages', sized(LIMIT + 1, '"to":"TARGET","message":"hi",')],
    ['POST /contacts', '/contacts', sized(4 * LIMIT)],
    ['POST /conversations/:id', '/conversations/CONVERSATION/close', nested(10_000)],
  ];

  for (const [route, rawPath, rawBody, headers] of examples) {
    const label = `${route} ${rawBody.length} bytes ${rawBody.slice(0, 40)}${headers ? ` ${JSON.stringify(headers)}` : ''}`;
    it(label, async () => {
      const path = rawPath.replace('TARGET', s.target.id).replace('CONVERSATION', s.conversationId);
      const text = rawBody.replace('"TARGET"', JSON.stringify(s.target.id));
      const before = await snapshot();
      const method = route.split(' ')[0]!;
      const outcome = await call(method, path, { body: text, ...(headers ? { headers } : {}) });
      const bytes = Buffer.byteLength(text);
      if (bytes > LIMIT) expect(outcome.status, outcome.text).toBe(413);
      await expectSafe(route as keyof typeof SUCCESS, label, before, outcome, true);
    });
  }

  it('a chunked body over the limit, without Content-Length, is 413', async () => {
    const before = await snapshot();
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"'));
      },
      pull(controller) {
        if (sent++ > 20) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await app.fetch(s.host, '/api/connect/contacts', {
      method: 'POST',
      headers: { ...bearer(s.apiKey), 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await snapshot()).toEqual(before);
  });

  it('GraphQL: a deeply nested variable and a body over the limit', async () => {
    const before = await snapshot();
    for (const [text, expected] of [
      [`{"query":"mutation($input: CreateContactInput!) { createContact(input: $input) { contact { id } } }","variables":{"input":{"name":${nested(10_000)}}}}`, 'refused'],
      [`{"query":"mutation($input: CreateContactInput!) { createContact(input: $input) { contact { id } } }","variables":{"input":${nestedObject(10_000)}}}`, 'refused'],
      [`{"query":"query($s: String) { contacts(search: $s) { edges { cursor } } }","variables":{"s":"${'x'.repeat(LIMIT)}"}}`, 413],
    ] as const) {
      const response = await app.fetch(s.host, '/graphql', { method: 'POST', headers: { ...bearer(s.apiKey), 'content-type': 'application/json' }, body: text });
      const answer = await response.text();
      expect(response.status, answer.slice(0, 300)).toBeLessThan(500);
      if (expected === 413) expect(response.status).toBe(413);
      else expect(answer).not.toContain('INTERNAL_SERVER_ERROR');
    }
    expect(await snapshot()).toEqual(before);
  });
});

// ───────────────────────────── GraphQL variables ─────────────────────────────

const contactFields = 'id name email phoneNumber isGroup createdAt updatedAt';
const gqlContact = z.strictObject({ id: uuid, name: z.string(), email: z.string().nullable(), phoneNumber: z.string().nullable(), isGroup: z.boolean(), createdAt: iso, updatedAt: iso });
const gqlMessage = z.strictObject({ id: uuid, body: z.string().nullable(), isEncrypted: z.boolean(), mediaUrls: z.array(z.string()), conversationId: uuid });
const userErrors = z.array(z.strictObject({ field: z.array(z.string()).min(1), message: z.string().min(1), code: z.enum(['INVALID', 'TAKEN', 'NOT_FOUND']) }));
const connection = (node: z.ZodType) =>
  z.strictObject({ edges: z.array(z.strictObject({ cursor: z.string(), node })), pageInfo: z.strictObject({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }) });

/** A GraphQL variable: usually of its declared type, so that runs get past coercion into the services. */
const typed = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 3, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue });
const typedInt = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -5, max: 120 }) }, { weight: 1, arbitrary: fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 1.5, 1e308) }, { weight: 1, arbitrary: hostileValue });
/** An input object: its own fields mostly, now and then an unknown field or no object at all. */
const input = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.record(fields, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.tuple(fc.record(fields, { requiredKeys: [] }), extraKeys).map(([known, extra]) => ({ ...extra, ...known })) },
    { weight: 1, arbitrary: hostileValue },
  );
const targetId = fc.constant(null).map(() => s.target.id);
const typedMostly = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 8, arbitrary: plausible }, { weight: 1, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue });
const recipientInput = fc.oneof(
  { weight: 8, arbitrary: fc.record({ contactId: typedMostly(targetId), name: typedMostly(plausibleName), email: typedMostly(freshEmail), phone: typedMostly(freshPhone) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: hostileValue },
);

const OPERATIONS: Record<string, { document: string; variables: fc.Arbitrary<Record<string, unknown>>; field: string; object?: string; shape: z.ZodType }> = {
  createContact: {
    document: `mutation ($input: CreateContactInput!) { createContact(input: $input) { contact { ${contactFields} } userErrors { field message code } } }`,
    variables: fc.record({ input: input({ name: typed(plausibleName), email: typed(freshEmail), phone: typed(freshPhone) }) }, { requiredKeys: ['input'] }),
    field: 'createContact',
    object: 'contact',
    shape: z.strictObject({ contact: gqlContact.nullable(), userErrors }),
  },
  updateContact: {
    document: `mutation ($id: ID!, $input: UpdateContactInput!) { updateContact(id: $id, input: $input) { contact { ${contactFields} } userErrors { field message code } } }`,
    variables: fc.record(
      { id: fc.oneof({ weight: 3, arbitrary: targetId }, { weight: 1, arbitrary: hostileValue }), input: input({ name: typed(plausibleName), email: typed(freshEmail), phone: typed(freshPhone) }) },
      { requiredKeys: ['id', 'input'] },
    ),
    field: 'updateContact',
    object: 'contact',
    shape: z.strictObject({ contact: gqlContact.nullable(), userErrors }),
  },
  sendMessage: {
    document: `mutation ($input: SendMessageInput!) { sendMessage(input: $input) { message { id body isEncrypted mediaUrls conversationId } userErrors { field message code } } }`,
    variables: fc.record(
      {
        input: input({
          to: recipientInput,
          contact: recipientInput,
          sender: recipientInput,
          from: typedMostly(fc.constantFrom('Bot', 'Agent@Example.com')),
          type: typedMostly(fc.constantFrom('text', 'text', 'text', 'template')),
          message: typedMostly(fc.constant('hello')),
          isEncrypted: typedMostly(fc.boolean()),
          silent: typedMostly(fc.boolean()),
          template: typedMostly(
            fc.record({ name: typed(fc.constant('order_ready')), language: typed(fc.constant('en')), parameters: typed(fc.array(hostileString, { maxLength: 3 })) }, { requiredKeys: ['name', 'parameters'] }),
          ),
          mediaUrls: typedMostly(fc.array(fc.oneof(fc.constant('https://example.com/a.png'), hostileString), { maxLength: 3 })),
        }),
      },
      { requiredKeys: ['input'] },
    ),
    field: 'sendMessage',
    object: 'message',
    shape: z.strictObject({ message: gqlMessage.nullable(), userErrors }),
  },
  contacts: {
    document: `query ($first: Int, $after: String, $search: String) { contacts(first: $first, after: $after, search: $search) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`,
    variables: fc.record({ first: typedInt, after: typed(fc.constant('')), search: typed(fc.constant('Target')) }, { requiredKeys: [] }),
    field: 'contacts',
    shape: connection(z.strictObject({ id: uuid })),
  },
  messages: {
    document: `query ($first: Int, $after: String, $search: String, $contactId: ID, $conversationId: ID) {
      messages(first: $first, after: $after, search: $search, contactId: $contactId, conversationId: $conversationId) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
    }`,
    variables: fc.record(
      {
        first: typedInt,
        after: typed(fc.constant('')),
        search: typed(fc.constant('first')),
        contactId: typed(targetId),
        conversationId: typed(fc.constant(null).map(() => s.conversationId)),
      },
      { requiredKeys: [] },
    ),
    field: 'messages',
    shape: connection(z.strictObject({ id: uuid })),
  },
  conversations: {
    document: `query ($first: Int, $after: String, $status: ConversationStatus, $contactId: ID) {
      conversations(first: $first, after: $after, status: $status, contactId: $contactId) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
    }`,
    variables: fc.record({ first: typedInt, after: typed(fc.constant('')), status: typed(fc.constantFrom('open', 'closed')), contactId: typed(targetId) }, { requiredKeys: [] }),
    field: 'conversations',
    shape: connection(z.strictObject({ id: uuid })),
  },
};

describe('GraphQL variables', () => {
  for (const [name, operation] of Object.entries(OPERATIONS)) {
    it(name, async () => {
      await fc.assert(
        fc.asyncProperty(operation.variables, async (variables) => {
          const before = await snapshot();
          const text = `{"query":${JSON.stringify(operation.document)},"variables":${toJsonText(variables)}}`;
          const response = await app.fetch(s.host, '/graphql', {
            method: 'POST',
            headers: { ...bearer(s.apiKey), 'content-type': 'application/json', accept: 'application/graphql-response+json' },
            body: text,
          });
          const answer = await response.text();
          const what = `${name} ${describeRequest(text)} → ${response.status} ${answer.slice(0, 400)}`;
          expect(response.status, what).toBeLessThan(500);
          const result = JSON.parse(answer) as { data?: Record<string, any> | null; errors?: { extensions?: { code?: string } }[] };
          for (const error of result.errors ?? []) expect(error.extensions?.code, what).not.toBe('INTERNAL_SERVER_ERROR');
          const value = result.data?.[operation.field];
          if (value != null) {
            const parsed = operation.shape.safeParse(value);
            expect(parsed.success, `${what}\n${parsed.error?.message}`).toBe(true);
          }
          const applied = operation.object !== undefined && value?.[operation.object] != null;
          if (applied) {
            expect(value.userErrors, what).toEqual([]);
            expect(result.errors, what).toBeUndefined();
          } else {
            expect(await snapshot(), what).toEqual(before);
          }
        }),
        params,
      );
    });
  }
});

describe('deep bodies under an Idempotency-Key', () => {
  // The request hash walks the body; a body may nest far deeper than the call stack.
  it('POST /contacts with an Idempotency-Key and an ignored field nested 10 000 levels deep is not a 5xx', async () => {
    const before = await snapshot();
    const text = `{"name":"Ann","email":"deep-key@example.com","extra":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const outcome = await call('POST', '/contacts', { body: text, headers: { 'idempotency-key': 'deep-body' } });
    await expectSafe('POST /contacts', 'deep body with Idempotency-Key', before, outcome, true);
  });
});
