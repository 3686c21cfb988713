import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_FOR_ANY_VALUE } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { encodeCursor } from '../../src/lib/pagination.js';
import { createTestApp, onPostgres, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
import { freshDatabase } from '../helpers/fresh-database.js';
import { executeOperation } from '../helpers/graphql.js';
import { restClient } from '../helpers/rest.js';
import { testWorker } from '../helpers/worker.js';

/**
 * The plans PostgreSQL chooses for the SQL every list and search really sends,
 * on a database large enough that reading a whole table costs more than using an
 * index. A sequential scan of a large table fails the test, with the plan.
 *
 * Each case sends its request, hears every statement the app runs for it (with
 * its parameters) and asks EXPLAIN how each would be run with those values.
 */

/** Tables whose size grows with the traffic: never to be read whole by a request. */
const LARGE_TABLES = new Set(['contacts', 'contact_phones', 'contact_channels', 'conversations', 'conversation_state_changes', 'messages', 'deliveries']);

/** Per workspace: contacts, each with a phone, a channel link and a conversation; messages spread over them. */
const CONTACTS = 30_000;
const MESSAGES = 60_000;

interface Statement {
  sql: string;
  params: unknown[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

let app: TestApp;
let drop: () => Promise<void>;
let heard: Statement[] | null = null;
let ws: Awaited<ReturnType<typeof workspaceWithChannel>>;
/** Rows of the seeded data that cases name: a contact, its conversation, deep cursors. */
const known: Record<string, string> = {};

/**
 * Contacts, phones, channel links, conversations (one in five closed) with their
 * state changes, messages and their deliveries, for the workspace `wsId` and its
 * channel; `tag` keeps phones unique per workspace.
 */
function seedSql(wsId: string, channelId: string, tag: string): string {
  const first = `(ARRAY['Emma','Liam','Olivia','Noah','Ava','Lucas','Mia','Levi','Sophie','Daan','Julia','Sem','Anna','Finn','Lotte','Milan','Sara','Jesse','Eva','Luuk'])`;
  const last = `(ARRAY['Jansen','de Vries','Bakker','Visser','Smit','Meijer','Mulder','de Boer','Bos','Vos','Peters','Hendriks','Dekker','Brouwer','Dijkstra','Smits','Kok','Jacobs','Koster','Prins'])`;
  const topic = `(ARRAY['headphones','laptop','charger','keyboard','monitor','printer','camera','tablet','speaker','router'])`;
  return `
    CREATE TEMP TABLE seed_contact ON COMMIT DROP AS
      SELECT i, gen_random_uuid() AS id, now() - (${CONTACTS} - i) * interval '1 minute' AS at,
             ${first}[1 + i % 20] || ' ' || ${last}[1 + (i / 20) % 20] AS name
        FROM generate_series(1, ${CONTACTS}) AS i;
    INSERT INTO contacts (id, workspace_id, name, email, email_normalized, phone, deleted_at, created_at, updated_at)
      SELECT id, '${wsId}', name, lower(replace(name, ' ', '.')) || '.' || i || '@example.com',
             lower(replace(name, ' ', '.')) || '.' || i || '@example.com', '+${tag}' || lpad(i::text, 8, '0'),
             CASE WHEN i % 100 = 37 THEN at END, at, at
        FROM seed_contact;
    INSERT INTO contact_phones (id, workspace_id, contact_id, number, contact_deleted, created_at)
      SELECT gen_random_uuid(), '${wsId}', id, '+${tag}' || lpad(i::text, 8, '0'), i % 100 = 37, at FROM seed_contact;
    INSERT INTO contact_channels (contact_id, channel_id, created_at) SELECT id, '${channelId}', at FROM seed_contact;
    CREATE TEMP TABLE seed_conversation ON COMMIT DROP AS
      SELECT i, gen_random_uuid() AS id, c.id AS contact_id, c.at + interval '10 seconds' AS at, i % 5 = 0 AS closed
        FROM seed_contact c;
    INSERT INTO conversations (id, workspace_id, channel_id, contact_id, status, closed_at, created_at, updated_at)
      SELECT id, '${wsId}', '${channelId}', contact_id, CASE WHEN closed THEN 'closed' ELSE 'open' END::conversation_status,
             CASE WHEN closed THEN at + interval '1 hour' END, at, at
        FROM seed_conversation;
    INSERT INTO conversation_state_changes (id, conversation_id, type, actor_type, actor_channel_id, created_at)
      SELECT gen_random_uuid(), id, 'opened'::conversation_state_change_type, 'channel'::actor_type, '${channelId}'::uuid, at FROM seed_conversation
      UNION ALL
      SELECT gen_random_uuid(), id, 'closed', 'channel', '${channelId}', at + interval '1 hour' FROM seed_conversation WHERE closed;
    CREATE TEMP TABLE seed_message ON COMMIT DROP AS
      SELECT j, gen_random_uuid() AS id, v.id AS conversation_id, v.contact_id, v.at + (j / ${CONTACTS}) * interval '1 second' AS at,
             'Hello, your order about the ' || ${topic}[1 + j % 10] || ' has shipped (ref r' || j || ').' AS body
        FROM generate_series(1, ${MESSAGES}) AS j JOIN seed_conversation v ON v.i = 1 + j % ${CONTACTS};
    INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, body, sender_type, sender_channel_id, status, created_at, updated_at)
      SELECT id, '${wsId}', '${channelId}', conversation_id, contact_id, body, 'channel', '${channelId}', 'delivered', at, at FROM seed_message;
    INSERT INTO deliveries (id, workspace_id, message_id, status, attempts, run_at, created_at, updated_at)
      SELECT gen_random_uuid(), '${wsId}', id, CASE WHEN j % 1000 = 0 THEN 'pending' ELSE 'succeeded' END::delivery_status,
             1, at, at, at
        FROM seed_message;
    INSERT INTO channel_templates (id, workspace_id, channel_id, name, language, body, parameter_count, created_at, updated_at)
      SELECT gen_random_uuid(), '${wsId}', '${channelId}', 'template_' || t, 'en', 'Hi {{1}}', 1, now() - t * interval '1 day', now()
        FROM generate_series(1, 40) AS t;`;
}

beforeAll(async () => {
  if (!onPostgres) return;
  // The database hands every listener the statement's parameters too (QueryListener).
  const fresh = await freshDatabase({ onQuery: (sql: string, ...rest: unknown[]) => void heard?.push({ sql, params: (rest[0] as unknown[]) ?? [] }) });
  drop = fresh.drop;
  await fresh.db.withSession((session) => migrate(session));
  app = await createTestApp({}, fresh.db);
  ws = await workspaceWithChannel(app.db.prisma);
  // Another tenant of the same size: every query must also pick its workspace's rows out of the others'.
  const other = await workspaceWithChannel(app.db.prisma);
  await app.db.withSession(async (session) => {
    await session.exec(`BEGIN; ${seedSql(ws.workspace.id, ws.channel.id, '3161')} COMMIT;`);
    await session.exec(`BEGIN; ${seedSql(other.workspace.id, other.channel.id, '4479')} COMMIT;`);
    // Statistics from every row, not a sample: the plans are those of these rows on every run.
    await session.exec('SET default_statistics_target = 1000');
    await session.exec('VACUUM (ANALYZE)');
    await session.exec('RESET default_statistics_target');
    const [contact] = await session.query<{ id: string }>(
      `SELECT id FROM contacts WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC OFFSET 10 LIMIT 1`,
      [ws.workspace.id],
    );
    const [conversation] = await session.query<{ id: string }>(`SELECT id FROM conversations WHERE contact_id = $1`, [contact!.id]);
    const [message] = await session.query<{ id: string }>(`SELECT id FROM messages WHERE conversation_id = $1 LIMIT 1`, [conversation!.id]);
    known.contactId = contact!.id;
    known.conversationId = conversation!.id;
    known.messageId = message!.id;
    for (const table of ['contacts', 'messages', 'conversations']) {
      const live = table === 'contacts' ? 'AND deleted_at IS NULL' : '';
      const [row] = await session.query<{ id: string; created_at: Date }>(
        `SELECT id, created_at FROM ${table} WHERE workspace_id = $1 ${live} ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [ws.workspace.id, Math.floor(CONTACTS * 0.9)],
      );
      known[`${table}Deep`] = encodeCursor({ createdAt: row!.created_at, id: row!.id });
      // A cursor near the start, for a backward page that walks towards the newest rows.
      const [early] = await session.query<{ id: string; created_at: Date }>(
        `SELECT id, created_at FROM ${table} WHERE workspace_id = $1 ${live} ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [ws.workspace.id, Math.floor(CONTACTS * 0.1)],
      );
      known[`${table}Early`] = encodeCursor({ createdAt: early!.created_at, id: early!.id });
    }
  });
}, 300_000);

afterAll(async () => {
  if (!onPostgres) return;
  await app?.close();
  await drop?.();
});

/** Runs `request` and returns every statement the app sent meanwhile. */
async function hear(request: () => Promise<void>): Promise<Statement[]> {
  heard = [];
  try {
    await request();
    return heard;
  } finally {
    heard = null;
  }
}

/** A plan's nodes, its subplans' included. */
function nodes(node: PlanNode, found: PlanNode[] = []): PlanNode[] {
  found.push(node);
  for (const child of node.Plans ?? []) nodes(child, found);
  return found;
}

/**
 * EXPLAIN each read or write statement with its own parameters, and a search kept
 * prepared whatever its term (PLAN_FOR_ANY_VALUE) with the generic plan PostgreSQL
 * may settle on for it as well. Returns every sequential scan of a large table
 * (with its statement and plan) and the indexes the plans use.
 */
async function explain(statements: Statement[]): Promise<{ failures: string[]; indexes: Set<string>; genericIndexes: Set<string> }> {
  const failures: string[] = [];
  const indexes = new Set<string>();
  const genericIndexes = new Set<string>();
  await app.db.withSession(async (session) => {
    const check = async (sql: string, params: unknown[], explained: string, generic: boolean) => {
      const [row] = await session.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${explained}`, params);
      const plan = nodes(row!['QUERY PLAN'][0].Plan);
      for (const node of plan) if (node['Index Name']) (generic ? genericIndexes : indexes).add(node['Index Name']);
      const seq = plan.filter((n) => n['Node Type'] === 'Seq Scan' && LARGE_TABLES.has(n['Relation Name']!));
      if (!seq.length) return;
      const text = await session.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${explained}`, params);
      failures.push(
        [
          `Seq Scan on ${seq.map((n) => n['Relation Name']).join(', ')}${generic ? ' (the generic plan)' : ''}`,
          sql.replace(/"public"\./g, '').replace(/\s+/g, ' '),
          `parameters: ${JSON.stringify(params)}`,
          ...text.map((r) => r['QUERY PLAN']),
        ].join('\n'),
      );
    };
    for (const { sql, params } of statements) {
      if (!/^\s*(SELECT|WITH|UPDATE|DELETE)\b/i.test(sql)) continue;
      await check(sql, params, sql, false);
      if (!sql.includes(PLAN_FOR_ANY_VALUE)) continue;
      await session.exec(`SET plan_cache_mode = force_generic_plan; PREPARE generic_plan AS ${sql}`);
      try {
        // A generic plan is made without the values (EXECUTE takes no parameters of its own).
        await check(sql, [], `EXECUTE generic_plan(${params.map(() => 'NULL').join(', ')})`, true);
      } finally {
        await session.exec('DEALLOCATE generic_plan; RESET plan_cache_mode');
      }
    }
  });
  return { failures, indexes, genericIndexes };
}

const rest = (path: () => string) => async () => {
  const result = await restClient(app, ws.host, ws.apiKey).get(path());
  expect(result.status, JSON.stringify(result.body)).toBe(200);
};

/**
 * Untyped documents: only the SQL they cause is examined, not their data. Not
 * named `gql` or `graphql`, which codegen would take for typed documents.
 */
const operation = (query: string, variables: () => Record<string, unknown> = () => ({})) => async () => {
  const result = await executeOperation<unknown, Record<string, unknown>>(app, ws.host, bearer(ws.apiKey), parse(query), variables());
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
};

const CONTACT_FIELDS = 'edges { cursor node { id name email phoneNumber createdAt } } pageInfo { hasNextPage endCursor }';
const MESSAGE_FIELDS =
  'edges { cursor node { id body status sender { type id name } contact { id name } conversation { id status } } } pageInfo { hasNextPage endCursor }';

/**
 * Each list and search, through each transport, as a client sends it; `uses`
 * names indexes its plan must use (a selective search is served by its index).
 * A one- or two-character contact search is not here: no index can narrow a
 * substring that short, so PostgreSQL reads the workspace's contacts (or the
 * table) whichever way it finds cheaper (docs/search.md).
 */
const cases: [string, () => Promise<void>, { uses?: string[]; usesPrepared?: string[] }?][] = [
  ['GET /contacts', rest(() => '/contacts')],
  ['GET /contacts, a deep page', rest(() => `/contacts?cursor=${known.contactsDeep}`)],
  ['GET /contacts?search= part of an email', rest(() => '/contacts?search=jansen.1200%40'), { uses: ['contacts_name_trgm_idx', 'contacts_email_trgm_idx'] }],
  ['GET /contacts?search= a name', rest(() => '/contacts?search=Lotte%20Smits')],
  ['GET /contacts?search= phone digits', rest(() => '/contacts?search=00012345'), { uses: ['contact_phones_number_trgm_idx'] }],
  ['GET /contacts?search= a common term', rest(() => '/contacts?search=example')],
  ['GET /contacts?search=, a deep page', rest(() => `/contacts?search=bakker&cursor=${known.contactsDeep}`)],
  ['GET /messages', rest(() => '/messages')],
  ['GET /messages, a deep page', rest(() => `/messages?cursor=${known.messagesDeep}`)],
  ['GET /messages?conversation_id=', rest(() => `/messages?conversation_id=${known.conversationId}`)],
  ['GET /messages?contact_id=', rest(() => `/messages?contact_id=${known.contactId}`)],
  ['GET /messages?search= a rare word', rest(() => '/messages?search=r12345')],
  ['GET /messages?search= a common word', rest(() => '/messages?search=shipped')],
  ['GET /conversations', rest(() => '/conversations')],
  ['GET /conversations, a deep page', rest(() => `/conversations?cursor=${known.conversationsDeep}`)],
  ['GET /conversations?status=closed', rest(() => '/conversations?status=closed')],
  ['GET /conversations?contact_id=', rest(() => `/conversations?contact_id=${known.contactId}`)],
  ['GET /conversations?sort=last_message', rest(() => '/conversations?sort=last_message')],
  ['GET /conversations?unread=true', rest(() => '/conversations?unread=true')],
  ['GET /conversations?label=', rest(() => '/conversations?label=vip')],
  ['GET /conversations?assignee= a user', rest(() => '/conversations?assignee=0190a5b0-0000-7000-8000-000000000000')],
  ['GET /conversations?assignee=none', rest(() => '/conversations?assignee=none')],
  ['GET /conversations?search= a name', rest(() => '/conversations?search=Lotte%20Smits')],
  // A rare word is read from its matches (the full-text index), never by walking the channel's conversations in order.
  // Prepared, its generic plan is the same: the matches through the index, their conversations by key.
  [
    'GET /conversations?search= a rare word',
    rest(() => '/conversations?search=r12345'),
    { uses: ['messages_search_vector_idx'], usesPrepared: ['messages_search_vector_idx', 'conversations_pkey'] },
  ],
  [
    'GraphQL conversations: the inbox page, its assignees, contacts and newest messages joined',
    operation(
      `{ conversations(first: 25, sort: last_message, unread: true) { edges { node { id unreadCount labels assignee { id name email }
           contact { id name phoneNumber } lastMessage { id body sender { type id name } } } } pageInfo { hasNextPage endCursor } } }`,
    ),
  ],
  ['GET /templates', rest(() => '/templates')],
  ['GET /channels', rest(() => '/channels')],
  ['GraphQL contacts', operation(`{ contacts(first: 25) { ${CONTACT_FIELDS} } }`)],
  ['GraphQL contacts, a deep page', operation(`query($after: String) { contacts(first: 25, after: $after) { ${CONTACT_FIELDS} } }`, () => ({ after: known.contactsDeep }))],
  [
    'GraphQL contacts(search:)',
    operation(`{ contacts(first: 25, search: "jansen.1200@") { ${CONTACT_FIELDS} } }`),
    { uses: ['contacts_email_trgm_idx'] },
  ],
  ['GraphQL messages', operation(`{ messages(first: 25) { ${MESSAGE_FIELDS} } }`)],
  ['GraphQL messages(search:)', operation(`{ messages(first: 25, search: "r12345") { ${MESSAGE_FIELDS} } }`)],
  [
    'GraphQL messages(conversationId:, contactId:)',
    operation(`query($c: ID, $k: ID) { a: messages(conversationId: $c) { ${MESSAGE_FIELDS} } b: messages(contactId: $k) { ${MESSAGE_FIELDS} } }`, () => ({
      c: known.conversationId,
      k: known.contactId,
    })),
  ],
  [
    'GraphQL conversations(status:) with contacts, state changes and messages',
    operation(
      `{ conversations(first: 25, status: closed) { edges { node { id status contact { id name } stateChanges { type at }
           messages(first: 2) { edges { node { id body } } } } } pageInfo { hasNextPage endCursor } } }`,
    ),
  ],
  [
    'GraphQL the inbox page: conversations(sort: last_message, unread:) with assignee, labels and lastMessage',
    operation(
      `{ conversations(first: 25, sort: last_message, unread: true) { edges { node { id labels unreadCount lastReadAt assignee { id name }
           lastMessage { id body } contact { id name } } } pageInfo { hasNextPage endCursor } } }`,
    ),
  ],
  ['GraphQL conversations(label:)', operation('{ conversations(first: 25, label: "vip") { edges { node { id labels } } } }')],
  ['GraphQL conversations(contactId:)', operation(`query($k: ID) { conversations(contactId: $k) { edges { node { id status } } } }`, () => ({ k: known.contactId }))],
  ['GraphQL templates and channels', operation('{ templates(first: 25) { edges { node { id name } } } channels { id name } }')],
  // Backward pages: the same keyset walked the other way, from the end or from a cursor.
  ['GraphQL contacts, the last page', operation(`{ contacts(last: 25) { ${CONTACT_FIELDS} } }`)],
  ['GraphQL contacts, a backward page', operation(`query($before: String) { contacts(last: 25, before: $before) { ${CONTACT_FIELDS} } }`, () => ({ before: known.contactsEarly }))],
  [
    'GraphQL contacts(search:), the last page',
    operation(`{ contacts(last: 25, search: "jansen.1200@") { ${CONTACT_FIELDS} } }`),
    { uses: ['contacts_email_trgm_idx'] },
  ],
  ['GraphQL contacts(search:) a common term, a backward page', operation(`query($before: String) { contacts(last: 25, before: $before, search: "example") { ${CONTACT_FIELDS} } }`, () => ({ before: known.contactsDeep }))],
  ['GraphQL messages, the last page', operation(`{ messages(last: 25) { ${MESSAGE_FIELDS} } }`)],
  ['GraphQL messages, a backward page of ids and bodies', operation(`query($before: String) { messages(last: 25, before: $before) { edges { node { id body } } } }`, () => ({ before: known.messagesEarly }))],
  ['GraphQL messages(search:), the last page', operation(`{ messages(last: 25, search: "shipped") { ${MESSAGE_FIELDS} } }`)],
  [
    'GraphQL messages(conversationId:), the last page',
    operation(`query($c: ID) { messages(conversationId: $c, last: 25) { edges { node { id body sender { name } } } pageInfo { hasPreviousPage startCursor } } }`, () => ({ c: known.conversationId })),
  ],
  ['GraphQL conversations, a backward page', operation(`query($before: String) { conversations(last: 25, before: $before) { edges { node { id status } } } }`, () => ({ before: known.conversationsEarly }))],
  ['GraphQL conversations(search:), the last page', operation('{ conversations(last: 25, search: "Lotte Smits") { edges { node { id status } } pageInfo { hasPreviousPage startCursor } } }')],
  [
    'GraphQL conversations(search:) a name, a backward page',
    operation(`query($before: String) { conversations(last: 25, before: $before, search: "Lotte Smits") { edges { node { id status } } } }`, () => ({ before: known.conversationsEarly })),
  ],
  [
    'GraphQL conversations(status:), the last page, with their last messages',
    operation(`{ conversations(last: 25, status: closed) { edges { node { id contact { id name } messages(last: 2) { edges { node { id body } } } } } } }`),
  ],
  ['GraphQL templates, the last page', operation('{ templates(last: 25) { edges { node { id name } } } }')],
  // Object identification: each id looked up by primary key in every table a node may be stored in.
  [
    'GraphQL node and nodes',
    operation(
      `query($c: ID!, $ids: [ID!]!) { node(id: $c) { id ... on Contact { name } }
         nodes(ids: $ids) { id ... on Conversation { status contact { name } messages(first: 5) { edges { node { id body } } } } ... on Message { body sender { name } } } }`,
      () => ({ c: known.contactId, ids: [known.conversationId, known.messageId, known.contactId, ws.channel.id] }),
    ),
  ],
  [
    'the delivery worker claiming due deliveries',
    async () => {
      await testWorker(app.db).claim(10);
    },
  ],
];

describe.runIf(onPostgres)(`query plans with ${CONTACTS.toLocaleString('en-US')} contacts and ${MESSAGES.toLocaleString('en-US')} messages per workspace`, () => {
  it.each(cases)('%s reads no large table whole', async (_label, request, expected = {}) => {
    const statements = await hear(request);
    expect(statements.length).toBeGreaterThan(0);
    const { failures, indexes, genericIndexes } = await explain(statements);
    expect(failures, failures.join('\n\n')).toEqual([]);
    for (const index of expected.uses ?? []) expect([...indexes], `${index} is not used`).toContain(index);
    for (const index of expected.usesPrepared ?? []) expect([...genericIndexes], `${index} is not used by the generic plan`).toContain(index);
  });
});
