import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { onPostgres, openTestDatabase } from '../helpers/app.js';
import { workspaceWithChannel } from '../helpers/factories.js';
import { recordingTerminal, runAdminOn } from '../helpers/admin.js';
import { FAILURES_LISTED, SOME_ROWS_FAILED } from '../../src/cli/contacts-import.js';

let db: Database;
let dir: string;
beforeAll(async () => {
  db = await openTestDatabase();
  // A table PostgreSQL has never analyzed is planned as if it were tiny: an email is then looked up
  // by a scan of the workspace's contacts, which thousands of imported rows make minutes long. A
  // database in use has been analyzed (autovacuum); this one is new.
  await db.prisma.$executeRawUnsafe('ANALYZE contacts, contact_phones');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contacts-import-'));
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await db.close();
});

let files = 0;
/** Writes `text` to a new file of the given extension and returns its path. */
function file(extension: string, text: string): string {
  const name = path.join(dir, `f${++files}${extension}`);
  fs.writeFileSync(name, text);
  return name;
}

/** A workspace's contacts by name (one batch's rows share their creation time). */
const contactsOf = (workspaceId: string) =>
  db.prisma.contact.findMany({ where: { workspaceId }, orderBy: { name: 'asc' }, include: { channels: true, phones: true } });

/** Runs a command that is refused: one `error:` line, nothing on stdout, exit 1. */
async function refused(argv: string[], message: RegExp) {
  const result = await runAdminOn(db, argv);
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(/^error: /);
  expect(result.stderr).toMatch(message);
}

describe('contacts:import', () => {
  it('imports a CSV file with quoted fields, reports a bad row by its line, and matches on a second run instead of duplicating', async () => {
    const ws = await workspaceWithChannel(db.prisma);
    const csv = file(
      '.csv',
      [
        'Name, Email ,PHONE,Notes',
        '"Doe, Jane",jane@example.com,+31612340001,"likes ""quotes"", and commas"',
        '',
        'Bad Row,not-an-email,,',
        '"Multi',
        'Line",multi@example.com,,',
        'Phone Only,,+31612340002,',
        'Jane Again,JANE@example.com,,',
      ].join('\r\n') + '\r\n',
    );
    const first = await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', csv, '--channel', ws.channel.id]);
    expect(first.code, first.stderr).toBe(SOME_ROWS_FAILED);
    expect(first.json).toBeUndefined();
    expect(JSON.parse(first.stdout)).toEqual({
      rows: 5,
      created: 3,
      matched: 1,
      failed: 1,
      failures: [{ line: 4, errors: { email: ['The email must be a valid email address.'] } }],
      failuresOmitted: 0,
    });
    // Progress on stderr: a first line, and the last with every row done.
    expect(first.stderr.split('\n').at(-1)).toMatch(/ 5\/5 \(100%\) created=3 matched=1 failed=1$/);

    const stored = await contactsOf(ws.workspace.id);
    expect(stored.map((c) => [c.name, c.email, c.phone])).toEqual([
      ['Doe, Jane', 'jane@example.com', '+31612340001'],
      ['Multi\r\nLine', 'multi@example.com', null],
      ['Phone Only', null, '+31612340002'],
    ]);
    // Linked to the channel named, with the phone findable.
    expect(stored.every((c) => c.channels.some((link) => link.channelId === ws.channel.id))).toBe(true);
    expect(stored[0]!.phones.map((p) => p.number)).toEqual(['+31612340001']);

    // Again: every valid row is matched, nothing is duplicated.
    const again = await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', csv]);
    expect(again.code).toBe(SOME_ROWS_FAILED);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 5, created: 0, matched: 4, failed: 1 });
    expect(await db.prisma.contact.count({ where: { workspaceId: ws.workspace.id } })).toBe(3);
  });

  it('imports NDJSON (.ndjson or .jsonl) and exits 0 when every row was imported; a line that is not JSON stops it before anything is imported', async () => {
    const ws = await workspaceWithChannel(db.prisma);
    const good = file('.jsonl', '{"name":"Ann","email":"ann@example.com"}\n\n{"name":"Bo","phone":"+31612340003","extra":1}\n');
    const result = await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', good]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toEqual({ rows: 2, created: 2, matched: 0, failed: 0, failures: [], failuresOmitted: 0 });
    // Without --channel, created contacts are linked to no channel.
    expect((await contactsOf(ws.workspace.id)).map((c) => [c.name, c.channels.length])).toEqual([
      ['Ann', 0],
      ['Bo', 0],
    ]);

    const broken = file('.ndjson', '{"name":"Cy","email":"cy@example.com"}\n"not an object"\n{"name":"Di", email}\n');
    await refused(['contacts:import', '--hostname', ws.host, '--file', broken], /line 3 is not JSON/);
    expect(await db.prisma.contact.count({ where: { workspaceId: ws.workspace.id } })).toBe(2);

    // A line that is JSON but not an object is a failed row, as in the REST answer.
    const notObject = file('.ndjson', '{"name":"Cy","email":"cy@example.com"}\n"not an object"\n');
    const partly = await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', notObject]);
    expect(partly.code).toBe(SOME_ROWS_FAILED);
    expect(JSON.parse(partly.stdout)).toMatchObject({ created: 1, failed: 1, failures: [{ line: 2, errors: { body: ['The request body must be a JSON object.'] } }] });
  });

  it('lists the first failures and counts the rest', async () => {
    const ws = await workspaceWithChannel(db.prisma);
    const lines = Array.from({ length: FAILURES_LISTED + 20 }, (_, i) => JSON.stringify({ name: `P${i}`, email: `bad-${i}` }));
    const result = await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', file('.ndjson', `${lines.join('\n')}\n`)]);
    expect(result.code).toBe(SOME_ROWS_FAILED);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ rows: FAILURES_LISTED + 20, created: 0, failed: FAILURES_LISTED + 20, failuresOmitted: 20 });
    expect(summary.failures).toHaveLength(FAILURES_LISTED);
    expect(summary.failures[0]).toEqual({ line: 1, errors: { email: ['The email must be a valid email address.'] } });
  });

  it('refuses a missing or empty file, an unknown extension, a bad header or CSV, an unknown hostname or channel with one error line', async () => {
    const ws = await workspaceWithChannel(db.prisma);
    const other = await workspaceWithChannel(db.prisma);
    const csv = file('.csv', 'name,email\nAnn,ann@example.com\n');
    await refused(['contacts:import', '--hostname', ws.host, '--file', path.join(dir, 'missing.csv')], /cannot read --file .*missing\.csv: ENOENT/);
    await refused(['contacts:import', '--hostname', ws.host, '--file', file('.csv', '')], /holds no contacts/);
    await refused(['contacts:import', '--hostname', ws.host, '--file', file('.txt', 'name\n')], /must end in \.csv, \.ndjson or \.jsonl/);
    await refused(['contacts:import', '--hostname', ws.host, '--file', file('.csv', 'first,last\nA,B\n')], /first line must name the columns: name, and email and\/or phone/);
    await refused(['contacts:import', '--hostname', ws.host, '--file', file('.csv', 'name,email\n"Ann,ann@example.com\n')], /is not valid CSV: Quote Not Closed/);
    await refused(['contacts:import', '--hostname', ws.host, '--file', file('.csv', 'name,email\nAnn,ann@example.com,extra\n')], /is not valid CSV: .*line 2/);
    await refused(['contacts:import', '--hostname', 'nobody.test', '--file', csv], /No workspace has hostname nobody\.test/);
    await refused(['contacts:import', '--hostname', ws.host, '--file', csv, '--channel', other.channel.id], /is not a channel of/);
    await refused(['contacts:import', '--hostname', ws.host, '--file', csv, '--channel', 'nope'], /No channel has id nope/);
    expect(await db.prisma.contact.count({ where: { workspaceId: ws.workspace.id } })).toBe(0);
    const usage = await runAdminOn(db, ['contacts:import', '--hostname', ws.host]);
    expect(usage).toMatchObject({ code: 2, stderr: 'error: --file is required' });
    expect((await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', csv, '--batch-size', '10001'])).stderr).toBe('error: --batch-size must be at most 10000');
  });

  it('draws a bar on a terminal', async () => {
    const ws = await workspaceWithChannel(db.prisma);
    const { terminal, drawn: drawnSoFar } = recordingTerminal();
    const csv = file('.csv', 'name,email\nAnn,ann@example.com\nBo,bo@example.com\n');
    const result = await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', csv], {}, { terminal });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const frames = drawnSoFar().split(/\r|\x1B\[\d*[GKJ]/).filter((frame) => frame.includes('contacts ['));
    expect(frames.at(-1)).toMatch(/^contacts \[\u2588{40}\] 100% \| 2\/2 \| created 2 matched 0 failed 0/);
  });

  it('stops after the batch under way on Ctrl-C: what was imported stays, the summary says how far it got, exit 130', async () => {
    const ws = await workspaceWithChannel(db.prisma);
    // Sixty batches: Ctrl-C comes long before the last, wherever the machine is.
    const rows = 3_000;
    const ndjson = file('.ndjson', Array.from({ length: rows }, (_, i) => JSON.stringify({ name: `Person ${i}`, email: `p${i}@example.com` })).join('\n'));
    let stop: (() => void) | null = null;
    let released = false;
    const running = runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', ndjson, '--batch-size', '50'], {}, {
      onInterrupt: (handler) => {
        stop = handler;
        return () => {
          released = true;
        };
      },
    });
    // Ctrl-C once the first batch is stored.
    for (let i = 0; ; i++) {
      if ((await db.prisma.contact.count({ where: { workspaceId: ws.workspace.id } })) > 0) break;
      if (i > 3000) throw new Error('the first batch was never stored');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    stop!();
    const result = await running;
    expect(result.code, result.stderr).toBe(130);
    expect(released).toBe(true);
    const summary = JSON.parse(result.stdout);
    const stored = await db.prisma.contact.count({ where: { workspaceId: ws.workspace.id } });
    // Whole batches only: the one under way when Ctrl-C came finished, none began after it.
    expect(stored % 50).toBe(0);
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(rows);
    expect(summary).toMatchObject({ rows, created: stored, matched: 0, failed: 0, interrupted: true, lastLine: stored });
    expect(result.stderr).toContain(`interrupted: the rows up to line ${stored} (${stored} of ${rows}) were imported`);

    // Importing the file again matches what was imported and creates the rest.
    const again = await runAdminOn(db, ['contacts:import', '--hostname', ws.host, '--file', ndjson]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json).toMatchObject({ rows, created: rows - stored, matched: stored, failed: 0 });
  });
});

// The process tests use the embedded default; the in-process tests above cover both databases.
describe.skipIf(onPostgres)('npm run admin -- contacts:import', () => {
  it('runs as a process: the summary on stdout, exit 3 with a failed row; Ctrl-C (SIGINT) ends it with the summary and exit 130', async () => {
    const env = { ...process.env, PGLITE_DIR: path.join(dir, 'db'), DATABASE_URL: '' };
    const run = (args: string[], onStderr?: (text: string, child: ReturnType<typeof spawn>) => void) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], { env });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => (stdout += String(chunk)));
        child.stderr.on('data', (chunk) => {
          stderr += String(chunk);
          onStderr?.(stderr, child);
        });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    expect((await run(['workspace:create', '--hostname', 'import.test', '--name', 'Import'])).code).toBe(0);
    const csv = file('.csv', 'name,email\n"Doe, Jane",jane@example.com\nBad,bad\n');
    const result = await run(['contacts:import', '--hostname', 'import.test', '--file', csv]);
    expect(result.code, result.stderr).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ rows: 2, created: 1, failed: 1, failures: [{ line: 3 }] });

    // Ctrl-C as soon as the first progress line shows: the run ends at the next batch, exit 130.
    // Two hundred batches, so that a quiet machine cannot finish them all before the first line.
    const big = file('.ndjson', Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ name: `Person ${i}`, email: `q${i}@example.com` })).join('\n'));
    let sent = false;
    const stopped = await run(['contacts:import', '--hostname', 'import.test', '--file', big, '--batch-size', '100'], (stderr, child) => {
      if (!sent && /\d+\/20000/.test(stderr)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    expect(stopped.code, stopped.stderr).toBe(130);
    const summary = JSON.parse(stopped.stdout);
    expect(summary).toMatchObject({ rows: 20_000, interrupted: true, failed: 0 });
    expect(summary.created).toBeLessThan(20_000);
    expect(summary.created % 100).toBe(0);
    expect(stopped.stderr).toMatch(/interrupted: /);
  }, 180_000);
});
