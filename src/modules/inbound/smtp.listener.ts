import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerEnvelope, type SMTPServerSession } from 'smtp-server';
import { describeError } from '../../errors/log.js';
import { inboundReceived } from '../../metrics/process.js';
import type { Database } from '../../db/database.js';
import { storeInboundEmail } from './inbound.store.js';
import type { Tracing } from '../../lib/tracing.js';

/** The largest email the listener takes (docs/channels.md); advertised with SIZE, refused over it with 552. */
export const EMAIL_SIZE_LIMIT = 10 * 1024 * 1024;

/** How long a stopping listener lets sessions in flight finish before it cuts them off with 421. */
export const SMTP_CLOSE_TIMEOUT_MS = 10_000;

/** Recipients one mail may name (docs/operating-safely.md, Staying up): every RCPT past them is 452, without a lookup. */
export const SMTP_MAX_RECIPIENTS = 50;

/**
 * Mails read into memory and stored at once: one more waits, unread, its sender held by TCP until
 * a place frees (or its idle timeout, 421, and it tries again later). Each takes up to 10 MiB to
 * read and several times that while it is written to the database, so this, not the number of
 * connections, is what bounds the listener's memory under a flood.
 */
export const SMTP_MAILS_AT_ONCE = 4;

/** Defaults of the listener's limits (SMTP_MAX_CLIENTS, SMTP_SESSION_TIMEOUT_S). */
export const SMTP_MAX_CLIENTS = 100;
export const SMTP_SESSION_TIMEOUT_MS = 120_000;

export interface SmtpListenerOptions {
  /** Recipients are looked up through Prisma; mails stored with one statement each (Database.execute). */
  db: Pick<Database, 'prisma' | 'execute' | 'kind'>;
  logger: Logger;
  host: string;
  /** 0: any free port (tests). */
  port: number;
  /** A certificate and key (PEM): STARTTLS is offered with them, and not at all without. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** Called once an email is stored: the worker can process it at once. */
  onStored?: (() => void) | undefined;
  closeTimeoutMs?: number;
  /** Connections at once (SMTP_MAX_CLIENTS); one more is answered 421 and closed. */
  maxClients?: number;
  /** How long one connection may last, whatever it sends (SMTP_SESSION_TIMEOUT_S): then 421 and closed. */
  sessionTimeoutMs?: number;
  /** Mails read and stored at once (SMTP_MAILS_AT_ONCE). */
  mailsAtOnce?: number;
  /** A trace for each mail stored, when OpenTelemetry is on (docs/operations.md#tracing). */
  tracing?: Tracing | undefined;
}

export interface SmtpListener {
  readonly port: number;
  /** Stops accepting connections, lets sessions in flight finish (at most closeTimeoutMs), then resolves. */
  close(): Promise<void>;
}

/** A channel an accepted recipient names, with the address as given. */
interface Recipient {
  id: string;
  workspaceId: string;
  address: string;
}

/** At most `size` holders at once; the others wait their turn, first come first served. */
function places(size: number) {
  let free = size;
  const waiting: (() => void)[] = [];
  return {
    take(): Promise<void> {
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    give(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

/** An SMTP reply that refuses: `code` and its text go to the client. */
function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/**
 * The inbound SMTP listener (docs/channels.md): takes mail for the channels' inbound addresses
 * (case-insensitive; any other recipient is 550), at most 10 MiB (552 over it), and stores each
 * email raw, once per channel it is addressed to, with the delivery that will process it, before
 * answering 250. The inbound worker then reads it like any provider's webhook. Several channels
 * share one listener. No AUTH: it is a mail exchanger, not a submission server; STARTTLS only
 * when a certificate is given (refused, not merely hidden, without one: smtp-server would
 * otherwise answer it with its bundled certificate, whose key is public).
 *
 * A flood is held (docs/operating-safely.md, Staying up): at most `maxClients` connections, each closed with 421 after
 * `sessionTimeoutMs` however it trickles; at most SMTP_MAX_RECIPIENTS recipients per mail (the
 * RCPTs after them are 452, without a lookup); at most `mailsAtOnce` mails read and stored at once.
 */
export async function startSmtpListener(options: SmtpListenerOptions): Promise<SmtpListener> {
  const { logger } = options;
  const { prisma } = options.db;
  /** The accepted recipients of each transaction, by channel (a channel named twice is stored once). */
  const recipients = new WeakMap<SMTPServerEnvelope, Map<string, Recipient>>();
  /** The RCPT commands of each transaction, accepted or not. */
  const attempts = new WeakMap<SMTPServerEnvelope, number>();
  const reading = places(options.mailsAtOnce ?? SMTP_MAILS_AT_ONCE);
  const sessionTimeoutMs = options.sessionTimeoutMs ?? SMTP_SESSION_TIMEOUT_MS;
  /** Each open session's deadline, and whether a mail of it is being stored (it is then closed once stored). */
  const sessions = new Map<string, { timer: NodeJS.Timeout; storing: boolean; expired: boolean; close: () => void }>();

  async function channelsFor(address: string): Promise<Recipient[]> {
    const rows = await prisma.$queryRaw<{ id: string; workspace_id: string }[]>`
      SELECT id, workspace_id FROM channels
       WHERE provider = 'smtp' AND status = 'active' AND inbound_address = lower(${address})`;
    return rows.map((row) => ({ id: row.id, workspaceId: row.workspace_id, address }));
  }

  const server = new SMTPServer({
    banner: 'Connect gateway',
    size: EMAIL_SIZE_LIMIT,
    rejectOversized: true,
    authOptional: true,
    disabledCommands: ['AUTH'],
    disableReverseLookup: true,
    logger: false,
    closeTimeout: options.closeTimeoutMs ?? SMTP_CLOSE_TIMEOUT_MS,
    maxClients: options.maxClients ?? SMTP_MAX_CLIENTS,
    ...(options.tls ? { secure: false, cert: options.tls.cert, key: options.tls.key } : { hideSTARTTLS: true, disabledCommands: ['AUTH', 'STARTTLS'] }),

    onConnect(session, callback) {
      const connection = [...server.connections].find((open) => open.session === session);
      if (connection) {
        const close = () => connection.send(421, 'Session time limit reached, closing connection');
        const entry = {
          storing: false,
          expired: false,
          close,
          timer: setTimeout(() => {
            inboundReceived.labels('smtp', 'session_timeout').inc();
            logger.info({ provider: 'smtp', outcome: 'session_timeout' }, 'inbound SMTP session closed at its time limit');
            // A mail being stored is answered first: the session ends right after.
            if (entry.storing) entry.expired = true;
            else close();
          }, sessionTimeoutMs),
        };
        entry.timer.unref();
        sessions.set(session.id, entry);
      }
      callback();
    },

    onClose(session) {
      const entry = sessions.get(session.id);
      if (!entry) return;
      clearTimeout(entry.timer);
      sessions.delete(session.id);
    },

    onRcptTo(address, session, callback) {
      const count = (attempts.get(session.envelope) ?? 0) + 1;
      attempts.set(session.envelope, count);
      if (count > SMTP_MAX_RECIPIENTS) {
        if (count === SMTP_MAX_RECIPIENTS + 1) logger.info({ provider: 'smtp', outcome: 'too_many_recipients' }, `inbound email: recipients past ${SMTP_MAX_RECIPIENTS} refused`);
        return callback(reply(452, `Too many recipients: at most ${SMTP_MAX_RECIPIENTS} per mail`));
      }
      channelsFor(address.address.trim()).then(
        (found) => {
          if (!found.length) {
            inboundReceived.labels('smtp', 'not_found').inc();
            logger.info({ provider: 'smtp', outcome: 'not_found' }, 'inbound email refused: no channel has this inbound address');
            return callback(reply(550, 'No such recipient here'));
          }
          const accepted = recipients.get(session.envelope) ?? new Map<string, Recipient>();
          recipients.set(session.envelope, accepted);
          for (const channel of found) if (!accepted.has(channel.id)) accepted.set(channel.id, channel);
          callback();
        },
        (error: unknown) => {
          logger.error({ err: describeError(error) }, 'inbound email: recipient lookup failed');
          callback(reply(451, 'Temporary failure, try again later'));
        },
      );
    },

    onData(stream, session, callback) {
      // A connection gone mid-message destroys the stream, with this error if it has a listener.
      let failed: Error | null = null;
      stream.on('error', (error) => (failed = error));
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        reading.give();
      };
      // Unread until a place is free: the sender is held by TCP meanwhile.
      void reading.take().then(() => {
        if (failed || stream.destroyed) {
          release();
          return callback(failed ?? reply(451, 'Connection closed'));
        }
        read(stream, session, callback, release);
      });
    },
  });

  function read(stream: SMTPServerDataStream, session: SMTPServerSession, answer: (error?: Error | null, message?: string) => void, release: () => void) {
    // Answered once, whatever the stream does after the mail was taken or refused.
    let answered = false;
    const callback = (error?: Error | null, message?: string) => {
      if (answered) return;
      answered = true;
      answer(error, message);
    };
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= EMAIL_SIZE_LIMIT) chunks.push(chunk);
    });
    stream.on('close', release);
    stream.on('error', (error) => {
      release();
      callback(error);
    });
    stream.on('end', () => {
      if (stream.sizeExceeded) {
        release();
        inboundReceived.labels('smtp', 'too_large').inc();
        logger.info({ provider: 'smtp', outcome: 'too_large', bytes: size }, 'inbound email refused: over the size limit');
        return callback(reply(552, `Message exceeds the maximum size of ${EMAIL_SIZE_LIMIT} bytes`));
      }
      const body = Buffer.concat(chunks);
      chunks.length = 0;
      const channels = [...(recipients.get(session.envelope)?.values() ?? [])];
      const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const entry = sessions.get(session.id);
      if (entry) entry.storing = true;
      const stored = (error: Error | null, message?: string) => {
        release();
        callback(error, message);
        if (!entry) return;
        entry.storing = false;
        if (entry.expired) setImmediate(entry.close);
      };
      const store = () =>
        storeInboundEmail(
          options.db,
          channels.map((channel) => ({ channel, headers: { 'mail-from': mailFrom, 'rcpt-to': channel.address } })),
          body,
        );
      // A mail is a trace of its own, as a request is; its statements, and the delivery that reads it, beneath.
      (options.tracing ? options.tracing.span('smtp mail', { 'smtp.recipients': channels.length, 'smtp.bytes': size }, store, { root: true }) : store()).then(
          () => {
            inboundReceived.labels('smtp', 'accepted').inc(channels.length);
            options.onStored?.();
            stored(null, 'Message stored');
          },
          (error: unknown) => {
            // Nothing was stored: the sending server tries again later.
            logger.error({ err: describeError(error), channels: channels.length }, 'inbound email could not be stored');
            stored(reply(451, 'Temporary failure, try again later'));
          },
        );
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A connection's failure (a client gone mid-session, a failed handshake) is that connection's alone.
  server.on('error', (error) => logger.warn({ err: describeError(error) }, 'inbound SMTP connection error'));
  const port = (server.server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    port,
    close() {
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
      return closed;
    },
  };
}
