/**
 * The import row (`--import N`): N generated contacts imported through `POST /contacts/import`
 * in requests of 10,000, one request at a time as `npm run admin -- contacts:import` sends its
 * batches, timed from the first request to the last answer.
 */
import { send } from './http.js';
import type { BenchContext } from './operations.js';
import { note } from './progress.js';
import type { ServerProcess } from './servers.js';

/** Rows a request carries: the route's (and the admin command's) batch. */
export const IMPORT_REQUEST_ROWS = 10_000;
/** The target: at most this many seconds per 100,000 contacts. */
export const IMPORT_TARGET_S = 60;

export interface ImportRun {
  contacts: number;
  requests: number;
  seconds: number;
  rowsPerS: number;
  created: number;
  matched: number;
  failed: number;
  /** The slowest and the median request, in seconds. */
  slowestRequestS: number;
  medianRequestS: number;
}

/**
 * Row i: a name, a unique email and, every second row, a unique Dutch mobile number in a range
 * the seed does not use (`+3165…`; the seed's are `+3161…`), so that every row is created.
 */
function row(run: string, i: number) {
  return { name: `Imported ${run} ${i}`, email: `import-${run}-${i}@bench.example`, ...(i % 2 === 0 ? { phone: `+3165${String(i / 2).padStart(7, '0')}` } : {}) };
}

/** One request of the import: its rows' ids (null when failed), each status counted, and how long it took (s). */
export async function importBatch(
  base: string,
  auth: { host: string; apiKey: string },
  rows: { name: string; email?: string; phone?: string }[],
): Promise<{ ids: (string | null)[]; counts: Record<'created' | 'matched' | 'failed', number>; seconds: number }> {
  const counts = { created: 0, matched: 0, failed: 0 };
  const sent = performance.now();
  const answer = await send(base, {
    method: 'POST',
    path: '/api/connect/contacts/import',
    headers: { host: auth.host, authorization: `Bearer ${auth.apiKey}`, accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ contacts: rows }),
  });
  const seconds = (performance.now() - sent) / 1000;
  if (answer.status !== 200) throw new Error(`POST /contacts/import answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  const results = (JSON.parse(answer.body) as { data: { results: { id: string | null; status: keyof typeof counts }[] } }).data.results;
  for (const result of results) counts[result.status]++;
  return { ids: results.map((result) => result.id), counts, seconds };
}

export async function importRow(gateway: ServerProcess, ctx: BenchContext, contacts: number): Promise<ImportRun> {
  const times: number[] = [];
  const counts = { created: 0, matched: 0, failed: 0 };
  const started = performance.now();
  for (let from = 0; from < contacts; from += IMPORT_REQUEST_ROWS) {
    const rows = Array.from({ length: Math.min(IMPORT_REQUEST_ROWS, contacts - from) }, (_, k) => row(ctx.run, from + k));
    const batch = await importBatch(gateway.base, ctx, rows);
    times.push(batch.seconds);
    for (const status of ['created', 'matched', 'failed'] as const) counts[status] += batch.counts[status];
    note(`import: ${from + rows.length}/${contacts} in ${((performance.now() - started) / 1000).toFixed(1)} s (this request ${times.at(-1)!.toFixed(2)} s)`);
  }
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...times].sort((a, b) => a - b);
  return {
    contacts,
    requests: times.length,
    seconds: Math.round(seconds * 100) / 100,
    rowsPerS: Math.round(contacts / seconds),
    ...counts,
    slowestRequestS: Math.round(sorted.at(-1)! * 100) / 100,
    medianRequestS: Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100,
  };
}
