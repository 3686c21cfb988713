import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../bench/operations.js';
import type { Report } from '../../bench/report.js';
import { onPostgres } from '../helpers/app.js';

// The harness end to end on tiny data: its structure and that nothing failed, never its timings
// (the performance targets live in the benchmark itself). PostgreSQL only: the bench needs a server.

const root = fileURLToPath(new URL('../..', import.meta.url));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** A dist/ built after every change to src/ and prisma/ is used as it is; otherwise the runner builds it. */
function distIsFresh(): boolean {
  const main = path.join(root, 'dist/main.js');
  if (!fs.existsSync(main)) return false;
  const built = fs.statSync(main).mtimeMs;
  return built > newestMtime(path.join(root, 'src')) && built > newestMtime(path.join(root, 'prisma'));
}

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!onPostgres)('npm run bench', () => {
  it(
    'runs every operation on the gateway and the floor and prints one JSON report without errors',
    async () => {
      // The loaded floor keeps its statements prepared (its unnamed path serves the statement counts).
      const args = ['--contacts', '2000', '--messages', '4000', '--rounds', '1', '--duration', '1', '--warmup', '0', '--floor-prepared', '--inbox-scale', '3000', '--json', '--database', inject('databaseUrl')];
      const { code, stdout, stderr } = await runBench(distIsFresh() ? [...args, '--no-build'] : args);
      // 0: every target met, 1: some missed (timings on tiny data mean nothing); anything else is a failure.
      expect([0, 1], stderr.slice(-3000)).toContain(code);
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      const report = JSON.parse(lines[0]!) as Report;

      expect(report.version).toBe(1);
      expect(report.settings).toMatchObject({ floorPrepared: true });
      expect(report.commit).toMatch(/^[0-9a-f]{40}$|^unknown$/);
      expect(report.seed).toMatchObject({ contacts: 2000 });
      expect(report.seed.messages).toBeGreaterThanOrEqual(4000);
      expect(report.operations.map((o) => o.id)).toEqual(OPERATIONS.map((o) => o.id));
      for (const op of report.operations) {
        for (const side of [op.gateway, op.floor]) {
          expect(side.rps, op.id).toBeGreaterThan(0);
          expect(side.errors, `${op.id}: ${side.samples.join('; ')}`).toBe(0);
          expect(Number.isFinite(side.p50) && Number.isFinite(side.p99), op.id).toBe(true);
        }
        expect(Number.isFinite(op.ratio), op.id).toBe(true);
        expect(op.rounds).toHaveLength(1);
        const [round] = op.rounds;
        for (const window of [round!.gateway, round!.floor]) {
          for (const figure of [window.p50, window.p90, window.p99, window.max]) expect(Number.isFinite(figure), op.id).toBe(true);
        }
        // The gateway's event-loop delay during each window, from its /metrics.
        expect(round!.gateway.eventLoop, op.id).toMatchObject({ p50: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) });
        expect(round!.floor.eventLoop).toBeNull();
        if (OPERATIONS.find((o) => o.id === op.id)!.rest) expect(op.restRatio, op.id).toBeGreaterThan(0);
      }

      const statements = report.statements!;
      for (const op of OPERATIONS) {
        expect(statements.gateway[op.id]!.perRequest, op.id).toBeGreaterThan(0);
        expect(statements.floor[op.id]!.perRequest, op.id).toBeGreaterThan(0);
      }
      expect(statements.workerPerMessage.gateway).toBeGreaterThan(0);
      expect(statements.workerPerMessage.floor).toBeGreaterThan(0);
      expect(statements.workerPerInbound).toBeGreaterThan(0);
      // The floor answers with the gateway's JSON shapes.
      expect(statements.shapeMismatches).toEqual({});

      expect(report.pages!.gateway.deep.n).toBeGreaterThan(0);
      // The long conversation's last page, read backward, against its first (the gateway's alone).
      expect(report.pages!.conversation!.messages).toBeGreaterThanOrEqual(400);
      expect(report.pages!.conversation!.gateway.deep.n).toBeGreaterThan(0);
      expect(Object.keys(report.search!)).toEqual(['rare', 'medium', 'common']);
      expect(report.contactSearch!.sql).toMatch(/contacts/);
      expect(typeof report.contactSearch!.indexBacked).toBe('boolean');
      expect(report.rssMb).toBeGreaterThan(0);

      // Inbound acceptance is a row like the others (above); processing and delivery run once per round.
      expect(report.operations.find((o) => o.id === 'wa.accept')!.floor.rps).toBeGreaterThan(0);
      expect(report.rounds).toHaveLength(1);
      const [extras] = report.rounds;
      const processing = extras!.processing!;
      expect(processing.accepted).toBeGreaterThan(0);
      expect(processing.processedPerS).toBeGreaterThan(0);
      expect(processing.steadySent).toBeGreaterThan(0);
      expect(processing.lag.n).toBe(processing.steadySent);
      expect(processing.missing).toBe(0);
      expect(processing.errors).toBe(0);
      for (const name of ['gateway', 'floor'] as const) {
        const side = extras!.delivery![name];
        expect(side.delivered, name).toBeGreaterThan(0);
        expect(side.deliveredPerS, name).toBeGreaterThan(0);
        expect(side.errors, `${name}: ${side.samples.join('; ')}`).toBe(0);
        expect(Number.isFinite(side.lag.p99), name).toBe(true);
      }
      expect(extras!.rssMb).toBeGreaterThan(0);
      expect(extras!.heapUsedMb).toBeGreaterThan(0);
      expect(extras!.fullCollections).toBeGreaterThanOrEqual(0);
      expect(report.whatsapp!.delivery!.ratio).toBeGreaterThan(0);
      expect(report.whatsapp!.processing!.lagP99).toBeGreaterThanOrEqual(0);

      const targets = new Map(report.targets.map((t) => [t.id, t]));
      // The inbox page: REST against the floor, GraphQL against REST, each within 3 statements.
      for (const id of ['rest.inbox.floor', 'rest.inbox.p99', 'rest.inbox.statements', 'gql.inbox.rest', 'gql.inbox.p99', 'gql.inbox.statements']) {
        expect(targets.get(id), id).toBeDefined();
      }
      expect(targets.get('rest.inbox.statements')!.value).toBeLessThanOrEqual(3);
      expect(targets.get('gql.inbox.statements')!.value).toBeLessThanOrEqual(3);
      // The inbox at scale: conversations added by PostgreSQL, each filtered page against the unfiltered one.
      const inbox = report.inboxAtScale!;
      expect(inbox.conversations).toBeGreaterThanOrEqual(3000);
      expect(Object.keys(inbox.pages)).toEqual(['unread', 'assignee', 'label', 'unassigned', 'channel', 'search', 'sort=last_message']);
      for (const [name, page] of Object.entries(inbox.pages)) {
        expect(Number.isFinite(page.ratio) && page.ratio > 0, name).toBe(true);
        expect(targets.get(`inbox-scale.${name}`), name).toBeDefined();
      }
      for (const id of ['rest.patch.floor', 'rest.send.floor', 'rest.list.floor', 'rest.deep.floor', 'rest.search.floor', 'gql.updateContact.rest', 'gql.sendMessage.rest', 'gql.contacts.rest', 'gql.contacts.byId.rest', 'rest.list.session.rest', 'rest.create.rest', 'deep-page', 'backward-page.conversation', 'contact-search', 'errors', 'rss', 'wa.accept.floor', 'heap-growth']) {
        expect(targets.get(id), id).toBeDefined();
      }
      // Issue 22's tail targets: the gateway's p99 and p50 against the floor's, for the four operations they name.
      for (const op of ['rest.patch', 'rest.send', 'rest.list', 'gql.updateContact']) {
        for (const percentile of ['p99', 'p50']) {
          const target = targets.get(`${op}.${percentile}`);
          expect(target?.target, `${op}.${percentile}`).toBe(percentile === 'p99' ? '≤ 1.50' : '≤ 1.20');
          expect(typeof target?.value === 'number' && target.value > 0, `${op}.${percentile}`).toBe(true);
        }
      }
      expect(targets.get('errors')!.pass).toBe(true);
      expect(report.passed).toBe(report.targets.every((t) => t.pass !== false));
      expect(code).toBe(report.passed ? 0 : 1);
    },
    300_000,
  );

  it(
    'runs a small crowd over WebSocket and SSE: every event to every subscriber, its fan-out over each transport and its targets reported',
    async () => {
      const args = ['--contacts', '200', '--messages', '200', '--rounds', '1', '--duration', '0.5', '--warmup', '0', '--only', 'rest.list', '--no-worker', '--no-statements', '--crowd', '20', '--crowd-warmup', '0', '--json', '--database', inject('databaseUrl')];
      const { code, stdout, stderr } = await runBench(distIsFresh() ? [...args, '--no-build'] : args);
      expect([0, 1], stderr.slice(-3000)).toContain(code);
      const report = JSON.parse(stdout.trim()) as Report;
      const crowd = report.crowd!;
      expect(crowd).toMatchObject({ subscribers: 20, transport: 'both', processes: 1, sends: 500, accepted: 500, refused: {}, expected: 500 * 20 });
      expect(crowd.delivered).toBe(crowd.expected);
      // Half the subscribers on each transport: each event's last arrival over each, the later of them its fan-out.
      expect(crowd.fanOutP99ByTransportMs.websocket).toBeGreaterThan(0);
      expect(crowd.fanOutP99ByTransportMs.sse).toBeGreaterThan(0);
      expect(crowd.fanOutP99Ms).toBeGreaterThanOrEqual(Math.max(crowd.fanOutP99ByTransportMs.websocket!, crowd.fanOutP99ByTransportMs.sse!));
      expect(crowd.fanOutBySecondMs).toHaveLength(10);
      // Each memory reading: the gateway's resident memory less its young generation, after full collections.
      expect(crowd.rssMb.tenth).toHaveLength(1);
      expect(crowd.rssMb.all[0]).toBeGreaterThan(0);
      expect(typeof crowd.kbPerSubscriber).toBe('number');
      const targets = new Map(report.targets.map((t) => [t.id, t]));
      expect(targets.get('crowd.delivered')!.pass).toBe(true);
      expect(targets.get('crowd.fan-out')).toMatchObject({ value: crowd.fanOutP99Ms, target: '≤ 250' });
      expect(targets.get('crowd.memory')).toMatchObject({ value: crowd.kbPerSubscriber });
    },
    300_000,
  );

  it(
    'runs a small mixed crowd of sessions over several channels: each subscriber its own events and assignedToMe, typing to the viewers, its targets reported',
    async () => {
      const args = ['--contacts', '200', '--messages', '200', '--rounds', '1', '--duration', '0.5', '--warmup', '0', '--only', 'rest.list', '--no-worker', '--no-statements'];
      args.push('--mixed-crowd', '20', '--mixed-channels', '4', '--crowd-seconds', '2', '--crowd-warmup', '0', '--json', '--database', inject('databaseUrl'));
      const { code, stdout, stderr } = await runBench(distIsFresh() ? [...args, '--no-build'] : args);
      expect([0, 1], stderr.slice(-3000)).toContain(code);
      const parsed = JSON.parse(stdout.trim()) as Report;
      const mixed = parsed.mixedCrowd!;
      // 2 users × 10 sessions, their channel sets differing: 100 sends over the 4 channels.
      expect(mixed).toMatchObject({ subscribers: 20, users: 2, channels: 4, channelSets: 2, processes: 1, sends: 100, accepted: 100, refused: {} });
      expect(mixed).toMatchObject({ missing: 0, foreign: 0, duplicates: 0, errors: 0, failed: 0, ended: 0, wrongAssignedToMe: 0 });
      expect(mixed.expected).toBeGreaterThan(0);
      expect(mixed.delivered).toBe(mixed.expected);
      expect(mixed.assigned).toBeGreaterThan(0);
      expect(mixed.assignedToMeChecked).toBeGreaterThanOrEqual(mixed.expected);
      expect(mixed.fanOutP99ByTransportMs.websocket).toBeGreaterThan(0);
      expect(mixed.fanOutP99ByTransportMs.sse).toBeGreaterThan(0);
      expect(typeof mixed.kbPerSubscriber).toBe('number');
      // One viewer a user; 400 typing reports, each to the viewers of its conversation.
      expect(mixed).toMatchObject({ viewers: 2, typingReports: 400, typingAccepted: 400, typingRefused: {} });
      expect(mixed.typingExpected).toBeGreaterThan(0);
      expect(mixed.typingDelivered).toBe(mixed.typingExpected);
      expect(mixed.typingFanOutP99Ms).not.toBeNull();
      const targets = new Map(parsed.targets.map((t) => [t.id, t]));
      expect(targets.get('mixed.delivered')!.pass).toBe(true);
      expect(targets.get('mixed.assigned-to-me')!.pass).toBe(true);
      expect(targets.get('mixed.typing-delivered')!.pass).toBe(true);
      expect(targets.get('mixed.fan-out')).toMatchObject({ value: mixed.fanOutP99Ms, target: '≤ 250' });
      expect(targets.get('mixed.typing-fan-out')).toMatchObject({ value: mixed.typingFanOutP99Ms, target: '≤ 250' });
      expect(targets.get('mixed.memory')).toMatchObject({ value: mixed.kbPerSubscriber });
    },
    300_000,
  );
  it(
    'runs a small broadcast to a fake provider: every recipient sent once, its per-second sends, memory, the light load and its targets reported',
    async () => {
      const args = ['--contacts', '200', '--messages', '200', '--rounds', '1', '--duration', '0.5', '--warmup', '0', '--only', 'rest.list', '--no-worker', '--no-statements'];
      args.push('--broadcast', '50', '--broadcast-rate', '50', '--json', '--database', inject('databaseUrl'));
      const { code, stdout, stderr } = await runBench(distIsFresh() ? [...args, '--no-build'] : args);
      expect([0, 1], stderr.slice(-3000)).toContain(code);
      const parsed = JSON.parse(stdout.trim()) as Report;
      const broadcast = parsed.broadcast!;
      expect(broadcast).toMatchObject({ recipients: 50, rate: 50, processes: 1, limitSeconds: 0, status: 'finished', stalled: false, limit: null });
      expect(broadcast.imported).toMatchObject({ created: 50, matched: 0 });
      // Every recipient's message sent, and taken by the fake exactly once.
      expect(broadcast.counts).toMatchObject({ total: 50, pending: 0, sent: 50, failed: 0, skipped: 0 });
      expect(broadcast).toMatchObject({ taken: 50, distinct: 50, twice: 0, refused: 0, malformed: 0 });
      expect(broadcast.perSecond.reduce((total, n) => total + n, 0)).toBe(50);
      expect(broadcast.maxPerSecond).toBe(Math.max(...broadcast.perSecond));
      expect(broadcast.durationS).toBeGreaterThan(0);
      expect(broadcast.expectedS).toBe(1);
      expect(broadcast.memory.before).toHaveLength(1);
      expect(broadcast.memory.after[0]).toBeGreaterThan(0);
      expect(typeof broadcast.memory.grewMb).toBe('number');
      for (const load of [broadcast.load.idle, broadcast.load.during]) {
        expect(load.requests).toBeGreaterThan(0);
        expect(load.errors).toBe(0);
        expect(load.p99Ms).toBeGreaterThan(0);
      }
      const targets = new Map(parsed.targets.map((t) => [t.id, t]));
      expect(targets.get('broadcast.counts')).toMatchObject({ value: 1, pass: true });
      expect(targets.get('broadcast.duration')).toMatchObject({ target: '0.90–1.10' });
      expect(targets.get('broadcast.per-second')).toMatchObject({ value: broadcast.maxPerSecond, target: '≤ 55 (1.1 × rate)' });
      expect(targets.get('broadcast.memory')).toMatchObject({ value: broadcast.memory.grewMb, target: '< 100' });
      expect(targets.get('broadcast.p99')).toMatchObject({ value: broadcast.load.p99Ratio });
      expect(targets.has('broadcast.recovered')).toBe(false);
    },
    300_000,
  );
});
