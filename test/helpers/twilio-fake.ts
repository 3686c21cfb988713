import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import webhooks from 'twilio/lib/webhooks/webhooks.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createChannel } from '../../src/modules/channels/channels.service.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';
import { uniqueHost } from './factories.js';
import { testSealer } from './secrets.js';

/**
 * A local stand-in for Twilio's REST API (Programmable Messaging), for tests: it takes message
 * sends as the real one does (HTTP Basic, a form) and records them, can be told to fail with
 * Twilio's error bodies, serves inbound media the way Twilio does (the API's media URL redirects
 * to a CDN, here a second listener: another origin), and builds and signs the webhooks Twilio
 * would post back — signed by Twilio's own library. Nothing leaves 127.0.0.1.
 */

export interface RecordedTwilioSend {
  /** When it arrived (epoch ms). */
  at: number;
  accountSid: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** The form as sent, pairs in order (MediaUrl repeated). */
  form: [string, string][];
}

/**
 * A Twilio error answer: `{code, message, more_info, status}` with that HTTP status (and `headers`,
 * such as a `Retry-After`); `{status, json}` answers that JSON as is; `drop` closes the connection
 * unanswered; `take` answers as usual.
 */
export type TwilioAnswer = { status: number; code: number; message: string; headers?: Record<string, string> } | { status: number; json: unknown } | 'drop' | 'take';

/** Twilio's rate-limit answer, on demand: HTTP 429 with error 20429, and a `Retry-After` of `retryAfter` when given. */
export function twilioRateLimitAnswer(retryAfter?: string): TwilioAnswer {
  return { status: 429, code: 20429, message: 'Too Many Requests', ...(retryAfter !== undefined ? { headers: { 'retry-after': retryAfter } } : {}) };
}

export interface TwilioFake {
  /** The base URL to give the gateway as TWILIO_API_URL. */
  url: string;
  /** The CDN the media URLs redirect to (another origin). */
  cdnUrl: string;
  sent: RecordedTwilioSend[];
  /** Every request the CDN got: its path and the Authorization header it carried, if any. */
  cdnRequests: { path: string; authorization: string | undefined }[];
  /** Every request to the API's media URLs, with its Authorization header. */
  mediaRequests: { path: string; authorization: string | undefined }[];
  failNext(...answers: TwilioAnswer[]): void;
  /** Media the fake serves: the URL to put in `MediaUrlN` (on the API, redirecting `redirects` times before the CDN). */
  addMedia(bytes: Buffer, contentType: string, options?: { redirects?: number; gzip?: boolean }): string;
  close(): Promise<void>;
}

const twilioError = (res: http.ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));

/** `accountSid`/`authToken`: the only credentials the fake accepts (anything else is Twilio's 401, code 20003). */
export async function startTwilioFake(options: { accountSid: string; authToken: string }): Promise<TwilioFake> {
  const sent: RecordedTwilioSend[] = [];
  const cdnRequests: TwilioFake['cdnRequests'] = [];
  const mediaRequests: TwilioFake['mediaRequests'] = [];
  const queued: TwilioAnswer[] = [];
  const media = new Map<string, { bytes: Buffer; contentType: string; redirects: number; gzip: boolean }>();
  const expected = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
  let base = '';
  let cdnBase = '';

  const cdn = http.createServer((req, res) => {
    cdnRequests.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const id = /^\/cdn\/([^/?]+)/.exec(req.url ?? '')?.[1];
    const item = id ? media.get(id) : undefined;
    if (!item) return res.writeHead(404).end();
    // `gzip`: encoded on the way, as a CDN does: the Content-Length counts the encoded bytes.
    if (item.gzip) {
      const encoded = gzipSync(item.bytes);
      return res.writeHead(200, { 'content-type': item.contentType, 'content-encoding': 'gzip', 'content-length': encoded.length }).end(encoded);
    }
    res.writeHead(200, { 'content-type': item.contentType, 'content-length': item.bytes.length }).end(item.bytes);
  });

  const api = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const authorized = req.headers.authorization === expected;
      const send = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(url.pathname);
      if (req.method === 'POST' && send) {
        const form = [...new URLSearchParams(Buffer.concat(chunks).toString('utf8'))];
        sent.push({ at: Date.now(), accountSid: decodeURIComponent(send[1]!), authorization: req.headers.authorization, contentType: req.headers['content-type'], form });
        if (!authorized || decodeURIComponent(send[1]!) !== options.accountSid) return twilioError(res, 401, 20003, 'Authenticate');
        const answer = queued.shift();
        if (answer === 'drop') return req.socket.destroy();
        if (answer && answer !== 'take' && 'json' in answer) return res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
        if (answer && answer !== 'take') return twilioError(res, answer.status, answer.code, answer.message, answer.headers);
        const sid = `SM${randomBytes(16).toString('hex')}`;
        const value = (name: string) => form.find(([key]) => key === name)?.[1] ?? null;
        res.writeHead(201, { 'content-type': 'application/json' }).end(
          JSON.stringify({ sid, account_sid: options.accountSid, to: value('To'), from: value('From'), messaging_service_sid: value('MessagingServiceSid'), body: value('Body'), status: 'queued', num_media: '0', error_code: null, error_message: null }),
        );
        return;
      }
      const file = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\/([^/]+)\/Media\/([^/]+?)(?:\/hop(\d+))?$/.exec(url.pathname);
      if (req.method === 'GET' && file) {
        mediaRequests.push({ path: url.pathname, authorization: req.headers.authorization });
        if (!authorized) return twilioError(res, 401, 20003, 'Authenticate');
        const id = file[3]!;
        const item = media.get(id);
        if (!item) return twilioError(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
        const hop = Number(file[4] ?? 0);
        // Same-origin hops first (as many as asked), then the CDN, as Twilio's 307 to its media store.
        const location = hop + 1 < item.redirects ? `${url.pathname.replace(/\/hop\d+$/, '')}/hop${hop + 1}` : `${cdnBase}/cdn/${id}?Expires=1&Signature=fake`;
        return res.writeHead(307, { location }).end();
      }
      twilioError(res, 404, 20404, 'The requested resource was not found');
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  // Another host name for the CDN: another origin than the API's, as Twilio's media store is.
  await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  cdnBase = `http://localhost:${(cdn.address() as AddressInfo).port}`;
  const close = (server: http.Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: base,
    cdnUrl: cdnBase,
    sent,
    cdnRequests,
    mediaRequests,
    failNext: (...answers) => queued.push(...answers),
    addMedia(bytes, contentType, { redirects = 1, gzip = false } = {}) {
      const id = `ME${randomBytes(16).toString('hex')}`;
      media.set(id, { bytes, contentType, redirects, gzip });
      return `${base}/2010-04-01/Accounts/${options.accountSid}/Messages/MM${randomBytes(16).toString('hex')}/Media/${id}`;
    },
    close: async () => {
      await Promise.all([close(api), close(cdn)]);
    },
  };
}

// ───────────────────────────── webhooks as Twilio sends them ─────────────────────────────

/** Form pairs as Twilio's library takes parameters: a repeated name as a list. */
function paramsObject(form: [string, string][]): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of form) {
    const previous = params[name];
    params[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return params;
}

/** The signature Twilio's own library computes for a request to `url` with this form. */
export function twilioLibrarySignature(authToken: string, url: string, form: [string, string][]): string {
  return webhooks.getExpectedTwilioSignature(authToken, url, paramsObject(form));
}

/** Whether Twilio's own library accepts `signature` for this request. */
export function twilioLibraryAccepts(authToken: string, signature: string, url: string, form: [string, string][]): boolean {
  return webhooks.validateRequest(authToken, signature, url, paramsObject(form));
}

/** The request Twilio posts to `url`: the form, and its signature under the auth token. */
export function signedTwilioRequest(url: string, form: [string, string][], authToken: string): { headers: Record<string, string>; body: string } {
  return {
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioLibrarySignature(authToken, url, form), 'i-twilio-idempotency-token': randomBytes(8).toString('hex') },
    body: new URLSearchParams(form).toString(),
  };
}

/** An inbound message's form, as Twilio posts it to a number's messaging webhook. */
export function inboundMessageForm(
  accountSid: string,
  message: { from: string; to: string; body: string; sid?: string; media?: { url: string; contentType: string }[]; extra?: [string, string][] },
): [string, string][] {
  const sid = message.sid ?? `SM${randomBytes(16).toString('hex')}`;
  const media = message.media ?? [];
  return [
    ['ToCountry', 'US'],
    ['ToState', 'CA'],
    ['SmsMessageSid', sid],
    ['NumMedia', String(media.length)],
    ['ToCity', 'SAN FRANCISCO'],
    ['FromZip', ''],
    ['SmsSid', sid],
    ['FromState', ''],
    ['SmsStatus', 'received'],
    ['FromCity', ''],
    ['Body', message.body],
    ['FromCountry', 'NL'],
    ['To', message.to],
    ['MessagingServiceSid', ''],
    ['ToZip', '94105'],
    ['NumSegments', '1'],
    ['MessageSid', sid],
    ['AccountSid', accountSid],
    ['From', message.from],
    ['ApiVersion', '2010-04-01'],
    ...media.flatMap((item, n): [string, string][] => [
      [`MediaContentType${n}`, item.contentType],
      [`MediaUrl${n}`, item.url],
    ]),
    ...(message.extra ?? []),
  ];
}

/** A status callback's form, as Twilio posts it to a message's StatusCallback. */
export function statusForm(accountSid: string, sid: string, status: string, options: { errorCode?: string; errorMessage?: string; to?: string; from?: string } = {}): [string, string][] {
  return [
    ['SmsSid', sid],
    ['SmsStatus', status],
    ['MessageStatus', status],
    ['To', options.to ?? '+31612345678'],
    ['MessageSid', sid],
    ['AccountSid', accountSid],
    ['From', options.from ?? TWILIO_SETTINGS.from],
    ['ApiVersion', '2010-04-01'],
    ...(options.errorCode ? ([['ErrorCode', options.errorCode]] as [string, string][]) : []),
    ...(options.errorMessage ? ([['ErrorMessage', options.errorMessage]] as [string, string][]) : []),
  ];
}

// ───────────────────────────── a Twilio channel ─────────────────────────────

export const TWILIO_SETTINGS = {
  accountSid: `AC${'0123456789abcdef'.repeat(2)}`,
  authToken: 'f0e1d2c3b4a5968778695a4b3c2d1e0f',
  from: '+14155550100',
};

/** A workspace with a twilio channel (the settings above unless given), its key and host. */
export async function twilioWorkspace(prisma: PrismaClient, settings: Partial<typeof TWILIO_SETTINGS> = {}) {
  const config = { ...TWILIO_SETTINGS, ...settings };
  const workspace = await createWorkspace(prisma, { hostname: uniqueHost('tw'), name: 'Twilio workspace' });
  const { channel, apiKey } = await createChannel(
    prisma,
    {
      workspaceId: workspace.id,
      name: 'SMS line',
      type: 'sms',
      provider: { provider: 'twilio', settings: { accountSid: config.accountSid, from: config.from }, secrets: { authToken: config.authToken } },
    },
    testSealer,
  );
  return { workspace, channel, apiKey, host: workspace.hostname, settings: config };
}
