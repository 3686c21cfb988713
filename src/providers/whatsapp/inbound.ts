import { createHmac, timingSafeEqual } from 'node:crypto';
import { providerTime, type InboundEvent, type InboundMedia, type InboundMessage } from '../provider.js';
import { WHATSAPP_OPTED_OUT_CODE } from './opt-out.js';

/** The header Meta signs a webhook's raw body in: `sha256=<hex HMAC-SHA256 keyed with the app secret>`. */
export const SIGNATURE_HEADER = 'x-hub-signature-256';

/** Whether the header has the signature's form at all (checked before the body is read). */
export function signatureWellFormed(header: string | null): header is string {
  return header !== null && /^sha256=[0-9a-f]{64}$/i.test(header.trim());
}

/** Whether `header` is the signature of exactly these bytes under the app secret, compared in constant time. */
export function verifySignature(header: string | null, body: Buffer, appSecret: string): boolean {
  if (!signatureWellFormed(header) || !appSecret) return false;
  const expected = createHmac('sha256', appSecret).update(body).digest();
  const given = Buffer.from(header.trim().slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The signature Meta would send for `body` (the local fake and the tests sign with it). */
export function signBody(body: string | Buffer, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

/** Whether a verified body is one the worker can read: a JSON object (anything inside it is read leniently). */
export function parseableBody(body: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

type Json = Record<string, unknown>;
const record = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** A Unix timestamp in seconds (as WhatsApp sends it, a string) as a date within that second, placed by the receipt time (`providerTime`); `receivedAt` when there is none. */
function unixTime(value: unknown, receivedAt: Date): Date {
  const seconds = typeof value === 'string' || typeof value === 'number' ? Number(value) : NaN;
  return Number.isFinite(seconds) && seconds > 0 ? providerTime(new Date(seconds * 1000), receivedAt) : receivedAt;
}

const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;

/** What a person's message says and carries; a kind this does not know is kept as a placeholder, never dropped. */
function content(message: Json): { body: string; media: InboundMedia[] } {
  const type = text(message.type) ?? 'unknown';
  if (type === 'text') return { body: text(record(message.text).body) ?? '', media: [] };
  if ((MEDIA_KINDS as readonly string[]).includes(type)) {
    const part = record(message[type]);
    const ref = text(part.id);
    return {
      body: text(part.caption) ?? '',
      media: ref ? [{ ref, contentType: text(part.mime_type) ?? null, filename: text(part.filename) ?? null }] : [],
    };
  }
  if (type === 'button') return { body: text(record(message.button).text) ?? '', media: [] };
  if (type === 'interactive') {
    const interactive = record(message.interactive);
    const reply = record(interactive.button_reply ?? interactive.list_reply);
    return { body: text(reply.title) ?? '[Interactive reply]', media: [] };
  }
  if (type === 'reaction') return { body: `[Reaction ${text(record(message.reaction).emoji) ?? 'removed'}]`, media: [] };
  if (type === 'location') {
    const location = record(message.location);
    const where = [text(location.name), text(location.address)].filter(Boolean).join(', ');
    return { body: `[Location ${location.latitude ?? '?'},${location.longitude ?? '?'}${where ? ` ${where}` : ''}]`, media: [] };
  }
  return { body: `[Unsupported WhatsApp message type: ${type}]`, media: [] };
}

/**
 * Every message and status of a webhook body, by the phone number (its id) it was sent to: each
 * entry, each change, each message and each status, not only the first. Meta sends the events of
 * every number of an app to the app's one callback URL, so a body may hold another number's.
 * A change without a number is the receiving channel's (key ''). `receivedAt` stands in for a
 * missing timestamp.
 */
export function parseWebhook(body: Buffer, receivedAt: Date): Map<string, InboundEvent[]> {
  const root = record(JSON.parse(body.toString('utf8')));
  const byNumber = new Map<string, InboundEvent[]>();
  for (const entry of list(root.entry)) {
    for (const change of list(record(entry).changes)) {
      const value = record(record(change).value);
      const number = text(record(value.metadata).phone_number_id) ?? '';
      const events = byNumber.get(number) ?? [];
      byNumber.set(number, events);
      const names = new Map<string, string>();
      for (const contact of list(value.contacts)) {
        const waId = text(record(contact).wa_id);
        const name = text(record(record(contact).profile).name);
        if (waId && name) names.set(waId, name);
      }
      for (const raw of list(value.messages)) {
        const message = record(raw);
        const providerId = text(message.id);
        const from = text(message.from);
        const digits = from?.replace(/\D/g, '');
        if (!providerId || !digits) continue;
        const name = names.get(from!);
        const event: InboundMessage = {
          kind: 'message',
          providerId,
          from: { phone: `+${digits}`, ...(name ? { name } : {}) },
          at: unixTime(message.timestamp, receivedAt),
          ...content(message),
        };
        events.push(event);
      }
      for (const raw of list(value.statuses)) {
        const status = record(raw);
        const providerId = text(status.id);
        const state = text(status.status);
        if (!providerId || (state !== 'sent' && state !== 'delivered' && state !== 'read' && state !== 'failed')) continue;
        const error = record(list(status.errors)[0]);
        const errorText = [text(error.title) ?? text(error.message), text(record(error.error_data).details)].filter(Boolean).join(': ');
        events.push({
          kind: 'status',
          providerId,
          status: state,
          at: unixTime(status.timestamp, receivedAt),
          ...(state === 'failed' ? { error: { code: String(error.code ?? 'unknown'), text: errorText || 'failed' } } : {}),
          ...(state === 'failed' && String(error.code) === WHATSAPP_OPTED_OUT_CODE ? { optedOut: true } : {}),
        });
      }
    }
  }
  return byNumber;
}
