import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../../src/db/database.js';
import { migrate } from '../../../src/db/migrate.js';
import { createTemporaryDatabase } from '../../../src/db/temporary.js';
import { onPostgres } from '../../helpers/app.js';
import { freePort, startServer, waitFor, type ServerProcess } from '../../helpers/server-process.js';
import { emailWorkspace } from '../../helpers/smtp-fake.js';
import { smtpSession } from '../../helpers/smtp-flood.js';
import { sleep } from '../../helpers/load.js';

/**
 * docs/operating-safely.md, Staying up: a flood of large mails on the whole path of a real server process — the SMTP
 * listener storing them and the inbound worker reading each stored mail into a message — keeps the
 * process's memory within bounds. On PostgreSQL only: the embedded database keeps its data in the
 * server's own process (see smtp-flood.test.ts for the listener alone on both).
 */

const MIB = 1024 * 1024;
const MAILS = 8;
const SIZE = 9 * MIB;

/** The process's resident memory now and at its highest (VmRSS, VmHWM), in MiB. */
async function memory(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) / 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

describe.skipIf(!onPostgres)('a flood of large mails through a running server', () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    database = await createTemporaryDatabase(inject('databaseUrl'), 'connect_smtp_flood');
    db = await openDatabase({ databaseUrl: database.url, poolSize: 2 });
    await db.withSession((session) => migrate(session));
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await db?.close();
    await database?.drop();
  });

  it(`${MAILS} concurrent mails of 9 MiB: all become messages, the server's memory grows by less than 300 MiB`, async () => {
    const ws = await emailWorkspace(db.prisma, { smtpUrl: 'smtp://127.0.0.1:9' });
    const port = await freePort();
    server = startServer({ DATABASE_URL: database.url, DELIVERY_WORKER: '1', SMTP_INBOUND_PORT: String(port), SEED_DEMO: '0' });
    await server.listening;
    await waitFor(server, new RegExp(`inbound SMTP listening on 127\\.0\\.0\\.1:${port}`));
    const pid = server.child.pid!;
    await sleep(1000);
    const before = (await memory(pid)).rss;
    let peak = before;
    const sampler = setInterval(() => {
      memory(pid).then(
        (now) => (peak = Math.max(peak, now.rss, now.hwm)),
        () => {},
      );
    }, 20);
    try {
      const answers = await Promise.all(
        Array.from({ length: MAILS }, async (_, i) => {
          const session = smtpSession(port);
          try {
            await session.reply(/^220 /);
            session.command('EHLO flood.example');
            await session.reply(/^250 /);
            session.command(`MAIL FROM:<sender${i}@flood.example>`);
            await session.reply(/^250 /);
            session.command(`RCPT TO:<${ws.settings.inboundAddress}>`);
            await session.reply(/^250 /);
            session.command('DATA');
            await session.reply(/^354 /);
            await session.body(SIZE, `From: sender${i}@flood.example\r\nMessage-ID: <big-${i}-${Date.now()}@flood.example>\r\nSubject: big ${i}\r\nContent-Type: text/plain; charset=utf-8\r\n`);
            return await session.reply();
          } finally {
            session.command('QUIT');
            session.socket.end();
          }
        }),
      );
      expect(answers.map((answer) => answer.slice(0, 3))).toEqual(Array(MAILS).fill('250'));
      const deadline = Date.now() + 150_000;
      let messages = 0;
      while ((messages = await db.prisma.message.count({ where: { channelId: ws.channel.id } })) < MAILS && Date.now() < deadline) await sleep(250);
      expect(messages, server.output().slice(-2000)).toBe(MAILS);
      peak = Math.max(peak, (await memory(pid)).hwm);
    } finally {
      clearInterval(sampler);
    }
    const growth = peak - before;
    console.log(`smtp flood through the server: RSS ${before.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB at its highest (+${growth.toFixed(0)} MiB)`);
    // Measured: before bodies were streamed and capped, 250 → 710 MiB; after, see docs/operating-safely.md.
    expect(growth).toBeLessThan(300);
  }, 240_000);
});
