/**
 * Performance targets of the Connect gateway, measured through the real HTTP
 * surface (the app's fetch, no network) on a database seeded with many rows.
 *
 *   npm run bench                       embedded PGlite, in memory
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench
 *                                       a temporary database on that server (dropped afterwards)
 *   BENCH_ROWS=200000 npm run bench     more rows (default 50000)
 *
 * Prints one line per measurement and exits 1 when a target is missed.
 */
import { pino } from 'pino';
import { createApp } from '../src/app.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { createTemporaryDatabase } from '../src/db/temporary.js';
import { loadEnv } from '../src/env.js';
import { encodeCursor } from '../src/lib/pagination.js';
import { createChannel } from '../src/modules/channels/channels.service.js';
import { createWorkspace } from '../src/modules/workspaces/workspaces.service.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 50_000);
const RUNS = 40;

async function openBenchDatabase(): Promise<{ db: Database; drop: () => Promise<void>; label: string }> {
  const server = process.env.BENCH_POSTGRES_URL;
  if (!server) {
    const db = await openDatabase({ pgliteDir: 'memory://' });
    return { db, drop: () => db.close(), label: 'PGlite (in memory)' };
  }
  const database = await createTemporaryDatabase(server, 'connect_bench');
  const db = await openDatabase({ databaseUrl: database.url, poolSize: 10 });
  return {
    db,
    label: 'PostgreSQL',
    async drop() {
      await db.close();
      await database.drop();
    },
  };
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function time(fn: () => Response | Promise<Response>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS + 5; i++) {
    const start = performance.now();
    const response = await fn();
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    if (i >= 5) samples.push(performance.now() - start); // the first runs warm caches
  }
  return samples;
}

const { db, drop, label } = await openBenchDatabase();
const failures: string[] = [];
try {
  await db.withSession((session) => migrate(session));
  const workspace = await createWorkspace(db.prisma, { hostname: 'bench.test', name: 'Bench' });
  const { channel, apiKey } = await createChannel(db.prisma, { workspaceId: workspace.id, name: 'Bench', type: 'whatsapp' });

  process.stdout.write(`seeding ${ROWS} contacts and ${ROWS} messages on ${label}…\n`);
  await db.withSession(async (session) => {
    await session.query(
      `INSERT INTO contacts (id, workspace_id, name, email, email_normalized, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, 'Contact ' || i, 'c' || i || '@bench.test', 'c' || i || '@bench.test',
              now() - i * interval '1 second', now()
         FROM generate_series(1, $2::int) AS i`,
      [workspace.id, ROWS],
    );
    const [contact] = await session.query<{ id: string }>(
      `SELECT id FROM contacts WHERE workspace_id = $1::uuid ORDER BY created_at DESC LIMIT 1`,
      [workspace.id],
    );
    const [conversation] = await session.query<{ id: string }>(
      `INSERT INTO conversations (id, workspace_id, channel_id, contact_id, status) VALUES (gen_random_uuid(), $1::uuid, $2::uuid, $3::uuid, 'open') RETURNING id`,
      [workspace.id, channel.id, contact!.id],
    );
    await session.query(
      `INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, body, sender_type, sender_channel_id, status, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3::uuid, $4::uuid, 'message ' || i || ' topic' || (i % 500), 'channel', $2::uuid, 'sent',
              now() - i * interval '1 second', now()
         FROM generate_series(1, $5::int) AS i`,
      [workspace.id, channel.id, conversation!.id, contact!.id, ROWS],
    );
    await session.exec('ANALYZE');
  });

  const yoga = createApp({ db, env: loadEnv({ NODE_ENV: 'production', LOG_LEVEL: 'silent' }), logger: pino({ level: 'silent' }) });
  const get = async (path: string) => yoga.fetch(`http://bench.test/api/connect${path}`, { headers: { authorization: `Bearer ${apiKey}` } });

  const deepContact = await db.prisma.contact.findFirstOrThrow({ where: { workspaceId: workspace.id }, orderBy: { createdAt: 'asc' }, skip: 100 });
  const deepMessage = await db.prisma.message.findFirstOrThrow({ where: { channelId: channel.id }, orderBy: { createdAt: 'asc' }, skip: 100 });

  const results: [string, number[]][] = [
    ['GET /contacts first page', await time(() => get('/contacts?limit=25'))],
    [`GET /contacts page at row ${ROWS - 100}`, await time(() => get(`/contacts?limit=25&cursor=${encodeCursor(deepContact)}`))],
    ['GET /messages first page', await time(() => get('/messages?limit=25'))],
    [`GET /messages page at row ${ROWS - 100}`, await time(() => get(`/messages?limit=25&cursor=${encodeCursor(deepMessage)}`))],
    ['GET /messages?search (full text)', await time(() => get('/messages?limit=25&search=topic42'))],
    ['GET /messages?search (matches every row)', await time(() => get('/messages?limit=25&search=message'))],
  ];
  // Reported, without a target yet: contact search is a substring match (no trigram index).
  const contactSearch = await time(() => get('/contacts?limit=25&search=c4242%40bench'));
  process.stdout.write(`${'GET /contacts?search (substring)'.padEnd(40)} p50 ${percentile(contactSearch, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(contactSearch, 95).toFixed(1).padStart(7)} ms\n`);
  let sent = 0;
  const sends = await time(() =>
    yoga.fetch('http://bench.test/api/connect/messages', {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: { phone: '+31612345678' }, message: `bench ${sent++}` }),
    }),
  );
  results.push(['POST /messages', sends]);

  for (const [name, samples] of results) {
    process.stdout.write(`${name.padEnd(40)} p50 ${percentile(samples, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(samples, 95).toFixed(1).padStart(7)} ms\n`);
  }

  // Targets: keyset pages cost the same deep in the table as at its top, and reads stay interactive.
  const p50 = (i: number) => percentile(results[i]![1], 50);
  const targets: [string, boolean][] = [
    ['a deep contacts page costs at most 2× the first page', p50(1) <= Math.max(2 * p50(0), p50(0) + 5)],
    ['a deep messages page costs at most 2× the first page', p50(3) <= Math.max(2 * p50(2), p50(2) + 5)],
    ['list pages answer within 50 ms (p50)', [0, 1, 2, 3].every((i) => p50(i) < 50)],
    ['full-text search answers within 100 ms (p50), rare or common term', p50(4) < 100 && p50(5) < 100],
    ['a send is accepted within 50 ms (p50)', p50(6) < 50],
  ];
  for (const [target, met] of targets) {
    process.stdout.write(`${met ? 'met   ' : 'MISSED'} ${target}\n`);
    if (!met) failures.push(target);
  }
  await yoga.dispose();
} finally {
  await drop();
}
process.exitCode = failures.length ? 1 : 0;
