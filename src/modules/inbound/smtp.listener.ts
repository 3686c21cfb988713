import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerEnvelope } from 'smtp-server';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { describeError } from '../../errors/log.js';
import { inboundReceived } from '../../metrics/process.js';
import { storeInboundEvent } from './inbound.store.js';

/** The largest email the listener takes (CONTRACT §6); advertised with SIZE, refused over it with 552. */
export const EMAIL_SIZE_LIMIT = 10 * 1024 * 1024;

/** How long a stopping listener lets sessions in flight finish before it cuts them off with 421. */
export const SMTP_CLOSE_TIMEOUT_MS = 10_000;

export interface SmtpListenerOptions {
  prisma: PrismaClient;
  logger: Logger;
  host: string;
  /** 0: any free port (tests). */
  port: number;
  /** A certificate and key (PEM): STARTTLS is offered with them, and not at all without. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** Called once an email is stored: the worker can process it at once. */
  onStored?: (() => void) | undefined;
  closeTimeoutMs?: number;
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

/** An SMTP reply that refuses: `code` and its text go to the client. */
function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/**
 * The inbound SMTP listener (CONTRACT §6): takes mail for the channels' inbound addresses
 * (case-insensitive; any other recipient is 550), at most 10 MiB (552 over it), and stores each
 * email raw, once per channel it is addressed to, with the delivery that will process it, before
 * answering 250. The inbound worker then reads it like any provider's webhook. Several channels
 * share one listener. No AUTH: it is a mail exchanger, not a submission server; STARTTLS when a
 * certificate is given.
 */
export async function startSmtpListener(options: SmtpListenerOptions): Promise<SmtpListener> {
  const { prisma, logger } = options;
  /** The accepted recipients of each transaction, by channel (a channel named twice is stored once). */
  const recipients = new WeakMap<SMTPServerEnvelope, Map<string, Recipient>>();

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
    ...(options.tls ? { secure: false, cert: options.tls.cert, key: options.tls.key } : { hideSTARTTLS: true }),

    onRcptTo(address, session, callback) {
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
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= EMAIL_SIZE_LIMIT) chunks.push(chunk);
      });
      stream.on('error', (error) => callback(error));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          inboundReceived.labels('smtp', 'too_large').inc();
          logger.info({ provider: 'smtp', outcome: 'too_large', bytes: size }, 'inbound email refused: over the size limit');
          return callback(reply(552, `Message exceeds the maximum size of ${EMAIL_SIZE_LIMIT} bytes`));
        }
        const body = Buffer.concat(chunks);
        const channels = [...(recipients.get(session.envelope)?.values() ?? [])];
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        prisma
          .$transaction(async (tx) => {
            for (const channel of channels) {
              await storeInboundEvent(tx, channel, 'smtp', { 'mail-from': mailFrom, 'rcpt-to': channel.address }, body);
            }
          })
          .then(
            () => {
              inboundReceived.labels('smtp', 'accepted').inc(channels.length);
              options.onStored?.();
              callback(null, 'Message stored');
            },
            (error: unknown) => {
              // Nothing was stored: the sending server tries again later.
              logger.error({ err: describeError(error), channels: channels.length }, 'inbound email could not be stored');
              callback(reply(451, 'Temporary failure, try again later'));
            },
          );
      });
    },
  });

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
