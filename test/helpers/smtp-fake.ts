import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createChannel } from '../../src/modules/channels/channels.service.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';
import { uniqueHost } from './factories.js';
import { testSealer } from './secrets.js';

/**
 * A local SMTP relay for tests: takes what the gateway sends (recording the envelope, the raw
 * message and its parse), checks the login it was given, and can be told to answer a mail with
 * a reply code (451, 550…). Nothing leaves 127.0.0.1.
 */

export interface RecordedMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
  /** The login the gateway gave. */
  user: string | undefined;
}

export interface SmtpSink {
  port: number;
  /** The URL to give a channel as its --smtp-url, with this login. */
  url: string;
  received: RecordedMail[];
  /** Answers the next mails' DATA with these reply codes, in order, before taking them again. */
  failNext(...codes: number[]): void;
  close(): Promise<void>;
}

export const SMTP_SINK_LOGIN = { user: 'relay-user', pass: 'p@ss:w0rd/secret' };

export async function startSmtpSink(): Promise<SmtpSink> {
  const received: RecordedMail[] = [];
  const queued: number[] = [];
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    hideSTARTTLS: true,
    disableReverseLookup: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_SINK_LOGIN.user && auth.password === SMTP_SINK_LOGIN.pass) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const code = queued.shift();
        if (code) return callback(Object.assign(new Error(code >= 500 ? 'Mailbox unavailable' : 'Try again later'), { responseCode: code }));
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then((parsed) => {
          received.push({
            envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) },
            raw,
            parsed,
            user: session.user as string | undefined,
          });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://${encodeURIComponent(SMTP_SINK_LOGIN.user)}:${encodeURIComponent(SMTP_SINK_LOGIN.pass)}@127.0.0.1:${port}`,
    received,
    failNext: (...codes) => queued.push(...codes),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A workspace with an email channel sending through `smtpUrl`, from `from`, taking mail at `inbound`. */
export async function emailWorkspace(prisma: PrismaClient, options: { smtpUrl: string; from?: string; inbound?: string; name?: string }) {
  const workspace = await createWorkspace(prisma, { hostname: uniqueHost('mail'), name: 'Email workspace' });
  const tag = workspace.id.slice(-8);
  const settings = { fromAddress: options.from ?? `support-${tag}@acme.example`, inboundAddress: options.inbound ?? `inbox-${tag}@in.acme.example` };
  const { channel, apiKey } = await createChannel(
    prisma,
    {
      workspaceId: workspace.id,
      name: options.name ?? 'Acme Support',
      type: 'email',
      provider: { provider: 'smtp', settings, secrets: { smtpUrl: options.smtpUrl } },
    },
    testSealer,
  );
  return { workspace, channel, apiKey, host: workspace.hostname, settings };
}
