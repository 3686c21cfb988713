/**
 * The broadcast row's fake provider (bench/broadcast.ts): a `node:http` receiver of the `webhook`
 * provider's signed POSTs, in a process of its own (forked by the runner, spoken to over IPC), so
 * that the runner's own load and polls never delay when an arrival is counted. It answers each
 * POST `200` and counts what it took per wall-clock second and per recipient (the payload's
 * `contact.id`). Told to (`limitAfter`), once it has taken that many it answers `429` with
 * `Retry-After` for `limitSeconds`, counting those answers apart, then takes everything again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceiverStart {
  type: 'start';
  /** Sends taken before the rate-limit window opens (0: no window). */
  limitAfter: number;
  limitSeconds: number;
  /** What `Retry-After` says during the window (seconds). */
  retryAfter: number;
}

export interface ReceiverReport {
  type: 'report';
  /** Sends answered 200. */
  taken: number;
  /** Recipients (contact ids) taken at least once, and sends taken for a recipient already taken. */
  distinct: number;
  twice: number;
  /** Of those, sends of the delivery (`deliveryId`) already taken for that recipient: the same message again, not a second message. */
  twiceSameDelivery: number;
  /** Sends answered 429 during the window. */
  refused: number;
  /** Bodies that were not the webhook provider's message payload (answered 400). */
  malformed: number;
  /** Sends taken in each wall-clock second (epoch seconds, in order, with the empty seconds between). */
  perSecond: { second: number; taken: number; refused: number }[];
  /** The most sends taken within any 1,000 ms (a sliding window over the arrivals). */
  maxSliding: number;
  /** First and last send taken (epoch ms), and the rate-limit window (epoch ms), if it opened. */
  first: number | null;
  last: number | null;
  window: { from: number; until: number } | null;
}

let start: ReceiverStart = { type: 'start', limitAfter: 0, limitSeconds: 0, retryAfter: 1 };
const arrivals: number[] = [];
const refusedAt: number[] = [];
const recipients = new Map<string, string>();
let twice = 0;
let twiceSameDelivery = 0;
let malformed = 0;
let window: { from: number; until: number } | null = null;

function answer(res: http.ServerResponse, status: number, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': '2', ...headers }).end('{}');
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = Date.now();
    let contact: string | undefined;
    let delivery = '';
    try {
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { deliveryId?: string; contact?: { id?: string } };
      contact = payload.contact?.id;
      delivery = payload.deliveryId ?? '';
    } catch {
      contact = undefined;
    }
    if (req.method !== 'POST' || !contact) {
      malformed++;
      return answer(res, 400);
    }
    if (!window && start.limitSeconds > 0 && arrivals.length >= start.limitAfter) window = { from: at, until: at + start.limitSeconds * 1000 };
    if (window && at >= window.from && at < window.until) {
      refusedAt.push(at);
      return answer(res, 429, { 'retry-after': String(start.retryAfter) });
    }
    arrivals.push(at);
    const seen = recipients.get(contact);
    if (seen !== undefined) {
      twice++;
      if (seen === delivery) twiceSameDelivery++;
    } else recipients.set(contact, delivery);
    answer(res, 200);
  });
});
server.keepAliveTimeout = 65_000;

function report(): ReceiverReport {
  const seconds = new Map<number, { taken: number; refused: number }>();
  const slot = (at: number) => {
    const second = Math.floor(at / 1000);
    let entry = seconds.get(second);
    if (!entry) seconds.set(second, (entry = { taken: 0, refused: 0 }));
    return entry;
  };
  for (const at of arrivals) slot(at).taken++;
  for (const at of refusedAt) slot(at).refused++;
  const keys = [...seconds.keys()];
  const perSecond: ReceiverReport['perSecond'] = [];
  if (keys.length) {
    for (let second = Math.min(...keys); second <= Math.max(...keys); second++) perSecond.push({ second, ...(seconds.get(second) ?? { taken: 0, refused: 0 }) });
  }
  let maxSliding = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while (arrivals[i]! - arrivals[j]! >= 1000) j++;
    maxSliding = Math.max(maxSliding, i - j + 1);
  }
  return {
    type: 'report',
    taken: arrivals.length,
    distinct: recipients.size,
    twice,
    twiceSameDelivery,
    refused: refusedAt.length,
    malformed,
    perSecond,
    maxSliding,
    first: arrivals[0] ?? null,
    last: arrivals.at(-1) ?? null,
    window,
  };
}

process.on('message', (message: { type: string } & Partial<ReceiverStart>) => {
  if (message.type === 'start') start = message as ReceiverStart;
  else if (message.type === 'report') process.send!(report());
  else if (message.type === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});

server.listen(0, '127.0.0.1', () => process.send!({ type: 'ready', port: (server.address() as AddressInfo).port }));
