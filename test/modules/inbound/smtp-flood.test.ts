import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTP_MAX_RECIPIENTS, startSmtpListener, type SmtpListener } from '../../../src/modules/inbound/smtp.listener.js';
import { onPostgres } from '../../helpers/app.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { sleep } from '../../helpers/load.js';
import { emailWorkspace } from '../../helpers/smtp-fake.js';
import { smtpSession, type SmtpSession } from '../../helpers/smtp-flood.js';

/**
 * docs/operating-safely.md, Staying up: the inbound SMTP listener holds a flood — real connections, bounded in count and
 * time: at most SMTP_MAX_CLIENTS connections, a whole-session deadline, 50 recipients per mail,
 * and a bounded number of mails read at once, so that memory stays flat.
 */

const MIB = 1024 * 1024;
/** The limits of the listener under test: small, so that a flood of a few dozen connections passes them. */
const MAX_CLIENTS = 20;
const SESSION_MS = 2000;

let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let listener: SmtpListener;
let inbound: string;
/** The recipient lookups the listener made (statements on the channels' inbound address). */
let lookups = 0;

beforeAll(async () => {
  app = await appOnOwnDatabase({ onQuery: (sql) => void (sql.includes('inbound_address') && lookups++) });
  const ws = await emailWorkspace(app.db.prisma, { smtpUrl: 'smtp://127.0.0.1:9' });
  inbound = ws.settings.inboundAddress;
  listener = await startSmtpListener({ db: app.db, logger: app.logger, host: '127.0.0.1', port: 0, maxClients: MAX_CLIENTS, sessionTimeoutMs: SESSION_MS });
});
afterAll(async () => {
  await listener?.close();
  await app?.drop();
});

/** A session greeted and introduced (EHLO), with a mail begun from `from`. */
async function begin(from: string, port = listener.port): Promise<SmtpSession> {
  const session = smtpSession(port);
  await session.reply(/^220 /);
  session.command('EHLO flood.example');
  await session.reply(/^250 /);
  session.command(`MAIL FROM:<${from}>`);
  await session.reply(/^250 /);
  return session;
}

describe('a flood of mail', () => {
  it('8 concurrent mails of 10 MiB: all stored, a few read at once, the process’s memory kept within bounds', async () => {
    // The listener's defaults: a mail of 10 MiB may take longer than the short session limit of the other tests.
    const own = await startSmtpListener({ db: app.db, logger: app.logger, host: '127.0.0.1', port: 0 });
    const mails = 8;
    const before = await app.db.prisma.inboundEvent.count();
    global.gc?.();
    const baseline = process.memoryUsage();
    let peak = baseline.rss;
    let peakHeap = baseline.heapUsed;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.rss);
      peakHeap = Math.max(peakHeap, now.heapUsed);
    }, 10);
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: mails }, async (_, i) => {
        const session = await begin(`sender${i}@flood.example`, own.port);
        try {
          session.command(`RCPT TO:<${inbound}>`);
          await session.reply(/^250 /);
          session.command('DATA');
          await session.reply(/^354 /);
          await session.body(10 * MIB - 4096, `From: sender${i}@flood.example\r\nMessage-ID: <flood-${i}-${Date.now()}@flood.example>\r\nSubject: flood\r\n`);
          return await session.reply();
        } finally {
          session.command('QUIT');
          session.socket.end();
        }
      }),
    );
    clearInterval(sampler);
    await own.close();
    expect(answers.map((answer) => answer.slice(0, 3))).toEqual(Array(mails).fill('250'));
    expect(await app.db.prisma.inboundEvent.count()).toBe(before + mails);
    expect(Date.now() - started).toBeLessThan(60_000);
    // Measured in this test's process: unbounded, the flood took it up by 510–580 MiB (its heap by
    // some 270 MiB) on PostgreSQL, and by 600–800 MiB (heap 550 MiB) on the embedded database, whose
    // data lives in the process (part of what it grows by is the mail itself); bounded, by about
    // 150 MiB (heap 2 MiB) and 470–540 MiB (heap 230 MiB). See docs/operating-safely.md.
    const growth = (peak - baseline.rss) / MIB;
    const heap = (peakHeap - baseline.heapUsed) / MIB;
    expect(growth).toBeLessThan(onPostgres ? 300 : 700);
    expect(heap).toBeLessThan(onPostgres ? 100 : 400);
  }, 120_000);

  it(`holds at most SMTP_MAX_CLIENTS connections: the others are answered 421 and closed at once`, async () => {
    const sessions = Array.from({ length: 3 * MAX_CLIENTS }, () => smtpSession(listener.port));
    try {
      const greetings = await Promise.all(sessions.map((session) => session.reply(/^(220|421) /).catch((error: Error) => error.message)));
      const held = greetings.filter((line) => line.startsWith('220'));
      const refused = greetings.filter((line) => line.startsWith('421'));
      expect(held).toHaveLength(MAX_CLIENTS);
      expect(refused).toHaveLength(2 * MAX_CLIENTS);
      expect(refused[0]).toMatch(/Too many connected clients/);
      // The refused ones are closed by the listener.
      await Promise.all(sessions.filter((_, i) => greetings[i]!.startsWith('421')).map((session) => session.closed));
    } finally {
      for (const session of sessions) session.socket.destroy();
    }
    // Once they are gone, the places are free again.
    await sleep(100);
    const next = smtpSession(listener.port);
    expect(await next.reply()).toMatch(/^220 /);
    next.socket.destroy();
  });

  it('closes a session at its time limit, however slowly it trickles: 421, then the connection ends', async () => {
    const session = await begin('slow@flood.example');
    session.command(`RCPT TO:<${inbound}>`);
    await session.reply(/^250 /);
    session.command('DATA');
    await session.reply(/^354 /);
    const started = Date.now();
    // One byte every 100 ms: never idle long enough for the idle timeout.
    const trickle = setInterval(() => session.socket.writable && session.socket.write('x'), 100);
    try {
      await session.closed;
    } finally {
      clearInterval(trickle);
    }
    expect(Date.now() - started).toBeLessThan(SESSION_MS + 1000);
    expect(session.replies.at(-1)).toMatch(/^421 .*Session time limit reached/);
  });

  it(`refuses the recipients of a mail past ${SMTP_MAX_RECIPIENTS} with 452, without looking them up`, async () => {
    const session = await begin('many@flood.example');
    try {
      const before = lookups;
      const started = Date.now();
      // Pipelined, as a flood sends them: 1,000 recipients nobody has, one command each.
      session.socket.write(Array.from({ length: 1000 }, (_, i) => `RCPT TO:<nobody${i}@in.flood.example>\r\n`).join(''));
      const codes: string[] = [];
      for (let i = 0; i < 1000; i++) codes.push((await session.reply(/^(550|452) /)).slice(0, 3));
      expect(codes.slice(0, SMTP_MAX_RECIPIENTS)).toEqual(Array(SMTP_MAX_RECIPIENTS).fill('550'));
      expect(codes.slice(SMTP_MAX_RECIPIENTS)).toEqual(Array(1000 - SMTP_MAX_RECIPIENTS).fill('452'));
      expect(lookups - before).toBe(SMTP_MAX_RECIPIENTS);
      expect(Date.now() - started).toBeLessThan(SESSION_MS);
      // A new mail of the same session counts afresh.
      session.command('RSET');
      await session.reply(/^250 /);
      session.command('MAIL FROM:<many@flood.example>');
      await session.reply(/^250 /);
      session.command(`RCPT TO:<${inbound}>`);
      expect(await session.reply()).toMatch(/^250 /);
    } finally {
      session.socket.destroy();
    }
  });

  it('refuses STARTTLS without a certificate, rather than answering with the library’s bundled one', async () => {
    const session = await begin('tls@flood.example');
    try {
      session.command('STARTTLS');
      expect(await session.reply(/^5\d\d /)).toMatch(/^500 /);
      // Still in clear, still taking commands.
      session.command('NOOP');
      expect(await session.reply()).toMatch(/^250 /);
    } finally {
      session.socket.destroy();
    }
  });
});
