/**
 * The floor: what the benchmarked operations cost when written by hand with
 * node:http and pg — no framework, no ORM, no GraphQL library — issuing the SQL a
 * careful implementation needs for the same work as the gateway's services, on
 * the same tables, and answering with the same JSON. The bench runs it beside
 * the gateway and reports the gateway's throughput as a fraction of this one's.
 *
 * It serves only what the bench sends (anything else is a 4xx), with the same
 * authentication (bearer token looked up by its SHA-256, workspace by Host) and
 * one pooled connection per request. Statements per operation are listed at each
 * handler. Started by bench/run.ts:
 *
 *   DATABASE_URL=postgres://… PORT=4100 node --import tsx bench/floor/server.ts
 */
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { decodeCursor, encodeCursor, type Cursor } from '../../src/lib/pagination.js';
import { Sealer, parseKey } from '../../src/lib/sealed.js';
import { hashToken, isWellFormedToken } from '../../src/lib/tokens.js';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE || 10),
  // The gateway's own database settings, sent once per connection: they cost nothing per statement.
  statement_timeout: 10_000,
  idle_in_transaction_session_timeout: 15_000,
});
pool.on('error', () => {});

/**
 * FLOOR_PREPARED=1 (`npm run bench -- --floor-prepared`): every parameterised text is kept prepared
 * per connection under a name of its own, as the gateway's `preparedStatementNames` does on
 * PostgreSQL, so PostgreSQL parses it once per connection and may reuse its plan; texts whose plan
 * depends on the values (`LIKE`, `@@`) stay unnamed there as here. Otherwise each statement is sent
 * unnamed and parsed and planned afresh.
 */
if (process.env.FLOOR_PREPARED === '1') {
  const names = new Map<string, string | undefined>();
  const nameOf = (text: string) => {
    if (!names.has(text)) names.set(text, /\bI?LIKE\b|@@/i.test(text) ? undefined : `floor_${names.size.toString(36)}`);
    return names.get(text);
  };
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((text: unknown, values?: unknown, callback?: unknown) =>
      typeof text === 'string' && Array.isArray(values)
        ? query({ name: nameOf(text), text, values }, callback)
        : query(text, values, callback)) as typeof client.query;
  });
}

/**
 * Whether the schema has channel providers (a gateway of --ref from before them has not): without
 * them every channel is a webhook channel, and no provider message ids are recorded.
 */
const PROVIDERS =
  ((await pool.query(`SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'channels' AND column_name = 'provider'`))
    .rowCount ?? 0) > 0;
const CHANNEL_PROVIDER = PROVIDERS ? 'c.provider' : `'webhook'::text AS provider`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BODY_LIMIT = 1024 * 1024;
const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}
const unauthenticated = () => new HttpFailure(401, { status: 'error', message: 'Unauthenticated.' }, { 'www-authenticate': 'Bearer' });
const invalid = (field: string, message: string) => new HttpFailure(422, { message, errors: { [field]: [message] } });
const notFound = (what: string) => new HttpFailure(404, { status: 'error', message: `${what} not found.` });

/** Time-ordered ids, as the app's Prisma schema generates them (uuid(7)). */
function uuid7(at = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(at, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const iso = (value: Date | string) => (value instanceof Date ? value : new Date(value)).toISOString();

/** SHA-256 of the body as JSON with object keys in order, as the gateway keys idempotent requests. */
function requestHash(body: unknown): string {
  const canonical = JSON.stringify(body, (_key, value) =>
    value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : value,
  );
  return createHash('sha256').update(canonical).digest('hex');
}

// ── Authentication ────────────────────────────────────────────────────────────

interface Auth {
  credentialId: string;
  workspaceId: string;
  channel: { id: string; name: string; provider: string };
}

/**
 * The caller, in one statement: the token by its hash, live and not expired, of
 * the workspace the Host names, with the active channels it may act as (its own
 * for a channel key, its connection's for a connection token, its channels for a
 * session; a session's scopes and minting credential go unchecked here).
 */
async function authenticate(db: pg.PoolClient, request: http.IncomingMessage): Promise<Auth> {
  const host = (request.headers.host ?? '').replace(/:\d*$/, '').toLowerCase();
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (!host || !bearer || !isWellFormedToken(bearer)) throw unauthenticated();
  const { rows } = await db.query<{ credential_id: string; workspace_id: string; channel_id: string; channel_name: string; provider: string }>(
    `SELECT t.id AS credential_id, t.workspace_id, c.id AS channel_id, c.name AS channel_name, ${CHANNEL_PROVIDER}
       FROM access_tokens t
       JOIN workspaces w ON w.id = t.workspace_id AND w.hostname = $2
       JOIN channels c ON c.workspace_id = t.workspace_id AND c.status = 'active'
        AND (c.id = t.channel_id OR c.id = ANY(t.channel_ids) OR c.id IN (SELECT channel_id FROM connection_channels WHERE connection_id = t.connection_id))
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
    [hashToken(bearer), host],
  );
  if (rows.length === 0) throw unauthenticated();
  const named = request.headers['x-channel-uuid'];
  let channel: (typeof rows)[number] | undefined;
  if (typeof named === 'string') {
    channel = rows.find((row) => row.channel_id === named.trim().toLowerCase());
    if (!channel) throw unauthenticated();
  } else if (rows.length === 1) {
    channel = rows[0];
  } else {
    throw new HttpFailure(400, { status: 'error', message: 'This credential acts for several channels: name one in the X-Channel-Uuid header.' });
  }
  return {
    credentialId: channel!.credential_id,
    workspaceId: channel!.workspace_id,
    channel: { id: channel!.channel_id, name: channel!.channel_name, provider: channel!.provider },
  };
}

// ── Shared statements ─────────────────────────────────────────────────────────

/** Events into the outbox for every subscribed endpoint: the gateway's own statement (events.service.ts). */
async function recordEvent(db: pg.PoolClient, workspaceId: string, type: string, data: unknown, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO deliveries (id, workspace_id, endpoint_id, event_type, payload)
     SELECT gen_random_uuid(), endpoint.workspace_id, endpoint.id, event.type, event.payload
       FROM webhook_endpoints AS endpoint
       JOIN (VALUES (0, $2::text, $3::json)) AS event(position, type, payload)
         ON coalesce(cardinality(endpoint.events), 0) = 0 OR event.type = ANY(endpoint.events)
      WHERE endpoint.workspace_id = $1::uuid
      ORDER BY event.position, endpoint.id`,
    [workspaceId, type, JSON.stringify({ type, timestamp: at.toISOString(), data })],
  );
}

async function inTransaction<T>(db: pg.PoolClient, work: () => Promise<T>): Promise<T> {
  await db.query('BEGIN');
  try {
    const result = await work();
    await db.query('COMMIT');
    return result;
  } catch (error) {
    await db.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** SQL: a timestamp as `toISOString` writes it. */
const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The contact view's `optOuts`, built by PostgreSQL for the contact row `contacts`. */
const OPT_OUTS = `coalesce((SELECT json_agg(json_build_object('channelId', o.channel_id, 'at', ${isoSql('o.at')}, 'source', o.source)
                            ORDER BY o.at, o.channel_id) FROM contact_opt_outs o WHERE o.contact_id = contacts.id), '[]'::json) AS opt_outs`;

interface ContactRow {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  is_group: boolean;
  created_at: Date;
  updated_at: Date;
  /** Absent where the answer does not show it (GraphQL's documents select no `optOuts`). */
  opt_outs?: unknown[];
}

const contactView = (row: ContactRow) => ({
  id: row.id,
  name: row.name,
  email: row.email,
  phoneNumber: row.phone,
  isGroup: row.is_group,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
  ...(row.opt_outs ? { optOuts: row.opt_outs } : {}),
});

function contactName(input: unknown): string {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw invalid('body', 'At least one of name, email or phone must be given.');
  const { name, ...rest } = input as Record<string, unknown>;
  if ('email' in rest || 'phone' in rest) throw new HttpFailure(422, { message: 'The floor changes names only.' });
  if (typeof name !== 'string') throw invalid('name', 'The name must be a string.');
  const trimmed = name.trim();
  const length = Array.from(trimmed).length;
  if (length < 2) throw invalid('name', 'The name must be at least 2 characters.');
  if (length > 255) throw invalid('name', 'The name must not be greater than 255 characters.');
  return trimmed;
}

// ── Operations ────────────────────────────────────────────────────────────────

/**
 * PATCH /contacts/{id} with a name, and GraphQL updateContact — 6 statements:
 * authenticate; BEGIN; the contact's current values, locked (SELECT … FOR
 * UPDATE: the rules of an update read them); UPDATE … RETURNING; the
 * `contact.updated` event; COMMIT.
 */
async function updateContactName(db: pg.PoolClient, auth: Auth, id: string, input: unknown): Promise<ContactRow> {
  if (!UUID.test(id)) throw notFound('Contact');
  const name = contactName(input);
  return inTransaction(db, async () => {
    const current = await db.query<{ name: string }>(
      `SELECT name, email, phone FROM contacts WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [id.toLowerCase(), auth.workspaceId],
    );
    if (!current.rows[0]) throw notFound('Contact');
    const at = new Date();
    const { rows } = await db.query<ContactRow>(
      `UPDATE contacts SET name = $2, updated_at = $3 WHERE id = $1 RETURNING id, name, email, phone, is_group, created_at, updated_at, ${OPT_OUTS}`,
      [id.toLowerCase(), name, at],
    );
    const updated = rows[0]!;
    if (current.rows[0].name !== updated.name) await recordEvent(db, auth.workspaceId, 'contact.updated', contactView(updated), at);
    return updated;
  });
}

/**
 * POST /contacts with a name, an email and a phone (both valid as the bench sends them) — 8
 * statements: authenticate; BEGIN; the live contacts holding the email (any case) or the phone
 * (a 422 naming the holder); INSERT the contact … RETURNING; its phone row; its link to the
 * channel; the `contact.created` event; COMMIT. A concurrent writer of the same value is refused
 * by the unique indexes (a 500 here).
 */
async function createContact(db: pg.PoolClient, auth: Auth, input: unknown): Promise<ContactRow> {
  const body = (input ?? {}) as Record<string, unknown>;
  const name = contactName({ name: body.name });
  const email = typeof body.email === 'string' ? body.email.trim() : null;
  const phone = typeof body.phone === 'string' ? body.phone.trim() : null;
  if (!email || !phone) throw new HttpFailure(422, { message: 'The floor creates contacts with an email and a phone.' });
  return inTransaction(db, async () => {
    const { rows: held } = await db.query<{ email_holder: string | null; phone_holder: string | null }>(
      `SELECT (SELECT id FROM contacts WHERE workspace_id = $1 AND deleted_at IS NULL AND email_normalized = $2) AS email_holder,
              (SELECT contact_id FROM contact_phones WHERE workspace_id = $1 AND NOT contact_deleted AND number = $3) AS phone_holder`,
      [auth.workspaceId, email.toLowerCase(), phone],
    );
    const holder = held[0]!.email_holder ?? held[0]!.phone_holder;
    if (holder) {
      const field = held[0]!.email_holder ? 'email' : 'phone';
      throw new HttpFailure(422, { message: `The ${field} has already been taken.`, errors: { [field]: [`The ${field} has already been taken.`] }, conflict: { field, contactId: holder } });
    }
    const at = new Date();
    const { rows } = await db.query<ContactRow>(
      `INSERT INTO contacts (id, workspace_id, name, email, email_normalized, phone, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
       RETURNING id, name, email, phone, is_group, created_at, updated_at, '[]'::json AS opt_outs`,
      [uuid7(at.getTime()), auth.workspaceId, name, email, email.toLowerCase(), phone, at],
    );
    const contact = rows[0]!;
    await db.query(`INSERT INTO contact_phones (id, workspace_id, contact_id, number) VALUES (gen_random_uuid(), $1, $2, $3)`, [auth.workspaceId, contact.id, phone]);
    await db.query(`INSERT INTO contact_channels (contact_id, channel_id) VALUES ($1, $2)`, [contact.id, auth.channel.id]);
    await recordEvent(db, auth.workspaceId, 'contact.created', contactView(contact), at);
    return contact;
  });
}

interface SentMessage {
  id: string;
  conversationId: string;
  contactId: string;
  body: string;
  createdAt: Date;
}

const messageView = (auth: Auth, m: SentMessage) => ({
  id: m.id,
  conversationId: m.conversationId,
  contactId: m.contactId,
  channelId: auth.channel.id,
  direction: 'outbound',
  type: 'text',
  body: m.body,
  isEncrypted: false,
  status: 'queued',
  failureReason: null,
  sender: { type: 'channel', id: auth.channel.id, name: auth.channel.name },
  silent: false,
  mediaUrls: [] as string[],
  media: [] as unknown[],
  broadcastId: null,
  createdAt: m.createdAt.toISOString(),
});

/** A stored answer replayed (`Replay`) or a key still in flight (409). */
class Replay {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/**
 * POST /messages (text to a contact id) and GraphQL sendMessage — with an
 * idempotency key, 14 statements: authenticate; BEGIN; SET LOCAL lock_timeout;
 * claim the key (INSERT … ON CONFLICT … RETURNING); SET LOCAL lock_timeout =
 * DEFAULT; the recipient (a live contact of the workspace); link it to the
 * channel (INSERT … ON CONFLICT DO NOTHING); the conversation to use, locked
 * (SELECT … FOR UPDATE); its last_message_at (UPDATE; a new conversation is an
 * INSERT and its `opened` state change instead); INSERT the message; INSERT its
 * delivery (the outbox); the `message.created` event; store the answer with the
 * key (UPDATE); COMMIT. Without a key: 9. The delivery worker below takes the
 * outbox rows from there.
 */
async function sendText(
  db: pg.PoolClient,
  auth: Auth,
  input: { to: unknown; message: unknown },
  idempotency: { route: string; key: string; hash: string; answer: (m: SentMessage) => { status: number; body: unknown } } | null,
): Promise<SentMessage | Replay> {
  const to = typeof input.to === 'string' ? input.to.trim().toLowerCase() : null;
  if (!to || !UUID.test(to)) throw invalid('to', 'The floor sends to a contact id only.');
  if (typeof input.message !== 'string' || input.message.trim() === '') throw invalid('message', 'The message field is required.');
  if (Array.from(input.message).length > 4096) throw invalid('message', 'The message must not be greater than 4096 characters.');
  const text = input.message;
  return inTransaction(db, async () => {
    let keyId: string | undefined;
    if (idempotency) {
      await db.query(`SET LOCAL lock_timeout = '100ms'`);
      const claimed = await db.query<{ id: string }>(
        `INSERT INTO idempotency_keys (id, credential_id, route, key, request_hash)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (credential_id, route, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = CURRENT_TIMESTAMP
           WHERE idempotency_keys.created_at < $6
         RETURNING id`,
        [uuid7(), auth.credentialId, idempotency.route, idempotency.key, idempotency.hash, new Date(Date.now() - IDEMPOTENCY_TTL_MS)],
      );
      await db.query('SET LOCAL lock_timeout = DEFAULT');
      keyId = claimed.rows[0]?.id;
      if (!keyId) {
        const stored = await db.query<{ request_hash: string; response_status: number | null; response_body: unknown }>(
          `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE credential_id = $1 AND route = $2 AND key = $3`,
          [auth.credentialId, idempotency.route, idempotency.key],
        );
        const row = stored.rows[0];
        if (!row || row.response_status === null) throw new HttpFailure(409, { status: 'error', message: 'A request with this Idempotency-Key is still in progress.' });
        if (row.request_hash !== idempotency.hash) throw invalid('Idempotency-Key', 'The Idempotency-Key was already used with a different request body.');
        return new Replay(row.response_status, row.response_body);
      }
    }
    if (auth.channel.provider === 'whatsapp_cloud') {
      // WhatsApp: a phone, not a group, and a message from the contact on this channel within 24 hours (in the same statement).
      const contact = await db.query<{ phone: string | null; is_group: boolean; in_window: boolean }>(
        `SELECT phone, is_group, EXISTS (SELECT 1 FROM messages WHERE contact_id = $1 AND channel_id = $3 AND direction = 'inbound'
                                           AND created_at > now() - interval '24 hours') AS in_window
           FROM contacts WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL`,
        [to, auth.workspaceId, auth.channel.id],
      );
      const row = contact.rows[0];
      if (!row) throw invalid('to', 'The to field must name a contact of this workspace.');
      if (row.is_group || !row.phone) throw invalid('to', 'WhatsApp cannot reach this contact.');
      if (!row.in_window) throw invalid('type', "Outside WhatsApp's 24-hour window only template messages can be sent.");
    } else {
      const contact = await db.query(`SELECT id FROM contacts WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL`, [to, auth.workspaceId]);
      if (!contact.rows[0]) throw invalid('to', 'The to field must name a contact of this workspace.');
    }
    await db.query(`INSERT INTO contact_channels (contact_id, channel_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [to, auth.channel.id]);
    const at = new Date();
    const latest = await db.query<{ id: string; status: string }>(
      `SELECT id, status FROM conversations WHERE channel_id = $1 AND contact_id = $2
        ORDER BY (status = 'open') DESC, created_at DESC, id DESC LIMIT 1 FOR UPDATE`,
      [auth.channel.id, to],
    );
    let conversationId: string;
    if (latest.rows[0]?.status === 'open') {
      conversationId = latest.rows[0].id;
      await db.query(`UPDATE conversations SET last_message_at = $2, updated_at = $2 WHERE id = $1`, [conversationId, at]);
    } else if (!latest.rows[0]) {
      conversationId = uuid7();
      await db.query(
        `INSERT INTO conversations (id, workspace_id, channel_id, contact_id, status, last_message_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'open', $5, $5, $5)`,
        [conversationId, auth.workspaceId, auth.channel.id, to, at],
      );
      await db.query(
        `INSERT INTO conversation_state_changes (id, conversation_id, type, actor_type, actor_channel_id, actor_name)
         VALUES ($1, $2, 'opened', 'channel', $3, $4)`,
        [uuid7(), conversationId, auth.channel.id, auth.channel.name],
      );
    } else {
      // Reopening a closed conversation is not among the benchmarked sends.
      throw new Error('the floor does not reopen conversations');
    }
    const message: SentMessage = { id: uuid7(at.getTime()), conversationId, contactId: to, body: text, createdAt: at };
    await db.query(
      `INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, direction, type, body, sender_type,
                             sender_channel_id, sender_name, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'outbound', 'text', $6, 'channel', $3, $7, 'queued', $8, $8)`,
      [message.id, auth.workspaceId, auth.channel.id, conversationId, to, text, auth.channel.name, at],
    );
    await db.query(`INSERT INTO deliveries (id, workspace_id, message_id, updated_at) VALUES ($1, $2, $3, $4)`, [uuid7(), auth.workspaceId, message.id, at]);
    await recordEvent(db, auth.workspaceId, 'message.created', messageView(auth, message), at);
    if (idempotency && keyId) {
      const answer = idempotency.answer(message);
      await db.query(`UPDATE idempotency_keys SET response_status = $2, response_body = $3 WHERE id = $1`, [keyId, answer.status, JSON.stringify(answer.body)]);
    }
    return message;
  });
}

function pageParams(query: URLSearchParams): { limit: number; cursor: Cursor | undefined } {
  const raw = query.get('limit');
  const limit = raw === null ? 25 : Number(raw);
  if (!/^\d+$/.test(raw ?? '25') || limit < 1 || limit > 100) throw invalid('limit', 'The limit must be an integer between 1 and 100.');
  const cursor = query.get('cursor');
  try {
    return { limit, cursor: cursor ? decodeCursor(cursor) : undefined };
  } catch {
    throw invalid('cursor', 'The cursor is invalid.');
  }
}

/**
 * GET /contacts and GraphQL contacts — 2 statements: authenticate; one keyset
 * page (LIMIT n + 1 tells whether there is more).
 */
async function listContacts(db: pg.PoolClient, auth: Auth, limit: number, cursor: Cursor | undefined, optOuts = true) {
  const params: unknown[] = [auth.workspaceId, limit + 1];
  if (cursor) params.push(cursor.createdAt, cursor.id);
  const { rows } = await db.query<ContactRow>(
    `SELECT id, name, email, phone, is_group, created_at, updated_at${optOuts ? `, ${OPT_OUTS}` : ''} FROM contacts
      WHERE workspace_id = $1 AND deleted_at IS NULL ${cursor ? 'AND (created_at, id) < ($3, $4)' : ''}
      ORDER BY created_at DESC, id DESC LIMIT $2`,
    params,
  );
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}

interface MessageRow {
  id: string;
  conversation_id: string;
  contact_id: string;
  channel_id: string;
  direction: string;
  type: string;
  body: string;
  is_encrypted: boolean;
  status: string;
  sender_type: string;
  sender_channel_id: string | null;
  sender_user_id: string | null;
  sender_name: string | null;
  silent: boolean;
  media_urls: string[];
  failure_reason: string | null;
  media: unknown[];
  broadcast_id: string | null;
  created_at: Date;
  channel_name: string;
  user_name: string | null;
}

/**
 * GET /messages?search= — 2 statements: authenticate; the page of matching
 * messages (full-text through the GIN index, keyset order) with the names of
 * their channel and user.
 */
async function searchMessages(db: pg.PoolClient, auth: Auth, search: string | null, limit: number, cursor: Cursor | undefined) {
  const params: unknown[] = [auth.channel.id, limit + 1];
  const where = ['channel_id = $1'];
  if (search) {
    params.push(search);
    where.push(`search_vector @@ plainto_tsquery('simple'::regconfig, $${params.length})`);
  }
  if (cursor) {
    params.push(cursor.createdAt, cursor.id);
    where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  const { rows } = await db.query<MessageRow>(
    `SELECT m.*, ch.name AS channel_name, u.name AS user_name
       FROM (SELECT id, conversation_id, contact_id, channel_id, direction, type, body, is_encrypted, status, sender_type,
                    sender_channel_id, sender_user_id, sender_name, silent, media_urls, failure_reason, media, broadcast_id, created_at
               FROM messages WHERE ${where.join(' AND ')}
              ORDER BY created_at DESC, id DESC LIMIT $2) AS m
       JOIN channels ch ON ch.id = m.channel_id
       LEFT JOIN users u ON u.id = m.sender_user_id
      ORDER BY m.created_at DESC, m.id DESC`,
    params,
  );
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}

const listedMessageView = (m: MessageRow) => ({
  id: m.id,
  conversationId: m.conversation_id,
  contactId: m.contact_id,
  channelId: m.channel_id,
  direction: m.direction,
  type: m.type,
  body: m.is_encrypted ? null : m.body,
  ...(m.is_encrypted ? { placeholder: 'Encrypted message hidden' } : {}),
  isEncrypted: m.is_encrypted,
  status: m.status,
  failureReason: m.failure_reason,
  sender:
    m.sender_type === 'channel'
      ? { type: 'channel', id: m.sender_channel_id, name: m.channel_name }
      : m.sender_type === 'user'
        ? { type: 'user', id: m.sender_user_id, name: m.user_name ?? m.sender_name }
        : { type: 'external', id: null, name: m.sender_name },
  silent: m.silent,
  mediaUrls: m.media_urls,
  media: (m.media as { contentType?: string | null; filename?: string | null }[]).map((item, index) => ({
    index,
    contentType: item.contentType ?? null,
    filename: item.filename ?? null,
  })),
  broadcastId: m.broadcast_id,
  createdAt: iso(m.created_at),
});

/**
 * GraphQL conversations(first) → messages(first: 5) → contact — 3 statements:
 * authenticate; the page of conversations; the newest messages of each (a
 * LATERAL join, one statement for the whole page) with their contacts.
 */
async function conversationsWithMessages(db: pg.PoolClient, auth: Auth, first: number) {
  const conversations = await db.query<{ id: string; status: string; last_message_at: Date | null; created_at: Date }>(
    `SELECT id, status, last_message_at, created_at FROM conversations
      WHERE workspace_id = $1 AND channel_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
    [auth.workspaceId, auth.channel.id, first + 1],
  );
  const page = conversations.rows.slice(0, first);
  const messages = await db.query<{ conversation_id: string; id: string; body: string; is_encrypted: boolean; created_at: Date; contact_id: string; contact_name: string }>(
    `SELECT m.conversation_id, m.id, m.body, m.is_encrypted, m.created_at, c.id AS contact_id, c.name AS contact_name
       FROM unnest($1::uuid[]) AS conversation(id)
      CROSS JOIN LATERAL (SELECT id, conversation_id, contact_id, body, is_encrypted, created_at FROM messages
                           WHERE conversation_id = conversation.id ORDER BY created_at DESC, id DESC LIMIT 5) AS m
       JOIN contacts c ON c.id = m.contact_id
      ORDER BY m.created_at DESC, m.id DESC`,
    [page.map((c) => c.id)],
  );
  const byConversation = new Map<string, typeof messages.rows>();
  for (const row of messages.rows) byConversation.set(row.conversation_id, [...(byConversation.get(row.conversation_id) ?? []), row]);
  const last = page[page.length - 1];
  return {
    conversations: {
      edges: page.map((c) => ({
        node: {
          id: c.id,
          status: c.status,
          lastMessageAt: c.last_message_at ? iso(c.last_message_at) : null,
          messages: {
            edges: (byConversation.get(c.id) ?? []).map((m) => ({
              node: { id: m.id, body: m.is_encrypted ? null : m.body, createdAt: iso(m.created_at), contact: { id: m.contact_id, name: m.contact_name } },
            })),
          },
        },
      })),
      pageInfo: { hasNextPage: conversations.rows.length > first, endCursor: last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null },
    },
  };
}

/**
 * The inbox page, newest activity first: the channel's conversations by `last_message_at` (its
 * index), one past the limit, with `extra` (select list entries) over the page `p` joined to its
 * assignee `u`, newest message `m`, that message's channel `ch`, user `su` and contact `sc`, and
 * the conversation's contact `ct`.
 */
function inboxSql(extra: string, after: boolean): string {
  return `SELECT p.id, p.last_message_at, ${extra}
       FROM (SELECT * FROM conversations WHERE workspace_id = $1 AND channel_id = $2
               ${after ? 'AND (last_message_at, id) < ($4, $5)' : ''}
              ORDER BY last_message_at DESC, id DESC LIMIT $3) AS p
       LEFT JOIN users u ON u.id = p.assignee_id
       LEFT JOIN messages m ON m.id = p.last_message_id
       LEFT JOIN channels ch ON ch.id = m.channel_id
       LEFT JOIN users su ON su.id = m.sender_user_id
       LEFT JOIN contacts sc ON sc.id = m.sender_contact_id
       LEFT JOIN contacts ct ON ct.id = p.contact_id
      ORDER BY p.last_message_at DESC, p.id DESC`;
}

/** The conversation view (REST), built by PostgreSQL over `inboxSql`'s joins. */
const INBOX_VIEW = `json_build_object(
  'id', p.id, 'status', p.status, 'contactId', p.contact_id, 'channelId', p.channel_id,
  'assignee', CASE WHEN u.id IS NULL THEN NULL ELSE json_build_object('id', u.id, 'name', u.name, 'email', u.email) END,
  'labels', p.labels, 'unreadCount', p.unread_count, 'lastReadAt', ${isoSql('p.last_read_at')},
  -- the floor's inbox is read by backend credentials, never assigned anything
  'assignedToMe', false,
  'lastMessage', CASE WHEN m.id IS NULL THEN NULL ELSE json_build_object(
    'id', m.id, 'conversationId', m.conversation_id, 'contactId', m.contact_id, 'channelId', m.channel_id,
    'direction', m.direction, 'type', m.type, 'body', CASE WHEN m.is_encrypted THEN NULL ELSE m.body END,
    'isEncrypted', m.is_encrypted, 'status', m.status, 'failureReason', m.failure_reason,
    'sender', CASE m.sender_type
      WHEN 'channel' THEN json_build_object('type', 'channel', 'id', m.sender_channel_id, 'name', ch.name)
      WHEN 'user' THEN json_build_object('type', 'user', 'id', m.sender_user_id, 'name', coalesce(su.name, m.sender_name))
      WHEN 'contact' THEN json_build_object('type', 'contact', 'id', m.sender_contact_id, 'name', coalesce(sc.name, m.sender_name))
      ELSE json_build_object('type', 'external', 'id', NULL, 'name', m.sender_name) END,
    'silent', m.silent, 'mediaUrls', m.media_urls, 'media', '[]'::json, 'broadcastId', m.broadcast_id, 'createdAt', ${isoSql('m.created_at')}) END,
  'lastMessageAt', ${isoSql('p.last_message_at')}, 'closedAt', ${isoSql('p.closed_at')}, 'createdAt', ${isoSql('p.created_at')},
  'stateChanges', coalesce((
    SELECT json_agg(json_build_object('type', sc2.type, 'at', ${isoSql('sc2.created_at')},
             'actor', json_build_object('type', sc2.actor_type,
               'id', CASE sc2.actor_type WHEN 'channel' THEN sc2.actor_channel_id WHEN 'user' THEN sc2.actor_user_id WHEN 'contact' THEN sc2.actor_contact_id END,
               'name', coalesce(au.name, sc2.actor_name))) ORDER BY sc2.created_at, sc2.id)
      FROM conversation_state_changes sc2 LEFT JOIN users au ON au.id = sc2.actor_user_id
     WHERE sc2.conversation_id = p.id), '[]'::json)) AS view`;

/**
 * GET /conversations?sort=last_message (the inbox page) — 2 statements: authenticate; the page
 * with each conversation's view (assignee, newest message with its sender, state changes) built
 * by PostgreSQL.
 */
async function inboxView(db: pg.PoolClient, auth: Auth, limit: number, cursor: Cursor | undefined) {
  const params: unknown[] = [auth.workspaceId, auth.channel.id, limit + 1];
  if (cursor) params.push(cursor.createdAt, cursor.id);
  const { rows } = await db.query<{ id: string; last_message_at: Date; view: unknown }>(inboxSql(INBOX_VIEW, !!cursor), params);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const more = rows.length > limit;
  return { data: page.map((row) => row.view), meta: { per_page: limit, next_cursor: more && last ? encodeCursor({ createdAt: last.last_message_at, id: last.id }) : null, has_more: more } };
}

/**
 * GraphQL BenchInbox — 2 statements: authenticate; the page with the columns the document asks
 * for, its assignees, contacts and newest messages joined.
 */
async function inboxNodes(db: pg.PoolClient, auth: Auth, first: number) {
  const { rows } = await db.query(
    inboxSql(
      `p.status, p.unread_count, p.last_read_at, p.labels, u.id AS u_id, u.name AS u_name, u.email AS u_email,
       ct.id AS ct_id, ct.name AS ct_name, ct.phone AS ct_phone, ct.email AS ct_email,
       m.id AS m_id, m.type AS m_type, m.body AS m_body, m.is_encrypted AS m_encrypted, m.status AS m_status, m.created_at AS m_created_at, m.direction AS m_direction`,
      false,
    ),
    [auth.workspaceId, auth.channel.id, first + 1],
  );
  const page = rows.slice(0, first);
  const last = page[page.length - 1];
  return {
    conversations: {
      edges: page.map((r) => ({
        node: {
          id: r.id,
          status: r.status,
          unreadCount: r.unread_count,
          lastReadAt: r.last_read_at ? iso(r.last_read_at) : null,
          labels: r.labels,
          assignee: r.u_id ? { id: r.u_id, name: r.u_name, email: r.u_email } : null,
          contact: { id: r.ct_id, name: r.ct_name, phoneNumber: r.ct_phone, email: r.ct_email },
          lastMessage: r.m_id
            ? { id: r.m_id, type: r.m_type, body: r.m_encrypted ? null : r.m_body, status: r.m_status, createdAt: iso(r.m_created_at), direction: r.m_direction }
            : null,
        },
      })),
      pageInfo: { hasNextPage: rows.length > first, endCursor: last ? encodeCursor({ createdAt: last.last_message_at, id: last.id }) : null },
    },
  };
}

// ── Delivery worker ───────────────────────────────────────────────────────────

const WORKER_ID = `floor:${process.pid}:${randomUUID().slice(0, 6)}`;
let draining = false;
let wanted = false;

/**
 * Takes the outbox rows of queued messages and delivers them, a batch at a time
 * in 2 statements: claim up to 100 due message deliveries (the gateway's claim)
 * with what sending them needs (message, recipient's phone, channel's provider);
 * then, once the batch is posted, mark the delivered ones succeeded, their
 * messages sent, record their WhatsApp message ids and queue
 * `message.status_changed` events (one statement). A whatsapp_cloud message is
 * posted to the Cloud API (WHATSAPP_API_URL, the bench's local stand-in); on a
 * channel without a webhook URL accepting a message is sending it, as the
 * gateway's accept provider does. The connection is not held while posting.
 */
function wakeWorker(): void {
  if (process.env.DELIVERY_WORKER === '0') return;
  wanted = true;
  if (draining) return;
  draining = true;
  void (async () => {
    try {
      while (wanted) {
        wanted = false;
        for (;;) {
          const { rows } = await pool.query<Claimed>(CLAIM, [WORKER_ID]);
          if (rows.length === 0) break;
          const posted = await Promise.all(rows.map((row) => (row.provider === 'whatsapp_cloud' ? postWhatsApp(row) : Promise.resolve(''))));
          const done = rows.filter((_row, i) => posted[i] !== null);
          const sentToWhatsApp = done.filter((row) => row.provider === 'whatsapp_cloud');
          await pool.query(FINISH, [
            done.map((row) => row.id),
            WORKER_ID,
            sentToWhatsApp.map((row) => row.channel_id),
            sentToWhatsApp.map((row) => posted[rows.indexOf(row)]),
            sentToWhatsApp.map((row) => row.message_id),
          ]);
        }
      }
    } catch (error) {
      process.stderr.write(`delivery failed: ${(error as Error).message}\n`);
    } finally {
      draining = false;
    }
  })();
}

interface Claimed {
  id: string;
  message_id: string;
  channel_id: string;
  body: string;
  phone: string | null;
  provider: string;
  phone_number_id: string | null;
  provider_secrets: string | null;
}

const CLAIM = `
  WITH claimed AS (
    UPDATE deliveries AS d
       SET locked_by = $1, locked_until = now() + interval '30 seconds', attempts = d.attempts + 1, updated_at = now()
     WHERE d.id IN (SELECT id FROM deliveries
                     WHERE status = 'pending' AND message_id IS NOT NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until < now())
                     ORDER BY run_at LIMIT 100 FOR UPDATE SKIP LOCKED)
    RETURNING d.id, d.message_id)
  SELECT claimed.id, m.id AS message_id, m.channel_id, m.body, contact.phone,
         ${PROVIDERS ? `channel.provider, channel.provider_settings ->> 'phoneNumberId' AS phone_number_id, channel.provider_secrets` : `'webhook'::text AS provider, NULL AS phone_number_id, NULL AS provider_secrets`}
    FROM claimed
    JOIN messages AS m ON m.id = claimed.message_id
    JOIN contacts AS contact ON contact.id = m.contact_id
    JOIN channels AS channel ON channel.id = m.channel_id`;

const sealer = process.env.SECRETS_KEY ? new Sealer(parseKey(process.env.SECRETS_KEY)!) : null;
const whatsappAgent = new http.Agent({ keepAlive: true, maxSockets: 10 });
/** Channels' opened provider credentials; a channel's credentials do not change during a run. */
const openedSecrets = new Map<string, Record<string, string>>();

function secretsOf(channelId: string, sealed: string | null): Record<string, string> {
  let secrets = openedSecrets.get(channelId);
  if (!secrets) {
    secrets = sealed && sealer ? (JSON.parse(sealer.open(sealed)) as Record<string, string>) : {};
    openedSecrets.set(channelId, secrets);
  }
  return secrets;
}

/** One text to the WhatsApp Cloud API, as the gateway sends it: its message id, or null when it was not taken. */
function postWhatsApp(row: Claimed): Promise<string | null> {
  const base = (process.env.WHATSAPP_API_URL ?? '').replace(/\/+$/, '');
  const body = JSON.stringify({
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: (row.phone ?? '').replace(/^\+/, ''),
    type: 'text',
    text: { body: row.body, preview_url: false },
  });
  const token = secretsOf(row.channel_id, row.provider_secrets).accessToken ?? '';
  return new Promise((resolve) => {
    const request = http.request(
      `${base}/v21.0/${encodeURIComponent(row.phone_number_id ?? '')}/messages`,
      { method: 'POST', agent: whatsappAgent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages?: { id?: string }[] };
            resolve(response.statusCode === 200 && answer.messages?.[0]?.id ? answer.messages[0].id : null);
          } catch {
            resolve(null);
          }
        });
        response.on('error', () => resolve(null));
      },
    );
    request.setTimeout(10_000, () => request.destroy());
    request.on('error', () => resolve(null));
    request.end(body);
  });
}

const FINISH = `
  WITH ${
    PROVIDERS
      ? `provider_ids AS (
    INSERT INTO provider_message_ids (channel_id, provider_id, message_id, part)
    SELECT channel_id, provider_id, message_id, 0 FROM unnest($3::uuid[], $4::text[], $5::uuid[]) AS sent(channel_id, provider_id, message_id)
    ON CONFLICT DO NOTHING),`
      : `provider_ids AS (SELECT $3::uuid[], $4::text[], $5::uuid[]),`
  }
  done AS (
    UPDATE deliveries SET status = 'succeeded', locked_by = NULL, locked_until = NULL, last_error = NULL, updated_at = now()
     WHERE id = ANY($1::uuid[]) AND locked_by = $2 AND status = 'pending' AND message_id IS NOT NULL
    RETURNING message_id, attempts),
  sent AS (
    UPDATE messages AS m SET status = 'sent', sent_at = now(), delivery_attempts = done.attempts, last_error = NULL, updated_at = now()
      FROM done WHERE m.id = done.message_id
    RETURNING m.*)
  INSERT INTO deliveries (id, workspace_id, endpoint_id, event_type, payload)
  SELECT gen_random_uuid(), endpoint.workspace_id, endpoint.id, 'message.status_changed',
         json_build_object('type', 'message.status_changed', 'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'data', json_build_object(
             'id', sent.id, 'conversationId', sent.conversation_id, 'contactId', sent.contact_id, 'channelId', sent.channel_id,
             'direction', sent.direction, 'type', sent.type, 'body', CASE WHEN sent.is_encrypted THEN NULL ELSE sent.body END,
             'isEncrypted', sent.is_encrypted, 'status', sent.status, 'failureReason', sent.failure_reason,
             'sender', json_build_object('type', sent.sender_type,
                                         'id', CASE sent.sender_type WHEN 'channel' THEN sent.sender_channel_id WHEN 'user' THEN sent.sender_user_id END,
                                         'name', CASE sent.sender_type WHEN 'channel' THEN channel.name WHEN 'user' THEN coalesce(u.name, sent.sender_name) ELSE sent.sender_name END),
             'silent', sent.silent, 'mediaUrls', sent.media_urls, 'media', '[]'::json, 'broadcastId', sent.broadcast_id,
             'createdAt', to_char(sent.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
    FROM sent
    JOIN channels AS channel ON channel.id = sent.channel_id
    LEFT JOIN users AS u ON u.id = sent.sender_user_id
    JOIN webhook_endpoints AS endpoint ON endpoint.workspace_id = sent.workspace_id
     AND (coalesce(cardinality(endpoint.events), 0) = 0 OR 'message.status_changed' = ANY(endpoint.events))`;

// ── HTTP ──────────────────────────────────────────────────────────────────────

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) reject(new HttpFailure(413, { status: 'error', message: 'Request body too large.' }));
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpFailure(400, { status: 'error', message: 'Malformed JSON body.' });
  }
}

function respond(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

function idempotencyKeyOf(value: string | string[] | undefined, field: string): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(value)) throw invalid(field, 'The Idempotency-Key must be 1 to 255 printable ASCII characters.');
  return value;
}

async function rest(db: pg.PoolClient, auth: Auth, request: http.IncomingMessage, url: URL, text: string): Promise<[number, unknown, Record<string, string>?]> {
  const path = url.pathname.slice('/api/connect'.length);
  const patch = /^\/contacts\/([^/]+)$/.exec(path);
  if (request.method === 'PATCH' && patch) {
    const contact = await updateContactName(db, auth, decodeURIComponent(patch[1]!), parseJson(text));
    return [200, { data: { contact: contactView(contact) } }];
  }
  if (request.method === 'POST' && path === '/contacts') {
    const contact = await createContact(db, auth, parseJson(text));
    return [201, { data: { contact: contactView(contact) } }];
  }
  if (request.method === 'POST' && path === '/messages') {
    const body = parseJson(text) as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') throw invalid('body', 'The body must be a JSON object.');
    const key = idempotencyKeyOf(request.headers['idempotency-key'], 'Idempotency-Key');
    const answer = (m: SentMessage) => ({ status: 202, body: { data: { message: messageView(auth, m) } } });
    const route = `POST /messages ${auth.channel.id}`;
    const result = await sendText(db, auth, { to: body.to, message: body.message }, key ? { route, key, hash: requestHash(body), answer } : null);
    wakeWorker();
    if (result instanceof Replay) return [result.status, result.body, { 'idempotent-replayed': 'true' }];
    const { status, body: view } = answer(result);
    return [status, view];
  }
  if (request.method === 'GET' && path === '/contacts') {
    if (url.searchParams.get('search')) throw new HttpFailure(422, { message: 'The floor lists contacts without search.' });
    const { limit, cursor } = pageParams(url.searchParams);
    const page = await listContacts(db, auth, limit, cursor);
    const last = page.rows[page.rows.length - 1];
    return [200, { data: page.rows.map(contactView), meta: { per_page: limit, next_cursor: page.more && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null, has_more: page.more } }];
  }
  if (request.method === 'GET' && path === '/messages') {
    const { limit, cursor } = pageParams(url.searchParams);
    const page = await searchMessages(db, auth, url.searchParams.get('search'), limit, cursor);
    const last = page.rows[page.rows.length - 1];
    return [200, { data: page.rows.map(listedMessageView), meta: { per_page: limit, next_cursor: page.more && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null, has_more: page.more } }];
  }
  if (request.method === 'GET' && path === '/conversations' && url.searchParams.get('sort') === 'last_message') {
    const { limit, cursor } = pageParams(url.searchParams);
    return [200, await inboxView(db, auth, limit, cursor)];
  }
  throw new HttpFailure(404, { status: 'error', message: 'Route not found.' });
}

/** The bench's GraphQL documents, recognised by operation name; variables as the bench sends them. */
async function graphql(db: pg.PoolClient, auth: Auth, text: string): Promise<unknown> {
  const { operationName, variables = {} } = (parseJson(text) ?? {}) as { operationName?: string; variables?: Record<string, any> };
  switch (operationName) {
    case 'BenchUpdateContact': {
      const contact = await updateContactName(db, auth, String(variables.id), variables.input);
      return { data: { updateContact: { contact: { id: contact.id, name: contact.name, email: contact.email, phoneNumber: contact.phone, updatedAt: iso(contact.updated_at) }, userErrors: [] } } };
    }
    case 'BenchSendMessage': {
      const input = variables.input ?? {};
      const { idempotencyKey, ...rest } = input;
      const key = idempotencyKeyOf(idempotencyKey ?? undefined, 'idempotencyKey');
      const route = `graphql sendMessage ${auth.channel.id}`;
      const answer = (m: SentMessage) => ({ status: 200, body: { id: m.id, userErrors: [] } });
      const result = await sendText(db, auth, { to: input.to?.contactId, message: input.message }, key ? { route, key, hash: requestHash(rest), answer } : null);
      wakeWorker();
      if (result instanceof Replay) throw new HttpFailure(422, { message: 'The floor does not replay GraphQL sends.' });
      const m = result;
      return { data: { sendMessage: { message: { id: m.id, conversationId: m.conversationId, contactId: m.contactId, status: 'queued', body: m.body, createdAt: m.createdAt.toISOString() }, userErrors: [] } } };
    }
    case 'BenchContacts': {
      const first = Number(variables.first ?? 25);
      const after = variables.after ? decodeCursor(String(variables.after), 'after') : undefined;
      const page = await listContacts(db, auth, first, after, false);
      const last = page.rows[page.rows.length - 1];
      return {
        data: {
          contacts: {
            edges: page.rows.map((row) => ({ cursor: encodeCursor({ createdAt: row.created_at, id: row.id }), node: contactView(row) })),
            pageInfo: { hasNextPage: page.more, endCursor: last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null },
          },
        },
      };
    }
    case 'BenchInbox':
      return { data: await inboxNodes(db, auth, Number(variables.first ?? 25)) };
    case 'BenchConversations':
      return { data: await conversationsWithMessages(db, auth, Number(variables.first ?? 25)) };
    default:
      throw new HttpFailure(400, { errors: [{ message: `The floor does not know operation ${operationName}.` }] });
  }
}

// ── Inbound webhooks ──────────────────────────────────────────────────────────

/** A webhook channel with its app secret opened, kept 5 s as the gateway keeps it (AUTH_CACHE_MS). */
const webhookChannels = new Map<string, { until: number; channel: { id: string; workspace_id: string; app_secret: string } | null }>();

async function webhookChannel(id: string): Promise<{ id: string; workspace_id: string; app_secret: string } | null> {
  const now = Date.now();
  const kept = webhookChannels.get(id);
  if (kept && kept.until > now) return kept.channel;
  const { rows } = await pool.query<{ id: string; workspace_id: string; provider_secrets: string | null }>(
    `SELECT id, workspace_id, provider_secrets FROM channels WHERE id = $1 AND status = 'active' AND provider = 'whatsapp_cloud'`,
    [id],
  );
  const row = rows[0];
  const channel = row ? { id: row.id, workspace_id: row.workspace_id, app_secret: secretsOf(row.id, row.provider_secrets).appSecret ?? '' } : null;
  webhookChannels.set(id, { until: now + 5000, channel });
  return channel;
}

/**
 * POST /webhooks/whatsapp/{channelId} — 1 statement (and one channel read per
 * 5 s): the channel (active, whatsapp_cloud) with its app secret; the
 * X-Hub-Signature-256 header's form; the body (at most 1 MiB); its HMAC-SHA256
 * under the app secret, compared in constant time; that it is a JSON object;
 * then the raw event and the delivery that will process it, in one statement,
 * before answering 200. Nothing processes the floor's events.
 */
async function whatsappWebhook(request: http.IncomingMessage, response: http.ServerResponse, channelId: string): Promise<void> {
  const text = (status: number, body: string) => {
    response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  };
  if (request.method !== 'POST') return text(405, 'Method not allowed.');
  const channel = UUID.test(channelId) ? await webhookChannel(channelId.toLowerCase()) : null;
  if (!channel) return text(404, 'Channel not found.');
  const header = request.headers['x-hub-signature-256'];
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/i.test(header.trim())) return text(401, 'Missing or malformed X-Hub-Signature-256.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) return text(413, 'Request body too large.');
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  const expected = createHmac('sha256', channel.app_secret).update(body).digest();
  const given = Buffer.from(header.trim().slice('sha256='.length), 'hex');
  if (!channel.app_secret || given.length !== expected.length || !timingSafeEqual(given, expected)) return text(401, 'The signature does not match the body.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return text(400, 'The body is not a JSON object.');
  await pool.query(
    `WITH event AS (
       INSERT INTO inbound_events (id, workspace_id, channel_id, provider, headers, body)
       VALUES ($1, $2, $3, 'whatsapp_cloud', $4, $5)
       RETURNING id, workspace_id)
     INSERT INTO deliveries (id, workspace_id, inbound_event_id) SELECT $6, workspace_id, id FROM event`,
    [uuid7(), channel.workspace_id, channel.id, JSON.stringify({ 'content-type': request.headers['content-type'] ?? '' }), body, uuid7()],
  );
  text(200, 'OK');
}

async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://floor');
  if (url.pathname === '/readyz' || url.pathname === '/healthz') {
    await pool.query('SELECT 1');
    return respond(response, 200, { status: 'ok' });
  }
  const webhook = /^\/webhooks\/whatsapp\/([^/]+)$/.exec(url.pathname);
  if (webhook) {
    try {
      return await whatsappWebhook(request, response, webhook[1]!);
    } catch (error) {
      process.stderr.write(`${request.method} /webhooks/whatsapp failed: ${(error as Error).stack}\n`);
      return respond(response, 500, { status: 'error', message: 'Internal server error' });
    }
  }
  const isGraphQL = url.pathname === '/graphql';
  if (!isGraphQL && !url.pathname.startsWith('/api/connect/')) return respond(response, 404, { status: 'error', message: 'Route not found.' });
  let db: pg.PoolClient | undefined;
  try {
    const text = await readBody(request);
    db = await pool.connect();
    const auth = await authenticate(db, request);
    if (isGraphQL) return respond(response, 200, await graphql(db, auth, text));
    const [status, body, headers] = await rest(db, auth, request, url, text);
    respond(response, status, body, headers);
  } catch (error) {
    if (error instanceof HttpFailure) {
      const body = isGraphQL && error.status === 401 ? { errors: [{ message: 'Unauthenticated.', extensions: { code: 'UNAUTHENTICATED' } }] } : error.body;
      return respond(response, error.status, body, error.headers);
    }
    process.stderr.write(`${request.method} ${url.pathname} failed: ${(error as Error).stack}\n`);
    respond(response, 500, { status: 'error', message: 'Internal server error' });
  } finally {
    db?.release();
  }
}

const server = http.createServer((request, response) => void handle(request, response));
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT || 4100), '127.0.0.1', () => {
  process.stdout.write(`floor listening on http://127.0.0.1:${(server.address() as { port: number }).port}\n`);
});

async function stop() {
  server.close();
  server.closeIdleConnections();
  await pool.end().catch(() => {});
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
