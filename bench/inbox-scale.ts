/**
 * The inbox at scale (`--inbox-scale N`): N more conversations on the bench's channel, made by
 * PostgreSQL itself, then the first inbox page unfiltered against its filtered and searched pages,
 * one request at a time on the gateway.
 */
import type pg from 'pg';
import { sequentialLatency, type Latency } from './measure.js';
import type { BenchContext, BenchRequest } from './operations.js';
import { inChunks, SEARCH_TERMS, type Fixture } from './seed.js';
import type { ServerProcess } from './servers.js';

/** The most a filtered or searched page's p50 may be, as a multiple of the unfiltered page's. */
export const INBOX_FILTER_LIMIT = 1.5;

export interface InboxAtScale {
  /** Conversations of the channel when measured. */
  conversations: number;
  seedSeconds: number;
  unfiltered: Latency;
  /** Each filtered page: its query string, its latency, and its p50 over the unfiltered page's. */
  pages: Record<string, { query: string; latency: Latency; ratio: number }>;
}

const sqlText = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * Adds `count` closed conversations (closed: a contact has at most one open conversation per
 * channel) over the workspace's live contacts, spread over the two years before the seed's anchor:
 * one in ten assigned to the workspace's first user, one in twenty labelled `vip`, one in five with
 * unread messages, each pointing at one of the channel's messages as its newest.
 */
export async function growInbox(sessions: pg.ClientBase[], fixture: Fixture, count: number): Promise<number> {
  const started = performance.now();
  const ws = sqlText(fixture.workspaceId);
  const channel = sqlText(fixture.channelId);
  const anchor = sqlText(fixture.anchor);
  await inChunks(sessions, 'inbox conversations', count, 0, (lo, hi) => `
      INSERT INTO conversations (id, workspace_id, channel_id, contact_id, status, closed_at, assignee_id, labels, unread_count,
                                 last_message_id, last_message_at, created_at, updated_at)
      SELECT gen_random_uuid(), ${ws}::uuid, ${channel}::uuid, people.ids[1 + j % people.n], 'closed', at + interval '1 day',
             CASE WHEN j % 10 = 0 THEN agent.id END,
             CASE WHEN j % 20 = 0 THEN ARRAY['vip'] ELSE '{}'::text[] END,
             CASE WHEN j % 5 = 0 THEN 1 + j % 3 ELSE 0 END,
             newest.ids[1 + j % newest.n], at + interval '1 hour', at, at
        FROM generate_series(${lo}::bigint, ${hi}::bigint) AS j
       CROSS JOIN (SELECT array_agg(id) AS ids, count(*)::int AS n
                     FROM (SELECT id FROM contacts WHERE workspace_id = ${ws}::uuid AND deleted_at IS NULL LIMIT 100000) AS c) AS people
       CROSS JOIN (SELECT array_agg(id) AS ids, count(*)::int AS n
                     FROM (SELECT id FROM messages WHERE channel_id = ${channel}::uuid LIMIT 10000) AS m) AS newest
       LEFT JOIN LATERAL (SELECT id FROM users WHERE workspace_id = ${ws}::uuid ORDER BY created_at, id LIMIT 1) AS agent ON true
       CROSS JOIN LATERAL (SELECT ${anchor}::timestamptz - interval '2 years' + (j * (interval '2 years' / ${count})) AS at) AS t`);
  await sessions[0]!.query('VACUUM (ANALYZE) conversations');
  return (performance.now() - started) / 1000;
}

/** The first inbox page unfiltered and filtered, one request at a time, on the gateway (REST: GraphQL reads the same statement). */
/**
 * Requests of each page before those measured: PostgreSQL plans a prepared statement afresh for
 * its first five runs on each connection before it keeps a generic plan, and the gateway's pool
 * spreads the pages over its connections (DB_POOL_SIZE, 10), so a page is measured as a running
 * server answers it, not as each connection meets it first.
 */
const WARMUP = 60;

export async function inboxLatency(gateway: ServerProcess, ctx: BenchContext, monitor: pg.ClientBase, fixture: Fixture, n = 40): Promise<InboxAtScale> {
  const { rows: users } = await monitor.query<{ id: string }>(`SELECT id FROM users WHERE workspace_id = $1 ORDER BY created_at, id LIMIT 1`, [fixture.workspaceId]);
  const { rows: counted } = await monitor.query<{ n: string }>(`SELECT count(*) AS n FROM conversations WHERE channel_id = $1`, [fixture.channelId]);
  const get = (query: string) => (): BenchRequest => ({
    method: 'GET',
    path: `/api/connect/conversations?limit=25${query}`,
    headers: { host: ctx.host, authorization: `Bearer ${ctx.apiKey}`, accept: 'application/json' },
  });
  const filtered: Record<string, string> = {
    unread: '&unread=true',
    ...(users[0] ? { assignee: `&assignee=${users[0].id}` } : {}),
    label: '&label=vip',
    unassigned: '&assignee=none',
    channel: `&channel_id=${fixture.channelId}`,
    search: `&search=${SEARCH_TERMS.medium}`,
    'sort=last_message': '&sort=last_message',
  };
  const series = Object.fromEntries([['unfiltered', get('')], ...Object.entries(filtered).map(([name, query]) => [name, get(query)])]);
  const latency = await sequentialLatency(gateway.base, series, n, WARMUP);
  const unfiltered = latency.unfiltered!;
  return {
    conversations: Number(counted[0]!.n),
    seedSeconds: 0,
    unfiltered,
    pages: Object.fromEntries(Object.entries(filtered).map(([name, query]) => [name, { query: query.slice(1), latency: latency[name]!, ratio: latency[name]!.p50 / unfiltered.p50 }])),
  };
}
