import http from 'node:http';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { ServerProcess } from './servers.js';
import { rssMb } from './servers.js';

/**
 * The crowd row: `subscribers` GraphQL subscriptions to `messageAdded` on the gateway, half over
 * WebSocket (graphql-ws) and half over SSE (distinct connections), while REST sends arrive at
 * `rate` per second for `seconds`. Measured: the gateway's memory per idle subscription, the events
 * delivered against those expected (every send to every subscriber), the fan-out p99 (from a send's
 * 202 to the last subscriber receiving it) and the sends' own p99.
 */
export interface CrowdResult {
  subscribers: number;
  sends: number;
  accepted: number;
  /** Resident memory the gateway grew by per open, idle subscription, in KiB. */
  kbPerSubscriber: number | null;
  delivered: number;
  expected: number;
  fanOutP99Ms: number | null;
  sendP99Ms: number | null;
}

const DOCUMENT = 'subscription BenchCrowd { messageAdded { id body status } }';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const p99 = (values: number[]) => (values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))]! : null);

export async function crowdRound(
  gateway: ServerProcess,
  ctx: { host: string; apiKey: string; sendContacts: string[] },
  options: { subscribers: number; rate?: number; seconds?: number },
): Promise<CrowdResult> {
  const { subscribers } = options;
  const rate = options.rate ?? 50;
  const seconds = options.seconds ?? 10;
  const url = new URL(gateway.base);
  const port = Number(url.port);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  /** When each subscriber received each message id. */
  const arrivals = new Map<string, number[]>();
  const heard = (id: string) => {
    let list = arrivals.get(id);
    if (!list) arrivals.set(id, (list = []));
    list.push(performance.now());
  };

  const before = rssMb(gateway.pid);
  const sockets: Client[] = [];
  const streams: http.ClientRequest[] = [];
  const opening: Promise<void>[] = [];
  for (let index = 0; index < subscribers; index++) {
    if (index % 2 === 0) {
      const headers = { host: ctx.host };
      class HostedWebSocket extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers });
        }
      }
      const client = createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: HostedWebSocket,
        connectionParams: { Authorization: `Bearer ${ctx.apiKey}` },
        lazy: false,
        retryAttempts: 0,
        onNonLazyError: () => {},
      });
      sockets.push(client);
      opening.push(
        new Promise<void>((resolve) => {
          client.on('connected', () => resolve());
          client.on('closed', () => resolve());
          client.subscribe<{ messageAdded: { id: string } }>({ query: DOCUMENT }, { next: (result) => result.data && heard(result.data.messageAdded.id), error: () => {}, complete: () => {} });
        }),
      );
    } else {
      opening.push(
        new Promise<void>((resolve) => {
          const request = http.request(
            {
              host: '127.0.0.1',
              port,
              path: '/graphql',
              method: 'POST',
              agent,
              headers: { host: ctx.host, authorization: `Bearer ${ctx.apiKey}`, accept: 'text/event-stream', 'content-type': 'application/json' },
            },
            (response) => {
              resolve();
              let buffer = '';
              response.setEncoding('utf8');
              response.on('data', (chunk: string) => {
                buffer += chunk;
                let end: number;
                while ((end = buffer.indexOf('\n\n')) >= 0) {
                  const block = buffer.slice(0, end);
                  buffer = buffer.slice(end + 2);
                  const data = /^data: (.*)$/m.exec(block)?.[1];
                  if (/^event: next$/m.test(block) && data) {
                    const id = (JSON.parse(data) as { data?: { messageAdded?: { id: string } } }).data?.messageAdded?.id;
                    if (id) heard(id);
                  }
                }
              });
              response.on('error', () => {});
            },
          );
          request.on('error', () => resolve());
          request.end(JSON.stringify({ query: DOCUMENT }));
          streams.push(request);
        }),
      );
    }
    // Opened in batches, as a crowd arrives: not all at one instant.
    if (index % 100 === 99) await Promise.all(opening.slice(-100));
  }
  await Promise.all(opening);
  await sleep(2000);
  const after = rssMb(gateway.pid);

  const accepted = new Map<string, number>();
  const sendTimes: number[] = [];
  let sends = 0;
  const inFlight: Promise<void>[] = [];
  const send = (n: number) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const body = JSON.stringify({ to: ctx.sendContacts[n % ctx.sendContacts.length], message: `crowd ${n}` });
      const request = http.request(
        { host: '127.0.0.1', port, path: '/api/connect/messages', method: 'POST', agent, headers: { host: ctx.host, authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            const at = performance.now();
            sendTimes.push(at - started);
            if (response.statusCode === 202) {
              const id = (JSON.parse(text) as { data: { message: { id: string } } }).data.message.id;
              accepted.set(id, at);
            }
            resolve();
          });
        },
      );
      request.on('error', () => resolve());
      request.end(body);
    });
  const start = performance.now();
  const total = rate * seconds;
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    sends++;
    inFlight.push(send(n));
  }
  await Promise.all(inFlight);
  // The last events reach the last subscribers.
  const deadline = performance.now() + 30_000;
  const expected = accepted.size * subscribers;
  const delivered = () => [...accepted.keys()].reduce((sum, id) => sum + (arrivals.get(id)?.length ?? 0), 0);
  while (delivered() < expected && performance.now() < deadline) await sleep(100);

  const fanOut = [...accepted].flatMap(([id, at]) => {
    const list = arrivals.get(id);
    return list?.length ? [Math.max(...list) - at] : [];
  });
  const result: CrowdResult = {
    subscribers,
    sends,
    accepted: accepted.size,
    kbPerSubscriber: before !== null && after !== null ? Math.round(((after - before) * 1024) / subscribers) : null,
    delivered: delivered(),
    expected,
    fanOutP99Ms: p99(fanOut),
    sendP99Ms: p99(sendTimes),
  };
  await Promise.all(sockets.map((client) => client.dispose()));
  for (const request of streams) request.destroy();
  agent.destroy();
  return result;
}
