import type { OutboundProvider, SendJob, SendOutcome } from '../provider.js';
import { domainOf, type EmailMeta, type EmailStore } from './email.js';
import { parseSmtpUrl } from './url.js';

/** `text` with every occurrence of the password (as given and as URL-encoded) replaced by `***`. */
export function maskPassword(text: string, pass: string): string {
  let masked = text.replace(/(smtps?:\/\/[^:@/\s]*:)[^@\s]*@/gi, '$1***@');
  for (const form of new Set([pass, encodeURIComponent(pass)])) if (form.length >= 1) masked = masked.split(form).join('***');
  return masked;
}

/** `Re: <subject>` without a second `Re:`; the channel's name when the thread has no subject. */
export function replySubject(thread: EmailMeta | null, channelName: string): string {
  const subject = thread?.subject?.trim();
  if (!subject) return channelName;
  return /^re\s*:/i.test(subject) ? subject : `Re: ${subject}`;
}

/** The text of the email: the message's text (a template's rendered text), then its media URLs, one a line. */
export function emailText(message: SendJob['message']): string {
  return message.mediaUrls.length ? `${message.body}\n\n${message.mediaUrls.join('\n')}` : message.body;
}

/**
 * A relay's refusal or failure as an outcome: a 5xx reply fails the message with the code and the
 * relay's text; a 4xx reply (421, 450, 451, 452…), a connection error or a timeout is tried again.
 * The password never appears in either.
 */
export function smtpOutcome(error: unknown, pass: string): SendOutcome {
  const { responseCode, response, message, code } = error as { responseCode?: unknown; response?: unknown; message?: unknown; code?: unknown };
  const said = maskPassword(String((typeof response === 'string' && response) || message || 'SMTP error'), pass).slice(0, 900);
  if (typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600) return { kind: 'failed', code: String(responseCode), text: said };
  const what = typeof responseCode === 'number' ? `answered ${responseCode}` : typeof code === 'string' ? `failed (${code})` : 'failed';
  return { kind: 'retry', reason: `SMTP relay ${what}: ${said}` };
}

/**
 * Sends a channel's messages as email (docs/channels.md): one email per message through the channel's
 * SMTP relay, from the channel's from-address under the channel's name, to the contact's email,
 * with the Message-ID `<message id@from domain>` (the provider id) and, when the conversation has
 * an inbound email, `In-Reply-To`/`References` and `Re:` its subject.
 *
 * The relay is the operator's own (the SMTP URL is an operator setting, like the provider API
 * bases), so it is not held to the target policy that guards URLs people give.
 */
export function smtpProvider(options: { timeoutMs: number; store?: EmailStore | undefined }): OutboundProvider {
  return {
    name: 'smtp',
    async send(job): Promise<SendOutcome> {
      // One email per message: an earlier attempt that recorded it sent it.
      if (job.sentParts.length) return { kind: 'sent', providerIds: job.sentParts };
      const { channel, message, recipient } = job;
      const relay = parseSmtpUrl(channel.secrets.smtpUrl ?? '');
      const from = channel.settings.fromAddress ?? '';
      if (!relay || !from) return { kind: 'failed', code: 'configuration', text: 'the channel has no valid SMTP URL or from-address' };
      if (!recipient.email) return { kind: 'failed', code: 'recipient', text: 'the contact has no email address' };
      const messageId = `${message.id}@${domainOf(from)}`;
      const thread = (await options.store?.thread(message.conversationId)) ?? null;
      const references = thread ? [...thread.references, thread.messageId].map((id) => `<${id}>`) : [];
      // Loaded on the first email: a process without email channels never loads the mail library.
      const { default: nodemailer } = await import('nodemailer');
      const transport = nodemailer.createTransport({
        host: relay.host,
        port: relay.port,
        secure: relay.secure,
        ...(relay.user || relay.pass ? { auth: { user: relay.user, pass: relay.pass } } : {}),
        connectionTimeout: options.timeoutMs,
        greetingTimeout: options.timeoutMs,
        socketTimeout: options.timeoutMs,
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      // One deadline for the whole exchange (docs/operating-safely.md, Staying up): the transport's timeouts are per wait,
      // so a relay that trickles its replies could otherwise hold the attempt past its lease.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          transport.close();
          reject(Object.assign(new Error(`no complete answer within ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
        }, options.timeoutMs);
      });
      try {
        await Promise.race([
          transport.sendMail({
            from: { name: channel.name, address: from },
            to: { name: recipient.name, address: recipient.email },
            subject: replySubject(thread, channel.name),
            text: emailText(message),
            messageId: `<${messageId}>`,
            date: message.createdAt,
            ...(thread ? { inReplyTo: `<${thread.messageId}>`, references } : {}),
          }),
          deadline,
        ]);
      } catch (error) {
        return smtpOutcome(error, relay.pass);
      } finally {
        clearTimeout(timer);
        transport.close();
      }
      await job.recordPart(messageId, 0);
      return { kind: 'sent', providerIds: [messageId] };
    },
  };
}
