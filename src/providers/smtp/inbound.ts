import { createHash, type Hash } from 'node:crypto';
import type { ParsedMail, SimpleParserOptions } from 'mailparser';
import { providerTime, type InboundEvent, type InboundMedia, type InboundMessage } from '../provider.js';
import { bareMessageId, type EmailMeta } from './email.js';

/** The most characters an inbound email's text is kept with (docs/channels.md). */
export const EMAIL_BODY_LIMIT = 65_536;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE_ALL = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A provider id fits the column it is claimed in. */
const ID_LIMIT = 255;

/** How the gateway reads a stored email: text kept as text, HTML converted here, `cid:` links left alone. */
export const PARSE_OPTIONS: SimpleParserOptions = { skipHtmlToText: true, skipTextToHtml: true, keepCidLinks: true, skipImageLinks: true };

/**
 * Emails read into messages at once in this process: one. Reading holds a mail several times over
 * (its raw bytes, its decoded parts, its text), so a flood of large mails is read one after another
 * rather than all together (docs/operating-safely.md, Staying up).
 */
let reading: Promise<unknown> = Promise.resolve();

/** Runs `work` once every email read before it is done with. */
function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const run = reading.then(work, work);
  reading = run.catch(() => {});
  return run;
}

/** Parses a stored email; mailparser reads nearly anything, and what it cannot read is null. */
export async function readEmail(raw: Buffer): Promise<ParsedMail | null> {
  // Loaded on the first email: a process without email channels never loads the mail libraries.
  const { simpleParser } = await import('mailparser');
  try {
    return await simpleParser(raw, PARSE_OPTIONS);
  } catch {
    return null;
  }
}

/** Text as the database and the views take it: no NUL characters, no unpaired surrogates, at most `limit` characters. */
function cleanText(text: string, limit: number): string {
  // Only the head can be kept: a huge body is not copied whole by the replacements below. Every
  // code point is at most two units and each NUL removed is one: twice the limit plus the NULs is
  // enough, and a lone surrogate made at the cut lies past the limit.
  const head = text.length > 2 * limit ? text.slice(0, 2 * limit + countNuls(text)) : text;
  const clean = head.replace(/\u0000/g, '').replace(LONE_SURROGATE_ALL, '\ufffd');
  if (clean.length <= limit) return clean;
  return Array.from(clean).slice(0, limit).join('');
}

/** The NUL characters of a text. */
function countNuls(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\u0000'); at >= 0; at = text.indexOf('\u0000', at + 1)) count++;
  return count;
}

/** The text of an email: its plain-text part, else its HTML converted to text, else nothing. */
export async function emailBody(mail: Pick<ParsedMail, 'text' | 'html'>): Promise<string> {
  // Only the head of a long text is kept (EMAIL_BODY_LIMIT): it is trimmed, not the whole.
  const text = mail.text && mail.text.length > 4 * EMAIL_BODY_LIMIT ? mail.text.slice(0, 4 * EMAIL_BODY_LIMIT) : mail.text;
  if (text && text.trim()) return text.trimEnd();
  if (typeof mail.html === 'string' && mail.html.trim()) {
    const { convert } = await import('html-to-text');
    return convert(mail.html, {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      ],
    }).trim();
  }
  return '';
}

/** Message-IDs as a header lists them (`<a@x> <b@x>`, or as mailparser split them), bare. */
function messageIds(value: string | string[] | undefined): string[] {
  const all = (Array.isArray(value) ? value : value ? [value] : []).flatMap((item) => item.match(/<[^<>]+>/g) ?? [item]);
  return all.map(bareMessageId).filter((id) => id !== '' && id.length <= ID_LIMIT);
}

/**
 * What identifies a repeat of an email (docs/operating-safely.md, Staying up): its sender, its Message-ID and its content
 * as decoded (subject, text, HTML, attachments), hashed. A Message-ID alone is whatever a sender
 * writes: a mail claiming another sender's next one, or one of the gateway's own outbound ids,
 * would otherwise make the real mail a "repeat" and drop it. A relay delivering the same mail
 * again (another route, other Received headers, another transfer encoding) keeps all of these.
 */
function repeatKey(sender: string, messageId: string, mail: ParsedMail): string {
  const attachments = mail.attachments.map((attachment) => createHash('sha256').update(attachment.content).digest('hex'));
  const html = typeof mail.html === 'string' ? mail.html : '';
  // The same JSON as JSON.stringify([sender, messageId, subject, text, html, attachments]) would
  // give, hashed piece by piece: a large text or HTML is not copied into one more string.
  const hash = createHash('sha256').update(`[${JSON.stringify(sender.toLowerCase())},${JSON.stringify(messageId)},${JSON.stringify(mail.subject ?? '')},`);
  jsonString(hash, mail.text ?? '');
  hash.update(',');
  jsonString(hash, html);
  hash.update(`,${JSON.stringify(attachments)}]`);
  return `email:${hash.digest('hex')}`;
}

/** Characters of a long string JSON-quoted at a time. */
const JSON_PIECE = 65_536;

/** Feeds `JSON.stringify(text)` to a hash in pieces (a piece never ends inside a surrogate pair). */
function jsonString(hash: Hash, text: string): void {
  hash.update('"');
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + JSON_PIECE);
    if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end--;
    hash.update(JSON.stringify(text.slice(at, end)).slice(1, -1));
    at = end;
  }
  hash.update('"');
}

/** The `Date` header as a date, when it is one. */
function dateHeader(mail: ParsedMail | null): Date | null {
  const line = mail?.headerLines.find((header) => header.key === 'date')?.line;
  if (!line) return null;
  const at = Date.parse(line.replace(/^date\s*:/i, '').trim());
  return Number.isFinite(at) ? new Date(at) : null;
}

/**
 * The message an email stored by the SMTP listener carries (docs/channels.md): from the `From` address
 * (the envelope sender when there is none), with the display name; as provider id, what identifies
 * a repeat of it (`repeatKey`; a hash of the raw bytes when it has no Message-ID), its Message-ID
 * kept for threads; `In-Reply-To` then `References` (newest first) as
 * the thread to look for; the `Date` header (its second, placed within it by the receipt time: `providerTime`), else the receipt time; the text (HTML converted when
 * there is no plain-text part, without trailing blank lines, at most 65 536 characters); every attachment as media, referred to
 * by the stored event and its position, since the stored email is where it is read back from.
 * An email that cannot be parsed at all is kept as its raw text. No sender at all: nothing.
 */
export function parseEmail(raw: { body: Buffer; headers: Record<string, string>; receivedAt: Date; eventId: string }): Promise<InboundEvent[]> {
  return oneAtATime(() => readIntoMessage(raw));
}

async function readIntoMessage(raw: { body: Buffer; headers: Record<string, string>; receivedAt: Date; eventId: string }): Promise<InboundEvent[]> {
  const mail = await readEmail(raw.body);
  const sender = mail?.from?.value.find((address) => address.address);
  const email = (sender?.address ?? raw.headers['mail-from'] ?? '').trim();
  if (!email || !email.includes('@')) return [];
  const name = sender?.name?.trim();
  const hash = `sha256:${createHash('sha256').update(raw.body).digest('hex')}`;
  const ownId = mail?.messageId ? bareMessageId(mail.messageId) : '';
  // Threads are found by the Message-ID as written; a repeat is found by what identifies one.
  const messageId = ownId && ownId.length <= ID_LIMIT ? ownId : ownId ? `sha256:${createHash('sha256').update(ownId).digest('hex')}` : hash;
  const providerId = mail && ownId ? repeatKey(email, ownId, mail) : hash;
  const references = messageIds(mail?.references);
  const thread = [...new Set([...messageIds(mail?.inReplyTo), ...[...references].reverse()])];
  const media: InboundMedia[] = (mail?.attachments ?? []).map((attachment, index) => ({
    ref: `${raw.eventId}/${index}`,
    contentType: attachment.contentType || null,
    filename: attachment.filename ? cleanText(attachment.filename, 255) : null,
  }));
  const subject = mail?.subject ? cleanText(mail.subject, 998) : null;
  const meta: EmailMeta = { messageId, references, subject };
  const message: InboundMessage = {
    kind: 'message',
    providerId,
    from: { email, ...(name ? { name: cleanText(name, 255) } : {}) },
    at: providerTime(dateHeader(mail) ?? raw.receivedAt, raw.receivedAt),
    body: cleanText(mail ? await emailBody(mail) : raw.body.subarray(0, 4 * EMAIL_BODY_LIMIT).toString('utf8'), EMAIL_BODY_LIMIT),
    media,
    thread,
    meta: { ...meta },
  };
  return [message];
}
