import type { InboundEvent, InboundMedia, InboundStatus } from '../provider.js';

/**
 * Twilio's webhooks (docs/channels.md): an inbound message posted to `/webhooks/twilio/{channelId}`,
 * a delivery status to `…/status`, both as `application/x-www-form-urlencoded` forms. Parameters
 * the gateway does not read are kept (they are part of the signature) and ignored.
 */

/** Which of a channel's two Twilio URLs a webhook came to. */
export type TwilioWebhookKind = 'message' | 'status';

/** The stored header that says which URL an event came to, so the worker reads it the same way. */
export const TWILIO_KIND_HEADER = 'x-connect-twilio-webhook';

/** The most media one inbound message lists (Twilio carries at most 10). */
const MEDIA_MAX = 10;

const E164 = /^\+[1-9]\d{1,14}$/;

/** The form's parameters in order, as the signature reads them: decoded leniently (the signature decides). */
export function formParams(body: Buffer, contentType: string | null): [string, string][] {
  if (!isForm(contentType)) return [];
  return [...new URLSearchParams(body.toString('utf8'))];
}

function isForm(contentType: string | null): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

const first = (params: URLSearchParams, ...names: string[]): string | undefined => {
  for (const name of names) {
    const value = params.get(name);
    if (value) return value;
  }
  return undefined;
};

/** The message's id: `MessageSid`, or the older `SmsMessageSid`/`SmsSid`. */
const messageSid = (params: URLSearchParams) => first(params, 'MessageSid', 'SmsMessageSid', 'SmsSid');

/**
 * Why a verified webhook cannot be read (a 400), or null: it must be a UTF-8 form with a message
 * id, and a status must name its status. A message from a sender that is not a phone number is
 * readable: it is stored, and processing skips it (see parseTwilioWebhook).
 */
export function twilioFormProblem(kind: TwilioWebhookKind, body: Buffer, contentType: string | null): string | null {
  if (!isForm(contentType)) return 'The body is not an application/x-www-form-urlencoded form.';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return 'The form is not UTF-8.';
  }
  const params = new URLSearchParams(text);
  if (!messageSid(params)) return 'The form has no MessageSid.';
  if (kind === 'status' && !first(params, 'MessageStatus', 'SmsStatus')) return 'The form has no MessageStatus.';
  return null;
}

/** Twilio's statuses as the gateway's; those that say nothing new (queued, accepted, sending, …) are none. */
const STATUSES: Record<string, InboundStatus['status']> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  undelivered: 'failed',
  failed: 'failed',
};

/** The media an inbound message lists: `MediaUrlN` with `MediaContentTypeN`, for N below `NumMedia`. */
function media(params: URLSearchParams): InboundMedia[] {
  const count = Math.min(Number(params.get('NumMedia') ?? 0) || 0, MEDIA_MAX);
  const items: InboundMedia[] = [];
  for (let n = 0; n < count; n++) {
    const ref = params.get(`MediaUrl${n}`);
    if (!ref || !/^https?:\/\//i.test(ref)) continue;
    items.push({ ref, contentType: params.get(`MediaContentType${n}`) || null, filename: null });
  }
  return items;
}

/** What a verified Twilio webhook holds: its events, and why any item of it is skipped (never its content). */
export interface TwilioParsed {
  events: InboundEvent[];
  unsupported: string[];
}

/**
 * The events of a verified Twilio webhook, by the URL it came to (`kind`, stored with it): a
 * message from a phone, or a status of a message the channel sent. A message from a sender that
 * is not a phone number in E.164 form (a short code, an alphanumeric sender, `whatsapp:+…`) is
 * not taken: a contact is a phone number. Twilio sends no time with either: `receivedAt` is the
 * event's time.
 */
export function parseTwilioWebhook(body: Buffer, kind: TwilioWebhookKind, receivedAt: Date): TwilioParsed {
  const params = new URLSearchParams(body.toString('utf8'));
  const providerId = messageSid(params);
  if (!providerId) return { events: [], unsupported: [] };
  if (kind === 'message') {
    const phone = params.get('From') ?? '';
    if (!E164.test(phone)) return { events: [], unsupported: ['a message from a sender that is not a phone number in E.164 form'] };
    const name = params.get('ProfileName')?.trim();
    return { events: [{ kind: 'message', providerId, from: { phone, ...(name ? { name } : {}) }, at: receivedAt, body: params.get('Body') ?? '', media: media(params) }], unsupported: [] };
  }
  const reported = (first(params, 'MessageStatus', 'SmsStatus') ?? '').toLowerCase();
  const status = STATUSES[reported];
  if (!status) return { events: [], unsupported: [] };
  if (status !== 'failed') return { events: [{ kind: 'status', providerId, status, at: receivedAt }], unsupported: [] };
  const code = params.get('ErrorCode') || reported;
  const text = params.get('ErrorMessage') || `Twilio reported the message ${reported}`;
  return { events: [{ kind: 'status', providerId, status, at: receivedAt, error: { code, text } }], unsupported: [] };
}
