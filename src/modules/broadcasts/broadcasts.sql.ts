import { Prisma } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import { isoSql } from '../../db/view.js';
import type { BroadcastCounts, BroadcastView, RecipientStatus } from './broadcasts.schemas.js';

/** A broadcast as its view reads it: its row and its recipients counted by status. */
export interface BroadcastRow {
  id: string;
  workspaceId: string;
  channelId: string;
  name: string;
  status: BroadcastView['status'];
  ratePerSecond: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  counts: BroadcastCounts;
}

/**
 * A recipient's status in SQL over `r` (broadcast_recipients) and `m` (its message, if made):
 * pending until its message leaves the queue, then that message's status; skipped or failed
 * before any message was made.
 */
export const RECIPIENT_STATUS_SQL = Prisma.sql`CASE r.state
  WHEN 'pending' THEN 'pending'
  WHEN 'skipped' THEN 'skipped'
  WHEN 'failed' THEN 'failed'
  ELSE CASE m.status WHEN 'queued' THEN 'pending' ELSE m.status::text END END`;

/** The counts of broadcast `alias` (written in code), as one JSON object, in one pass over its recipients. */
function countsSql(alias: string): Prisma.Sql {
  const id = Prisma.raw(`${alias}.id`);
  const status = (name: RecipientStatus) => Prisma.sql`count(*) FILTER (WHERE ${RECIPIENT_STATUS_SQL} = ${name})`;
  return Prisma.sql`(SELECT json_build_object('total', count(*), 'pending', ${status('pending')}, 'sent', ${status('sent')},
      'delivered', ${status('delivered')}, 'read', ${status('read')}, 'failed', ${status('failed')}, 'skipped', ${status('skipped')})
      FROM broadcast_recipients AS r LEFT JOIN messages AS m ON m.id = r.message_id
     WHERE r.broadcast_id = ${id})`;
}

/** The columns of a broadcast's row with its counts, from `alias`. */
export function broadcastColumns(alias = 'b'): Prisma.Sql {
  const b = Prisma.raw(alias);
  return Prisma.sql`${b}.id, ${b}.workspace_id AS "workspaceId", ${b}.channel_id AS "channelId", ${b}.name, ${b}.status::text AS status,
    ${b}.rate_per_second AS "ratePerSecond", ${b}.created_at AS "createdAt", ${b}.started_at AS "startedAt", ${b}.finished_at AS "finishedAt",
    ${countsSql(alias)} AS counts`;
}

/** One broadcast of the workspace with its counts, or none. */
export async function broadcastById(sql: RunSql, workspaceId: string, id: string): Promise<BroadcastRow | undefined> {
  const [row] = await sql<BroadcastRow>(Prisma.sql`SELECT ${broadcastColumns()} FROM broadcasts AS b WHERE b.id = ${id}::uuid AND b.workspace_id = ${workspaceId}::uuid`);
  return row;
}

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);

export function broadcastView(row: BroadcastRow): BroadcastView {
  return {
    id: row.id,
    name: row.name,
    channelId: row.channelId,
    status: row.status,
    ratePerSecond: row.ratePerSecond,
    counts: row.counts,
    createdAt: new Date(row.createdAt).toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
  };
}

/** The broadcast's view as SQL yielding JSON (an event's data, written by the statement that makes the change). */
export function broadcastViewSql(id: string): Prisma.Sql {
  return Prisma.sql`(SELECT json_build_object('id', b.id, 'name', b.name, 'channelId', b.channel_id, 'status', b.status, 'ratePerSecond', b.rate_per_second,
      'counts', ${countsSql('b')},
      'createdAt', ${isoSql(Prisma.sql`b.created_at`)}, 'startedAt', ${isoSql(Prisma.sql`b.started_at`)}, 'finishedAt', ${isoSql(Prisma.sql`b.finished_at`)})
      FROM broadcasts AS b WHERE b.id = ${id}::uuid)`;
}
