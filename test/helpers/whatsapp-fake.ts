import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createChannel } from '../../src/modules/channels/channels.service.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';
import { signBody } from '../../src/providers/whatsapp/inbound.js';
import { uniqueHost } from './factories.js';
import { testSealer } from './secrets.js';

/**
 * A local stand-in for Meta's WhatsApp Cloud API (Graph API), for tests and the offline demo:
 * it takes message sends as the real one does (and records them), serves media, can be told to
 * fail, and builds and signs the webhooks Meta would send back. Nothing leaves 127.0.0.1.
 */

export interface RecordedSend {
  /** When it arrived (epoch ms). */
  at: number;
  phoneNumberId: string;
  version: string;
  authorization: string | undefined;
  body: any;
}

/**
 * An answer the fake is told to give: a status and body, `drop` (close the connection unanswered),
 * or `take` (answer as usual). `raw`: the body is a string sent as it is (not JSON-encoded);
 * `trickleMs`: the head at once, then the body one byte every that many milliseconds;
 * `cutAfter`: the head announcing the whole body, that many bytes of it, then the connection closed;
 * `headers`: more headers on the answer (a `Retry-After`).
 */
export type FakeAnswer =
  | { status: number; body: unknown; delayMs?: number; raw?: boolean; trickleMs?: number; cutAfter?: number; headers?: Record<string, string> }
  | 'drop'
  | 'take';

/**
 * Meta's rate-limit answers, as the fake gives them on demand: `130429` (the number's throughput),
 * `131056` (the pair of business and recipient), `80007` (the account) with HTTP 400 and the Graph
 * error body, or a bare HTTP `429`; with `retryAfter`, a `Retry-After` header of that value.
 */
export function rateLimitAnswer(code: 130429 | 131056 | 80007 | 429, retryAfter?: string): FakeAnswer {
  const said = { 130429: ['(#130429) Rate limit hit', 'Cloud API message throughput has been reached.'], 131056: ['(#131056) (Business Account, Consumer Account) pair rate limit hit', 'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.'], 80007: ['(#80007) Rate limit issues', 'The WhatsApp Business Account has reached its rate limit.'], 429: ['Too many requests', 'Too many requests.'] }[code];
  return {
    status: code === 429 ? 429 : 400,
    body: { error: { message: said[0], type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: said[1] }, fbtrace_id: 'Afake' } },
    ...(retryAfter !== undefined ? { headers: { 'retry-after': retryAfter } } : {}),
  };
}

export interface WhatsAppFake {
  /** The base URL to give the gateway as WHATSAPP_API_URL. */
  url: string;
  /** Every message send, in order of arrival. */
  sent: RecordedSend[];
  /** Every media download asked for (the media id), metadata and bytes alike. */
  mediaRequests: string[];
  /** Answers the next sends with these, in order, before going back to taking them. */
  failNext(...answers: FakeAnswer[]): void;
  /** Answers every send from now on with `answer` (null: take them again). */
  answerAll(answer: FakeAnswer | null): void;
  /** Calls `listener` with each send the fake takes, and its wamid. */
  onSend(listener: (send: RecordedSend, wamid: string) => void): void;
  /**
   * Media the fake serves: GET /{version}/{id} for its URL, then the URL for its bytes.
   * `undeclared`: no `file_size`, and the bytes sent chunked without a Content-Length;
   * `fileSize`: the `file_size` announced, whatever the bytes are; `gzip`: the bytes sent
   * gzip-encoded, with the Content-Length of the encoded bytes; `url`: the URL the media answer
   * names instead of the fake's own (another host).
   */
  addMedia(id: string, bytes: Buffer, mimeType: string, options?: MediaOptions): void;
  close(): Promise<void>;
}

export interface MediaOptions {
  undeclared?: boolean;
  fileSize?: number;
  gzip?: boolean;
  url?: string;
}

/** `token`: the only access token the fake accepts (like Graph, anything else is a 401 with code 190). */
export async function startWhatsAppFake(options: { token: string }): Promise<WhatsAppFake> {
  const sent: RecordedSend[] = [];
  const mediaRequests: string[] = [];
  const media = new Map<string, { bytes: Buffer; mimeType: string } & MediaOptions>();
  const queued: FakeAnswer[] = [];
  const listeners: ((send: RecordedSend, wamid: string) => void)[] = [];
  let always: FakeAnswer | null = null;
  let base = '';

  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  /** A told answer, whole, trickled or cut off. */
  const give = (res: http.ServerResponse, answer: Exclude<FakeAnswer, 'drop' | 'take'>) => {
    const bytes = Buffer.from(answer.raw ? String(answer.body) : JSON.stringify(answer.body));
    res.on('error', () => {});
    const headers = { 'content-type': 'application/json', ...answer.headers };
    if (answer.trickleMs === undefined && answer.cutAfter === undefined) return void res.writeHead(answer.status, headers).end(bytes);
    res.writeHead(answer.status, { ...headers, 'content-length': bytes.length });
    res.flushHeaders();
    if (answer.cutAfter !== undefined) {
      res.write(bytes.subarray(0, answer.cutAfter));
      return void setTimeout(() => res.socket?.destroy(), 20);
    }
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      res.write(bytes.subarray(sent, sent + 1));
      if (++sent < bytes.length) return;
      clearInterval(timer);
      res.end();
    }, answer.trickleMs);
    res.on('close', () => clearInterval(timer));
  };
  const graphError = (res: http.ServerResponse, status: number, code: number, message: string) =>
    json(res, status, { error: { message, type: 'OAuthException', code, fbtrace_id: 'Afake' } });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const authorized = req.headers.authorization === `Bearer ${options.token}`;
      const send = /^\/(v\d+\.\d+)\/([^/]+)\/messages$/.exec(url.pathname);
      if (req.method === 'POST' && send) {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return graphError(res, 400, 100, 'Invalid JSON');
        }
        const record: RecordedSend = { at: Date.now(), version: send[1]!, phoneNumberId: decodeURIComponent(send[2]!), authorization: req.headers.authorization, body };
        sent.push(record);
        if (!authorized) return graphError(res, 401, 190, 'Invalid OAuth access token.');
        const answer = queued.shift() ?? always;
        if (answer === 'drop') return req.socket.destroy();
        if (answer && answer !== 'take') return void setTimeout(() => give(res, answer), answer.delayMs ?? 0);
        const wamid = `wamid.${randomBytes(12).toString('hex')}`;
        json(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: (body as any)?.to, wa_id: (body as any)?.to }], messages: [{ id: wamid }] });
        for (const listener of listeners) listener(record, wamid);
        return;
      }
      const mediaInfo = /^\/(v\d+\.\d+)\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && mediaInfo) {
        const id = decodeURIComponent(mediaInfo[2]!);
        mediaRequests.push(id);
        if (!authorized) return graphError(res, 401, 190, 'Invalid OAuth access token.');
        const item = media.get(id);
        if (!item) return graphError(res, 400, 100, `Unsupported get request. Object with ID '${id}' does not exist`);
        const size = item.fileSize !== undefined ? { file_size: item.fileSize } : item.undeclared ? {} : { file_size: item.bytes.length };
        return json(res, 200, { messaging_product: 'whatsapp', url: item.url ?? `${base}/media-bytes/${encodeURIComponent(id)}`, mime_type: item.mimeType, sha256: 'fake', ...size, id });
      }
      const bytes = /^\/media-bytes\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && bytes) {
        if (!authorized) return graphError(res, 401, 190, 'Invalid OAuth access token.');
        const item = media.get(decodeURIComponent(bytes[1]!));
        if (!item) return graphError(res, 404, 100, 'Not found');
        if (item.gzip) {
          const encoded = gzipSync(item.bytes);
          return res.writeHead(200, { 'content-type': item.mimeType, 'content-encoding': 'gzip', 'content-length': encoded.length }).end(encoded);
        }
        if (!item.undeclared) return res.writeHead(200, { 'content-type': item.mimeType, 'content-length': item.bytes.length }).end(item.bytes);
        res.writeHead(200, { 'content-type': item.mimeType });
        // Chunked, in pieces of 64 KiB, as a server streaming a file of unknown size sends it.
        let offset = 0;
        const next = () => {
          while (offset < item.bytes.length) {
            const piece = item.bytes.subarray(offset, offset + 65_536);
            offset += piece.length;
            if (!res.write(piece)) return void res.once('drain', next);
          }
          res.end();
        };
        res.on('error', () => {});
        return next();
      }
      graphError(res, 404, 100, 'Unknown path');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    sent,
    mediaRequests,
    failNext: (...answers) => queued.push(...answers),
    answerAll: (answer) => (always = answer),
    onSend: (listener) => listeners.push(listener),
    addMedia: (id, bytesOf, mimeType, options = {}) => media.set(id, { bytes: bytesOf, mimeType, ...options }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ───────────────────────────── webhooks as Meta sends them ─────────────────────────────

export interface WhatsAppChange {
  phoneNumberId: string;
  contacts?: { waId: string; name: string }[];
  messages?: Record<string, unknown>[];
  statuses?: Record<string, unknown>[];
}

/** A webhook body of one entry per group of changes, in the shape Meta sends. */
export function webhookBody(...entries: WhatsAppChange[][]): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: entries.map((changes, i) => ({
      id: `WABA${i}`,
      changes: changes.map((change) => ({
        field: 'messages',
        value: {
          messaging_product: 'whatsapp',
          metadata: { display_phone_number: '15550001111', phone_number_id: change.phoneNumberId },
          ...(change.contacts ? { contacts: change.contacts.map((c) => ({ profile: { name: c.name }, wa_id: c.waId })) } : {}),
          ...(change.messages ? { messages: change.messages } : {}),
          ...(change.statuses ? { statuses: change.statuses } : {}),
        },
      })),
    })),
  });
}

/** An inbound text message as Meta shows it in `messages`. */
export function textMessage(from: string, text: string, options: { id?: string; at?: Date } = {}): Record<string, unknown> {
  return {
    from: from.replace(/^\+/, ''),
    id: options.id ?? `wamid.in.${randomBytes(10).toString('hex')}`,
    timestamp: String(Math.floor((options.at ?? new Date()).getTime() / 1000)),
    type: 'text',
    text: { body: text },
  };
}

/** A delivery status as Meta shows it in `statuses`. */
export function statusUpdate(wamid: string, status: 'sent' | 'delivered' | 'read' | 'failed', options: { at?: Date; recipient?: string; error?: { code: number; title: string; details?: string } } = {}) {
  return {
    id: wamid,
    status,
    timestamp: String(Math.floor((options.at ?? new Date()).getTime() / 1000)),
    recipient_id: (options.recipient ?? '31612345678').replace(/^\+/, ''),
    ...(options.error ? { errors: [{ code: options.error.code, title: options.error.title, ...(options.error.details ? { error_data: { details: options.error.details } } : {}) }] } : {}),
  };
}

/** The headers Meta sends a webhook with: JSON, and the body's signature under the app secret. */
export function signedHeaders(body: string, appSecret: string): Record<string, string> {
  return { 'content-type': 'application/json', 'x-hub-signature-256': signBody(body, appSecret) };
}

// ───────────────────────────── a WhatsApp channel ─────────────────────────────

export const WHATSAPP_SETTINGS = {
  phoneNumberId: '109876543210',
  accessToken: 'EAAG-test-access-token-0123456789',
  appSecret: 'app-secret-0123456789abcdef',
  verifyToken: 'verify-me-please',
};

/** A workspace with a whatsapp_cloud channel (the settings above unless given), its key and host. */
export async function whatsappWorkspace(prisma: PrismaClient, settings: Partial<typeof WHATSAPP_SETTINGS> = {}) {
  const config = { ...WHATSAPP_SETTINGS, ...settings };
  const workspace = await createWorkspace(prisma, { hostname: uniqueHost('wa'), name: 'WhatsApp workspace' });
  const { channel, apiKey } = await createChannel(
    prisma,
    {
      workspaceId: workspace.id,
      name: 'WhatsApp line',
      type: 'whatsapp',
      provider: {
        provider: 'whatsapp_cloud',
        settings: { phoneNumberId: config.phoneNumberId },
        secrets: { accessToken: config.accessToken, appSecret: config.appSecret, verifyToken: config.verifyToken },
      },
    },
    testSealer,
  );
  return { workspace, channel, apiKey, host: workspace.hostname, settings: config };
}
