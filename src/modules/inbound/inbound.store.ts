import type { Database } from '../../db/database.js';
import { uuid7 } from '../../lib/uuid.js';
import { activeTraceparent } from '../../lib/tracing.js';

/** The event and the delivery that will process it, in one statement: both or neither. */
const STORE_EVENT = `
    WITH event AS (
      INSERT INTO inbound_events (id, workspace_id, channel_id, provider, headers, body)
      VALUES ($1::uuid, $2::uuid, $3::uuid, $4::text, $5::jsonb, $6)
      RETURNING id, workspace_id)
    INSERT INTO deliveries (id, workspace_id, inbound_event_id, trace_parent) SELECT $7::uuid, workspace_id, id, $8::text FROM event`;

function storeParams(channel: { id: string; workspaceId: string }, provider: string, headers: Record<string, string>, body: Buffer): unknown[] {
  return [uuid7(), channel.workspaceId, channel.id, provider, JSON.stringify(headers), body, uuid7(), activeTraceparent()];
}

/**
 * An email for each channel it is addressed to, with the deliveries that will process them, in
 * one statement: all or none. The body is sent once, however many channels it is stored for:
 * `body` is the bytes as a bytea parameter, or their base64 decoded by the database.
 */
function storeEmailSql(body: string): string {
  return `
    WITH given AS (
      SELECT g.id, g.workspace_id, g.channel_id, g.delivery_id, $4::jsonb -> (g.n::int - 1) AS headers
        FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $5::uuid[]) WITH ORDINALITY AS g(id, workspace_id, channel_id, delivery_id, n)),
    event AS (
      INSERT INTO inbound_events (id, workspace_id, channel_id, provider, headers, body)
      SELECT id, workspace_id, channel_id, 'smtp', headers, ${body} FROM given
      RETURNING id, workspace_id)
    INSERT INTO deliveries (id, workspace_id, inbound_event_id, trace_parent)
    SELECT given.delivery_id, event.workspace_id, event.id, $7::text FROM event JOIN given ON given.id = event.id`;
}
const STORE_EMAIL = { bytes: storeEmailSql('$6'), base64: storeEmailSql("decode($6, 'base64')") };

/**
 * Stores an email as it arrived, once for each channel it is addressed to (with the headers of
 * that copy), with the deliveries that will process them (in the trace of the mail, when traced): all or none, before the listener
 * answers, so a crash after the answer loses nothing. How the body travels is what a flood of
 * 10 MiB mails costs in memory: on PostgreSQL as bytes straight to the pool (Prisma's raw-query
 * path held several copies of each at once); on PGlite, where statements go through Prisma, as
 * base64 text, which Prisma passes on as it is (bytes it converted at some 200 MiB of heap and
 * 8 s per 10 MiB mail; base64 at a tenth of both).
 */
export async function storeInboundEmail(
  db: Pick<Database, 'execute' | 'kind'>,
  copies: { channel: { id: string; workspaceId: string }; headers: Record<string, string> }[],
  body: Buffer,
): Promise<void> {
  if (!copies.length) return;
  const asText = db.kind === 'pglite';
  await db.execute(asText ? STORE_EMAIL.base64 : STORE_EMAIL.bytes, [
    copies.map(() => uuid7()),
    copies.map((copy) => copy.channel.workspaceId),
    copies.map((copy) => copy.channel.id),
    JSON.stringify(copies.map((copy) => copy.headers)),
    copies.map(() => uuid7()),
    asText ? body.toString('base64') : body,
    // The mail's span when tracing is on: the attempts that read it join its trace (docs/operations.md#tracing).
    activeTraceparent(),
  ]);
}

/**
 * Stores a provider's webhook as it arrived with the delivery that will process it, in one
 * statement on the database's pool: both or neither, before the route answers, so a crash after
 * the answer loses nothing.
 */
export async function storeInboundWebhook(
  db: Pick<Database, 'execute'>,
  channel: { id: string; workspaceId: string },
  provider: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<void> {
  await db.execute(STORE_EVENT, storeParams(channel, provider, headers, body));
}
