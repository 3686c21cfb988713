import type pg from 'pg';
import { encodeCursor } from '../src/lib/pagination.js';
import { TOKEN_PREFIX, displayPrefix, generateToken, hashToken } from '../src/lib/tokens.js';
import { DOCUMENTS, REGISTERED, type BenchContext } from './operations.js';
import { BENCH_WHATSAPP, type Fixture } from './seed.js';

/** How many different contacts the write operations cycle over: enough that 16 connections never wait on one row. */
const POOL = 20_000;
/** How many contacts write in on WhatsApp: each gets a conversation on the WhatsApp channel, then replies from it. */
const WHATSAPP_SENDERS = 2_000;

/**
 * What the operations need, read from the seeded data: contacts to update and to
 * send to (spread over the whole table), and a cursor `depth` rows deep (the last
 * full page when `depth` is not given).
 */
export async function loadContext(
  client: pg.ClientBase,
  fixture: Fixture,
  run: string,
  whatsapp: { channelId: string; apiKey: string },
): Promise<BenchContext> {
  const patch = await client.query<{ id: string }>(
    `SELECT id FROM contacts WHERE workspace_id = $1 AND deleted_at IS NULL AND NOT is_group ORDER BY md5(id::text) LIMIT $2`,
    [fixture.workspaceId, POOL],
  );
  const send = await client.query<{ id: string }>(
    `SELECT contact_id AS id FROM conversations WHERE channel_id = $1 AND status = 'open' ORDER BY md5(id::text) LIMIT $2`,
    [fixture.channelId, POOL],
  );
  const deep = await deepCursor(client, 'contacts', 'workspace_id = $1 AND deleted_at IS NULL', fixture.workspaceId);
  const deepMessages = await deepCursor(client, 'messages', 'channel_id = $1', fixture.channelId);
  const long = await client.query<{ id: string; n: string }>(
    `SELECT conversation_id AS id, count(*) AS n FROM messages WHERE channel_id = $1 GROUP BY conversation_id ORDER BY count(*) DESC LIMIT 1`,
    [fixture.channelId],
  );
  if (!patch.rows.length || !send.rows.length) throw new Error('the seeded data has no contacts or no open conversations to run the writes on');
  // The documents sent by id, registered for the workspace as a client's deploy step does.
  for (const [name, hash] of Object.entries(REGISTERED)) {
    await client.query(`INSERT INTO graphql_documents (workspace_id, hash, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
      fixture.workspaceId,
      hash,
      DOCUMENTS[name as keyof typeof REGISTERED],
    ]);
  }
  const phones = await client.query<{ phone: string }>(
    `SELECT phone FROM contacts WHERE id = ANY($1::uuid[]) AND phone IS NOT NULL AND NOT is_group ORDER BY md5(id::text) LIMIT $2`,
    [send.rows.map((r) => r.id), WHATSAPP_SENDERS],
  );
  return {
    host: fixture.host,
    apiKey: fixture.apiKey,
    sessionToken: await mintSession(client, fixture),
    patchContacts: patch.rows.map((r) => r.id),
    sendContacts: send.rows.map((r) => r.id),
    deepCursor: deep.cursor,
    deepRows: deep.rows,
    deepMessagesCursor: deepMessages.cursor,
    deepMessagesRows: deepMessages.rows,
    longConversation: { id: long.rows[0]!.id, messages: Number(long.rows[0]!.n) },
    run,
    whatsapp: { ...whatsapp, appSecret: BENCH_WHATSAPP.appSecret, phoneNumberId: BENCH_WHATSAPP.phoneNumberId, phones: phones.rows.map((r) => r.phone) },
  };
}

/** The cursor after row `rows − 50` of a newest-first list: a page about as deep as the data goes. */
async function deepCursor(client: pg.ClientBase, table: string, where: string, scope: string): Promise<{ cursor: string; rows: number }> {
  const { rows: counted } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, [scope]);
  const rows = Math.max(1, Number(counted[0]!.n) - 50);
  const { rows: found } = await client.query<{ created_at: Date; id: string }>(
    `SELECT created_at, id FROM ${table} WHERE ${where} ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [scope, rows - 1],
  );
  const row = found[0];
  if (!row) throw new Error(`no row of ${table} to build the deep cursor from`);
  return { cursor: encodeCursor({ createdAt: row.created_at, id: row.id }), rows };
}

/**
 * A session token for an agent of the workspace, minted with the channel key over its channel with
 * every scope, as POST /sessions stores one (CONTRACT §7), for the day the run lasts at most. Null
 * when the measured version's schema has no sessions (--ref of an older commit).
 */
async function mintSession(client: pg.ClientBase, fixture: Fixture): Promise<string | null> {
  const token = generateToken(TOKEN_PREFIX.session);
  try {
    await client.query(
      `WITH agent AS (
         INSERT INTO users (id, workspace_id, name, email, email_normalized)
         VALUES (gen_random_uuid(), $1, 'Bench Agent', 'bench.agent@example.com', 'bench.agent@example.com')
         ON CONFLICT (workspace_id, email_normalized) DO UPDATE SET name = EXCLUDED.name
         RETURNING id)
       INSERT INTO access_tokens (id, workspace_id, kind, user_id, minted_by_id, scopes, channel_ids, token_hash, prefix, expires_at)
       SELECT gen_random_uuid(), $1, 'session', agent.id, key.id, ARRAY['read','send','contacts','conversations'], ARRAY[$2::uuid], $3, $4, now() + interval '1 day'
         FROM agent, access_tokens key WHERE key.token_hash = $5`,
      [fixture.workspaceId, fixture.channelId, hashToken(token), displayPrefix(token), hashToken(fixture.apiKey)],
    );
    return token;
  } catch {
    return null;
  }
}
