/**
 * Bench data: one workspace and channel made by the measured gateway's own admin
 * commands (so the API key is a real one, stored hashed), then contacts, their
 * phones and channel links, conversations with their state changes, and messages,
 * generated in bulk by the database itself (`INSERT … SELECT … FROM
 * generate_series`) in chunks.
 *
 * Every generated row is a function of its ordinal, so a later step (growing the
 * messages for the scale check) continues exactly where the first one stopped:
 *
 * - contact i (1…N): created over the last two years in order of i; a name from
 *   first- and last-name lists, a unique email, a unique E.164 phone (NL, UK or DE
 *   mobile); 1 in 100 deleted, 1 in 250 a group.
 * - conversations: contact 2k has conversation k (open, or closed for 1 in 5);
 *   contact 20q also has an older closed one. C conversations in all.
 * - message j goes to conversation ((j − 1) mod C) + 1, in rounds seven minutes
 *   apart; a third are inbound. Conversation 1 also holds a long history of its
 *   own (`longConversationMessages`: a tenth of the messages, at most 20 000, a
 *   minute apart), where a page from the far end is measured against its first. Bodies mix a greeting, a phrase (30 % mention an
 *   "order"), one of 100 topic words (1 % each) and one of 20 000 SKU codes, so
 *   full-text search has common, medium and rare terms.
 */
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Progress } from './progress.js';

export const BENCH_HOST = 'bench.test';

export interface Fixture {
  host: string;
  workspaceId: string;
  channelId: string;
  channelName: string;
  apiKey: string;
  /** Contacts generated (deleted ones included). */
  contacts: number;
  /** Messages generated so far. */
  messages: number;
  conversations: number;
  /** Messages of conversation 1's long history, beside `messages`. */
  longConversation: number;
  /** The instant generated times are laid out from (ISO). */
  anchor: string;
}

/** Search terms by how many messages hold them: a SKU (1 in 20 000), a topic (1 in 100), "order" (about 3 in 10). */
export const SEARCH_TERMS = { rare: 'sku01234', medium: 'headphones', common: 'order' } as const;

const FIRST = [
  'Emma', 'Liam', 'Olivia', 'Noah', 'Ava', 'Lucas', 'Mia', 'Levi', 'Sophie', 'Daan', 'Julia', 'Sem', 'Anna', 'Finn',
  'Lotte', 'Milan', 'Sara', 'Jesse', 'Eva', 'Luuk', 'Nora', 'Bram', 'Lisa', 'Thomas', 'Fleur', 'Max', 'Isa', 'Ruben',
  'Tess', 'Lars', 'Amira', 'Yusuf', 'Fatima', 'Omar', 'Leila', 'Mohamed', 'Hannah', 'Jonas', 'Lena', 'Felix', 'Clara',
  'Paul', 'Marie', 'Leon', 'Amelia', 'Oliver', 'Isla', 'George', 'Grace', 'Harry', 'Chloe', 'Jack', 'Ella', 'Oscar',
  'Priya', 'Arjun', 'Mei', 'Wei', 'Sofia', 'Mateo',
];
const LAST = [
  'Jansen', 'deVries', 'Bakker', 'Visser', 'Smit', 'Meijer', 'Mulder', 'deBoer', 'Bos', 'Vos', 'Peters', 'Hendriks',
  'Dekker', 'Brouwer', 'Dijkstra', 'Smits', 'Verhoeven', 'Kok', 'Jacobs', 'Vermeulen', 'Schouten', 'Willems', 'Hoekstra',
  'Koster', 'Prins', 'Maas', 'Post', 'Kuiper', 'Veenstra', 'Kramer', 'Muller', 'Schmidt', 'Schneider', 'Fischer',
  'Weber', 'Wagner', 'Becker', 'Hoffmann', 'Koch', 'Richter', 'Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson',
  'Johnson', 'Davies', 'Patel', 'Wright', 'Walker', 'Evans', 'Thomas', 'Roberts', 'Khan', 'Lewis', 'Hughes', 'Clarke',
  'Garcia', 'Martinez', 'Rossi', 'Russo', 'Nguyen', 'Tran', 'Kowalski', 'Nowak', 'Novak', 'Horvat', 'Yilmaz', 'Kaya',
];
const DOMAINS = ['example.com', 'mail.test', 'inbox.example', 'post.test', 'company.example', 'shop.test'];
const TOPICS = [
  'headphones', 'laptop', 'charger', 'keyboard', 'monitor', 'printer', 'camera', 'tablet', 'speaker', 'router',
  'blender', 'toaster', 'kettle', 'vacuum', 'mattress', 'pillow', 'blanket', 'sofa', 'lamp', 'desk', 'chair', 'shelf',
  'bicycle', 'helmet', 'tent', 'backpack', 'jacket', 'sneakers', 'boots', 'scarf', 'gloves', 'umbrella', 'watch',
  'bracelet', 'necklace', 'earrings', 'wallet', 'handbag', 'suitcase', 'passport', 'ticket', 'voucher', 'subscription',
  'invoice', 'warranty', 'repair', 'installation', 'appointment', 'consultation', 'membership', 'parcel', 'pickup',
  'return', 'exchange', 'discount', 'coupon', 'giftcard', 'newsletter', 'password', 'account', 'profile', 'address',
  'phone', 'sim', 'contract', 'upgrade', 'battery', 'screen', 'cable', 'adapter', 'mouse', 'webcam', 'microphone',
  'console', 'controller', 'game', 'book', 'magazine', 'puzzle', 'toy', 'stroller', 'crib', 'diapers', 'formula',
  'vitamins', 'shampoo', 'perfume', 'sunscreen', 'razor', 'toothbrush', 'coffee', 'tea', 'chocolate', 'wine', 'flowers',
  'plant', 'seeds', 'fertilizer', 'grill', 'paint',
];
const PHRASES = [
  "your order #' || (100000 + j) || ' has shipped, it includes the",
  'we received your order for the',
  'the order status changed for your',
  'thanks for asking about the',
  'a refund was issued for the',
  'can you confirm the delivery address for the',
  'your appointment is confirmed, please bring the',
  'payment received for the',
  'is there anything else we can help with regarding the',
  'we are sorry about the delay with the',
];

const sqlText = (value: string) => `'${value.replace(/'/g, "''")}'`;
const sqlArray = (values: string[]) => `ARRAY[${values.map(sqlText).join(',')}]`;

/** Conversation counts of a data set of `contacts` contacts. */
function conversationPlan(contacts: number) {
  const primary = Math.floor(contacts / 2);
  const extra = Math.floor(contacts / 20);
  return { primary, extra, total: primary + extra };
}

/**
 * Session-local SQL functions (pg_temp) that derive every generated value from
 * its ordinal, in integer milliseconds so that PostgreSQL inlines them.
 * Time-ordered UUIDs (version 7) like the app's own, but derived from the ordinal
 * so that rows find each other's ids without lookups.
 */
async function defineGenerators(client: pg.ClientBase, fixture: Pick<Fixture, 'contacts' | 'anchor'>) {
  const { primary } = conversationPlan(fixture.contacts);
  const first = Date.parse(fixture.anchor) - 730 * 86_400_000;
  const step = Math.floor((729 * 86_400_000) / Math.max(1, fixture.contacts));
  const HOUR = 3_600_000;
  await client.query(`
    CREATE OR REPLACE FUNCTION pg_temp.uuid7(ms bigint, seed text) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
      SELECT overlay(overlay(overlay(md5(seed) PLACING lpad(to_hex(ms), 12, '0') FROM 1) PLACING '7' FROM 13) PLACING '8' FROM 17)::uuid
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.ts(ms bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
      SELECT to_timestamp(ms / 1000.0)
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.contact_ms(i bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
      SELECT ${first}::bigint + (i - 1) * ${step}
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.contact_id(i bigint) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
      SELECT pg_temp.uuid7(pg_temp.contact_ms(i), 'c' || i)
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.first_name(i bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT (${sqlArray(FIRST)})[1 + i % ${FIRST.length}]
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.last_name(i bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT (${sqlArray(LAST)})[1 + (i / ${FIRST.length}) % ${LAST.length}]
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.contact_name(i bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE WHEN i % 250 = 101 THEN 'Group ' || pg_temp.last_name(i) || ' ' || i
                  ELSE pg_temp.first_name(i) || ' ' || regexp_replace(pg_temp.last_name(i), '^de([A-Z])', 'de \\1') END
    $$;
    -- The contact of conversation k, and when that conversation started.
    CREATE OR REPLACE FUNCTION pg_temp.conversation_contact(k bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE WHEN k <= ${primary} THEN 2 * k ELSE 20 * (k - ${primary}) END
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.conversation_ms(k bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
      SELECT pg_temp.contact_ms(pg_temp.conversation_contact(k)) + CASE WHEN k <= ${primary} THEN ${HOUR} ELSE ${HOUR / 6} END
    $$;
    CREATE OR REPLACE FUNCTION pg_temp.conversation_id(k bigint) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
      SELECT pg_temp.uuid7(pg_temp.conversation_ms(k), 'v' || k)
    $$;`);
}

/** Larger work areas for this session only: bulk inserts and index maintenance go faster, nothing else changes. */
async function bulkSession(client: pg.ClientBase) {
  await client.query(`SET synchronous_commit = off; SET work_mem = '256MB'; SET maintenance_work_mem = '512MB'; SET statement_timeout = 0`);
}

const CHUNK = 25_000;

/**
 * Runs `sql(lo, hi)` over ordinals `from + 1 … from + total` in chunks, one chunk
 * at a time on each session, so that both cores of the machine work.
 */
export async function inChunks(sessions: pg.ClientBase[], label: string, total: number, from: number, sql: (lo: number, hi: number) => string) {
  const progress = new Progress(label, total);
  let next = from + 1;
  let done = 0;
  await Promise.all(
    sessions.map(async (session) => {
      while (next <= from + total) {
        const lo = next;
        const hi = Math.min(from + total, lo + CHUNK - 1);
        next = hi + 1;
        await session.query(sql(lo, hi));
        done += hi - lo + 1;
        progress.update(done);
      }
    }),
  );
}

/** Sessions for bulk work on `url`: two by default, one per core. */
export async function openSessions(url: string, count = 2): Promise<pg.Client[]> {
  const sessions = Array.from({ length: count }, () => new pg.Client({ connectionString: url }));
  await Promise.all(sessions.map((s) => s.connect()));
  await Promise.all(sessions.map((s) => bulkSession(s)));
  return sessions;
}

export async function closeSessions(sessions: pg.Client[]): Promise<void> {
  await Promise.all(sessions.map((s) => s.end().catch(() => {})));
}

/**
 * The workspace, channel and API key, made by `npm run admin` of the gateway
 * being measured (`dist` is its compiled directory), so that they are whatever
 * that version stores for them.
 */
export function createTenant(databaseUrl: string, dist: string, host = BENCH_HOST): Pick<Fixture, 'host' | 'workspaceId' | 'channelId' | 'channelName' | 'apiKey'> {
  const admin = (args: string[]) => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl, NODE_ENV: 'production', LOG_LEVEL: 'silent', SEED_DEMO: '0' };
    return JSON.parse(execFileSync(process.execPath, [path.join(dist, 'cli/admin.js'), ...args], { env, encoding: 'utf8' })) as Record<string, string>;
  };
  const workspace = admin(['workspace:create', '--hostname', host, '--name', 'Bench']);
  const channel = admin(['channel:create', '--hostname', host, '--name', 'Bench WhatsApp', '--type', 'whatsapp']);
  return { host, workspaceId: workspace.id!, channelId: channel.id!, channelName: channel.name!, apiKey: channel.apiKey! };
}

/**
 * One `npm run admin` command of the measured gateway (`dist`: its compiled directory) on the bench
 * database, with `env` beside the bench's (SECRETS_KEY, WEBHOOK_PRIVATE_TARGETS…): the JSON object it prints.
 */
export async function adminCommand(databaseUrl: string, dist: string, args: string[], env: Record<string, string> = {}): Promise<Record<string, string>> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: databaseUrl, NODE_ENV: 'production', LOG_LEVEL: 'silent', SEED_DEMO: '0' };
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(dist, 'cli/admin.js'), ...args], { env: { ...base, ...env }, encoding: 'utf8' });
  return JSON.parse(stdout) as Record<string, string>;
}

/** What the bench's whatsapp_cloud channel is made with; the local stand-in for the Cloud API knows the token. */
export const BENCH_WHATSAPP = {
  phoneNumberId: '109876543210',
  accessToken: 'EAAG-bench-access-token-0123456789',
  appSecret: 'bench-app-secret-0123456789abcdef',
  verifyToken: 'bench-verify-token',
};

/**
 * A whatsapp_cloud channel in the bench workspace, made by the measured gateway's
 * `npm run admin channel:create` with SECRETS_KEY (its credentials are stored sealed).
 */
export function createWhatsAppChannel(databaseUrl: string, dist: string, secretsKey: string, host = BENCH_HOST): { channelId: string; apiKey: string } {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl, NODE_ENV: 'production', LOG_LEVEL: 'silent', SEED_DEMO: '0', SECRETS_KEY: secretsKey };
  const args = [
    'channel:create', '--hostname', host, '--name', 'Bench WhatsApp Cloud', '--type', 'whatsapp', '--provider', 'whatsapp_cloud',
    '--phone-number-id', BENCH_WHATSAPP.phoneNumberId, '--access-token', BENCH_WHATSAPP.accessToken,
    '--app-secret', BENCH_WHATSAPP.appSecret, '--verify-token', BENCH_WHATSAPP.verifyToken,
  ];
  const channel = JSON.parse(execFileSync(process.execPath, [path.join(dist, 'cli/admin.js'), ...args], { env, encoding: 'utf8' })) as Record<string, string>;
  return { channelId: channel.id!, apiKey: channel.apiKey! };
}

/** Contacts, phones, channel links, conversations and their state changes, then `messages` messages. */
export async function seedData(
  sessions: pg.ClientBase[],
  tenant: Pick<Fixture, 'host' | 'workspaceId' | 'channelId' | 'channelName' | 'apiKey'>,
  counts: { contacts: number; messages: number },
): Promise<Fixture> {
  const anchor = new Date(Math.floor(Date.now() / 1000) * 1000 - 86_400_000).toISOString();
  const plan = conversationPlan(counts.contacts);
  const fixture: Fixture = { ...tenant, contacts: counts.contacts, messages: 0, conversations: plan.total, longConversation: longConversationMessages(counts.messages), anchor };
  await Promise.all(sessions.map((s) => defineGenerators(s, fixture)));
  const ws = sqlText(fixture.workspaceId);
  const channel = sqlText(fixture.channelId);
  const channelName = sqlText(fixture.channelName);
  const DAY = 86_400_000;

  await inChunks(sessions, 'contacts', counts.contacts, 0, (lo, hi) => `
      INSERT INTO contacts (id, workspace_id, name, email, email_normalized, phone, is_group, deleted_at, created_at, updated_at)
      SELECT pg_temp.uuid7(ms, 'c' || i), ${ws}::uuid, pg_temp.contact_name(i), email, lower(email), phone, i % 250 = 101,
             CASE WHEN i % 100 = 37 THEN pg_temp.ts(ms + 3 * ${DAY}) END, pg_temp.ts(ms), pg_temp.ts(ms + (i % 7) * ${DAY})
        FROM generate_series(${lo}::bigint, ${hi}::bigint) AS i,
             LATERAL (SELECT pg_temp.contact_ms(i) AS ms,
                             lower(pg_temp.first_name(i) || '.' || pg_temp.last_name(i)) || '.' || i || '@' || (${sqlArray(DOMAINS)})[1 + i % ${DOMAINS.length}] AS email,
                             CASE i % 3 WHEN 0 THEN '+316' || (10000000 + i / 3) WHEN 1 THEN '+447' || (400000000 + i / 3) ELSE '+49151' || (10000000 + i / 3) END AS phone) AS v`);
  await inChunks(sessions, 'contact phones', counts.contacts, 0, (lo, hi) => `
      INSERT INTO contact_phones (id, workspace_id, contact_id, number, contact_deleted, created_at)
      SELECT pg_temp.uuid7(ms, 'p' || i), ${ws}::uuid, pg_temp.uuid7(ms, 'c' || i),
             CASE i % 3 WHEN 0 THEN '+316' || (10000000 + i / 3) WHEN 1 THEN '+447' || (400000000 + i / 3) ELSE '+49151' || (10000000 + i / 3) END,
             i % 100 = 37, pg_temp.ts(ms)
        FROM generate_series(${lo}::bigint, ${hi}::bigint) AS i, LATERAL (SELECT pg_temp.contact_ms(i) AS ms) AS v`);
  await inChunks(sessions, 'conversations', plan.total, 0, (lo, hi) => `
      WITH k AS (
        SELECT k, pg_temp.uuid7(ms, 'v' || k) AS id, pg_temp.contact_id(pg_temp.conversation_contact(k)) AS contact_id,
               pg_temp.ts(ms) AS ts, pg_temp.ts(ms + 1800000) AS closed_at, k > ${plan.primary} OR k % 5 = 0 AS closed
          FROM generate_series(${lo}::bigint, ${hi}::bigint) AS k, LATERAL (SELECT pg_temp.conversation_ms(k) AS ms) AS v),
      conversation AS (
        INSERT INTO conversations (id, workspace_id, channel_id, contact_id, status, closed_at, created_at, updated_at, last_message_at)
        SELECT id, ${ws}::uuid, ${channel}::uuid, contact_id,
               CASE WHEN closed THEN 'closed' ELSE 'open' END::conversation_status,
               CASE WHEN closed THEN closed_at END, ts, CASE WHEN closed THEN closed_at ELSE ts END,
               -- as the gateway makes a conversation: active since it was created until a message says otherwise
               ts
          FROM k),
      opened AS (
        INSERT INTO conversation_state_changes (id, conversation_id, type, actor_type, actor_channel_id, actor_name, created_at)
        SELECT pg_temp.uuid7(pg_temp.conversation_ms(k), 'o' || k), id, 'opened', 'channel', ${channel}::uuid, ${channelName}, ts FROM k)
      INSERT INTO conversation_state_changes (id, conversation_id, type, actor_type, actor_channel_id, actor_name, created_at)
      SELECT pg_temp.uuid7(pg_temp.conversation_ms(k) + 1800000, 'x' || k), id, 'closed', 'channel', ${channel}::uuid, ${channelName}, closed_at
        FROM k WHERE closed`);
  await inChunks(sessions, 'contact channel links', plan.primary, 0, (lo, hi) => `
      INSERT INTO contact_channels (contact_id, channel_id, created_at)
      SELECT pg_temp.contact_id(2 * k), ${channel}::uuid, pg_temp.ts(pg_temp.conversation_ms(k))
        FROM generate_series(${lo}::bigint, ${hi}::bigint) AS k`);
  await inChunks(sessions, 'long conversation', fixture.longConversation, 0, (lo, hi) => `
      INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, direction, type, body, sender_type,
                            sender_channel_id, sender_name, status, delivery_attempts, created_at, updated_at)
      SELECT pg_temp.uuid7(ms, 'l' || j), ${ws}::uuid, ${channel}::uuid, pg_temp.conversation_id(1), pg_temp.contact_id(pg_temp.conversation_contact(1)),
             'outbound', 'text', 'Update ' || j || ' on your order, ' || pg_temp.first_name(pg_temp.conversation_contact(1)) || '.',
             'channel', ${channel}::uuid, ${channelName}, 'delivered', 1, pg_temp.ts(ms), pg_temp.ts(ms)
        FROM generate_series(${lo}::bigint, ${hi}::bigint) AS j, LATERAL (SELECT pg_temp.conversation_ms(1) + j * 60000 AS ms) AS v`);
  await addMessages(sessions, fixture, counts.messages, { prepared: true });
  return fixture;
}

/** How long conversation 1's own history is for a data set of `messages` messages: a tenth of them, 100 to 20 000. */
export function longConversationMessages(messages: number): number {
  return Math.max(100, Math.min(20_000, Math.floor(messages / 10)));
}

/**
 * Adds messages `fixture.messages + 1 … + count`, then brings every conversation's
 * `last_message_at`, `last_message_id` and `unread_count` up to date and refreshes the planner's statistics.
 */
export async function addMessages(sessions: pg.ClientBase[], fixture: Fixture, count: number, options: { prepared?: boolean } = {}): Promise<void> {
  if (!options.prepared) await Promise.all(sessions.map((s) => defineGenerators(s, fixture)));
  const client = sessions[0]!;
  const C = fixture.conversations;
  const ws = sqlText(fixture.workspaceId);
  const channel = sqlText(fixture.channelId);
  // Words picked by hashes of j, so that neighbouring messages (and one conversation's) differ.
  const pick = (salt: number, n: number) => `1 + (abs(hashint8(j * ${salt + 2} + ${salt})) % ${n})`;
  const phrase = `(ARRAY[${PHRASES.map((p) => `'${p}'`).join(',')}])[${pick(1, PHRASES.length)}]`;
  await inChunks(sessions, 'messages', count, fixture.messages, (lo, hi) => `
      INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, direction, type, body, sender_type,
                            sender_channel_id, sender_name, status, delivery_attempts, sent_at, created_at, updated_at)
      SELECT pg_temp.uuid7(ms, 'm' || j), ${ws}::uuid, ${channel}::uuid, pg_temp.conversation_id(k), pg_temp.contact_id(i),
             CASE WHEN inbound THEN 'inbound' ELSE 'outbound' END::message_direction, 'text',
             (ARRAY['Hi','Hello','Hey','Good morning','Good afternoon','Dear'])[${pick(2, 6)}] || ' ' || pg_temp.first_name(i) || ', ' ||
               ${phrase} || ' ' || (${sqlArray(TOPICS)})[${pick(3, TOPICS.length)}] ||
               ' (ref sku' || lpad((${pick(4, 20000)} - 1)::text, 5, '0') || ').',
             CASE WHEN inbound THEN 'external' ELSE 'channel' END::actor_type,
             CASE WHEN inbound THEN NULL ELSE ${channel}::uuid END,
             CASE WHEN inbound THEN pg_temp.contact_name(i) ELSE ${sqlText(fixture.channelName)} END,
             CASE WHEN inbound OR j % 2 = 0 THEN 'delivered' ELSE 'sent' END::message_status,
             CASE WHEN inbound THEN 0 ELSE 1 END,
             CASE WHEN inbound THEN NULL ELSE pg_temp.ts(ms + 1000) END,
             pg_temp.ts(ms), pg_temp.ts(ms)
        FROM generate_series(${lo}::bigint, ${hi}::bigint) AS j,
             LATERAL (SELECT ((j - 1) % ${C}) + 1 AS k) AS kk,
             LATERAL (SELECT pg_temp.conversation_contact(k) AS i,
                             pg_temp.conversation_ms(k) + ((j - 1) / ${C} + 1) * 420000 + j % 1000 AS ms,
                             j % 3 = 0 AS inbound) AS v`);
  fixture.messages += count;
  // The inbox reads each conversation's newest message and unread count off its row, as the
  // statements storing messages keep them (nothing has been read: every inbound message is unread).
  await client.query(`
    UPDATE conversations c SET last_message_at = m.last, last_message_id = m.last_id, unread_count = m.inbound
      FROM (SELECT conversation_id, max(created_at) AS last, (array_agg(id ORDER BY created_at DESC, id DESC))[1] AS last_id,
                   (count(*) FILTER (WHERE direction = 'inbound'))::int AS inbound
              FROM messages GROUP BY conversation_id) m
     WHERE c.id = m.conversation_id AND (c.last_message_at IS DISTINCT FROM m.last OR c.last_message_id IS DISTINCT FROM m.last_id)`);
  await analyze(client);
}

/** VACUUM ANALYZE: fresh planner statistics, and visibility maps as a long-lived database has them. */
export async function analyze(client: pg.ClientBase): Promise<void> {
  await client.query('VACUUM (ANALYZE)');
}
