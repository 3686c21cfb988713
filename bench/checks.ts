import type pg from 'pg';
import { sequentialLatency, type Latency } from './measure.js';
import { graphql, type BenchContext, type BenchRequest } from './operations.js';
import type { Statement } from './pg-proxy.js';
import { SEARCH_TERMS } from './seed.js';
import type { ServerProcess } from './servers.js';

const get = (ctx: BenchContext, path: string): (() => BenchRequest) => () => ({
  method: 'GET',
  path,
  headers: { host: ctx.host, authorization: `Bearer ${ctx.apiKey}`, accept: 'application/json' },
});

interface Pages {
  first: Latency;
  deep: Latency;
  /** p50 of the deep page over p50 of the first. */
  ratio: number;
}

export interface PageLatency {
  rows: number;
  gateway: Pages;
  floor: Pages;
  messages: { rows: number; gateway: Pages; floor: Pages };
  /**
   * GraphQL `messages(conversationId:)` of the longest conversation: its last page (`last: 25`,
   * the oldest messages, read backward) against its first (`first: 25`), on the gateway (`deep` is
   * the last page). Absent from reports made before backward pages.
   */
  conversation?: { messages: number; gateway: Pages };
}

/**
 * First pages against pages deep in the data (`ctx.deepRows` contacts,
 * `ctx.deepMessagesRows` messages), one request at a time, on both servers.
 */
export async function pageLatency(servers: ServerProcess[], ctx: BenchContext, n = 40): Promise<PageLatency> {
  const out: Record<string, { contacts: Pages; messages: Pages }> = {};
  for (const server of servers) {
    const r = await sequentialLatency(
      server.base,
      {
        first: get(ctx, '/api/connect/contacts?limit=25'),
        deep: get(ctx, `/api/connect/contacts?limit=25&cursor=${ctx.deepCursor}`),
        firstMessages: get(ctx, '/api/connect/messages?limit=25'),
        deepMessages: get(ctx, `/api/connect/messages?limit=25&cursor=${ctx.deepMessagesCursor}`),
      },
      n,
    );
    out[server.name] = {
      contacts: { first: r.first!, deep: r.deep!, ratio: r.deep!.p50 / r.first!.p50 },
      messages: { first: r.firstMessages!, deep: r.deepMessages!, ratio: r.deepMessages!.p50 / r.firstMessages!.p50 },
    };
  }
  // Backward pages are the gateway's alone (the floor answers only the GraphQL documents the load sends).
  const gateway = servers.find((server) => server.name === 'gateway')!;
  const page = (variables: Record<string, unknown>) => () => graphql(ctx, 'BenchConversationPage', { id: ctx.longConversation.id, ...variables });
  const c = await sequentialLatency(gateway.base, { first: page({ first: 25 }), last: page({ last: 25 }) }, n);
  return {
    rows: ctx.deepRows,
    gateway: out.gateway!.contacts,
    floor: out.floor!.contacts,
    messages: { rows: ctx.deepMessagesRows, gateway: out.gateway!.messages, floor: out.floor!.messages },
    conversation: { messages: ctx.longConversation.messages, gateway: { first: c.first!, deep: c.last!, ratio: c.last!.p50 / c.first!.p50 } },
  };
}

export type SearchLatency = Record<keyof typeof SEARCH_TERMS, { term: string; matches: number; gateway: Latency; floor: Latency }>;

/** GET /messages?search= for a rare, a medium and a common term, one request at a time, on both servers. */
export async function searchLatency(servers: ServerProcess[], ctx: BenchContext, monitor: pg.ClientBase, n = 30): Promise<SearchLatency> {
  const kinds = Object.keys(SEARCH_TERMS) as (keyof typeof SEARCH_TERMS)[];
  const series = Object.fromEntries(kinds.map((kind) => [kind, get(ctx, `/api/connect/messages?limit=25&search=${SEARCH_TERMS[kind]}`)]));
  const byServer: Record<string, Record<string, Latency>> = {};
  for (const server of servers) byServer[server.name] = await sequentialLatency(server.base, series, n);
  const out = {} as SearchLatency;
  for (const kind of kinds) {
    const term = SEARCH_TERMS[kind];
    const { rows } = await monitor.query<{ n: string }>(`SELECT count(*) AS n FROM messages WHERE search_vector @@ plainto_tsquery('simple', $1)`, [term]);
    out[kind] = { term, matches: Number(rows[0]!.n), gateway: byServer.gateway![kind]!, floor: byServer.floor![kind]! };
  }
  return out;
}

export interface ContactSearch {
  term: string;
  /** The gateway's statement for it, shortened. */
  sql: string | null;
  /** Rows of contacts and contact_phones the plan read (kept or filtered away) to answer. */
  rowsExamined: number | null;
  /** Scan nodes of the plan on those tables, e.g. "Index Scan using contacts_workspace_page_idx". */
  scans: string[];
  /** At most 1 % of the contacts (and 100 more) read, and no sequential scan of them. */
  indexBacked: boolean | null;
  executionMs: number | null;
  gateway: Latency | null;
}

/**
 * Whether the gateway's contact search is index-backed: its own statement
 * (recorded by the statement counter) under EXPLAIN ANALYZE, for a term held by
 * few contacts, counting the rows of contacts and contact_phones it had to read.
 */
export async function contactSearch(
  monitor: pg.ClientBase,
  statement: Statement | null,
  term: string,
  contacts: number,
  gateway: ServerProcess | undefined,
  ctx: BenchContext,
): Promise<ContactSearch> {
  const latency = gateway ? (await sequentialLatency(gateway.base, { search: get(ctx, `/api/connect/contacts?limit=25&search=${encodeURIComponent(term)}`) }, 15)).search! : null;
  if (!statement) return { term, sql: null, rowsExamined: null, scans: [], indexBacked: null, executionMs: null, gateway: latency };
  const { rows } = await monitor.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`,
    statement.params,
  );
  const [{ Plan: plan, 'Execution Time': executionMs }] = rows[0]!['QUERY PLAN'];
  let examined = 0;
  const scans: string[] = [];
  let sequential = false;
  walk(plan, (node) => {
    if (!node['Relation Name'] || !['contacts', 'contact_phones'].includes(node['Relation Name'])) return;
    scans.push(`${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''} on ${node['Relation Name']}`);
    if (node['Node Type'] === 'Seq Scan') sequential = true;
    const loops = node['Actual Loops'] ?? 1;
    examined += ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * loops;
  });
  return {
    term,
    sql: statement.sql.replace(/\s+/g, ' ').replace(/"public"\./g, '').slice(0, 600),
    rowsExamined: examined,
    scans,
    indexBacked: !sequential && examined <= contacts * 0.01 + 100,
    executionMs,
    gateway: latency,
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, visit: (node: PlanNode) => void) {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}

/** A name few contacts have, held by one of the oldest: a search that must look far to fill a page. */
export async function rareContactName(monitor: pg.ClientBase, workspaceId: string): Promise<string> {
  const { rows } = await monitor.query<{ name: string }>(
    `SELECT name FROM contacts WHERE workspace_id = $1 AND deleted_at IS NULL AND NOT is_group ORDER BY created_at ASC, id ASC LIMIT 1`,
    [workspaceId],
  );
  return rows[0]?.name ?? 'nobody';
}
