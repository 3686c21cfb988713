import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { InputError } from '../errors/domain.js';
import { isUuid } from '../lib/uuid.js';
import { broadcastColumns, broadcastView, type BroadcastRow } from '../modules/broadcasts/broadcasts.sql.js';
import type { BroadcastView } from '../modules/broadcasts/broadcasts.schemas.js';
import { startProgress, type ProgressOutput } from './progress.js';

/** How often `broadcast:watch` reads the broadcast. */
export const WATCH_INTERVAL_MS = 1000;

/** Where `broadcast:watch` shows progress: a bar on `terminal` when it is a TTY, else one line a second through `line`. */
export type WatchOutput = ProgressOutput;

const ENDED: readonly BroadcastView['status'][] = ['finished', 'canceled'];

async function readBroadcast(prisma: PrismaClient, id: string): Promise<BroadcastView> {
  const [row] = isUuid(id) ? await prisma.$queryRaw<BroadcastRow[]>(Prisma.sql`SELECT ${broadcastColumns()} FROM broadcasts AS b WHERE b.id = ${id.toLowerCase()}::uuid`) : [];
  if (!row) throw new InputError(`No broadcast has id ${id}.`);
  return broadcastView(row);
}

/** The recipients done with (no longer pending), out of all. */
const doneOf = (view: BroadcastView) => view.counts.total - view.counts.pending;

/** A broadcast's progress as one line: when, status, recipients done of all, and each status counted. */
export function progressLine(view: BroadcastView, at = new Date()): string {
  const { counts } = view;
  const percent = counts.total ? Math.floor((doneOf(view) * 100) / counts.total) : 100;
  return `${at.toISOString()} ${view.status} ${doneOf(view)}/${counts.total} (${percent}%) sent=${counts.sent} delivered=${counts.delivered} read=${counts.read} failed=${counts.failed} skipped=${counts.skipped}`;
}

/**
 * `broadcast:watch` (docs/broadcasts.md#watching-one-from-the-command-line): reads the broadcast
 * every WATCH_INTERVAL_MS and shows its progress — recipients done of all, and each status
 * counted — as a bar (cli-progress) on a terminal, otherwise as one line each time; ends with the
 * broadcast's view once it has finished or was canceled.
 */
export async function watchBroadcast(prisma: PrismaClient, id: string, output: WatchOutput, intervalMs = WATCH_INTERVAL_MS): Promise<BroadcastView> {
  let view = await readBroadcast(prisma, id);
  const payload = (current: BroadcastView) => ({ name: current.name, status: current.status, ...current.counts });
  const progress = startProgress(output, {
    format: '{name} [{bar}] {percentage}% | {value}/{total} | sent {sent} delivered {delivered} read {read} failed {failed} skipped {skipped} | {status}',
    total: view.counts.total,
    value: doneOf(view),
    payload: payload(view),
    line: () => progressLine(view),
    everyMs: intervalMs,
  });
  try {
    while (!ENDED.includes(view.status)) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      view = await readBroadcast(prisma, id);
      progress.update(doneOf(view), payload(view), view.counts.total);
    }
    return view;
  } finally {
    progress.stop();
  }
}
