import http from 'node:http';
import WebSocket from 'ws';

/**
 * One client process of the crowd row (bench/crowd.ts): opens its share of the subscribers over
 * WebSocket (the graphql-transport-ws protocol), SSE (distinct connections) or alternately over
 * both, each on the gateway process it is given, and counts what arrives. Told over IPC: `{ type:
 * 'open', … }` to open them (answered `opened`), `report` (answered with each message id's count
 * and last arrival over each transport, on the clock every process shares: `performance.timeOrigin
 * + performance.now()`), `close`.
 */
export interface OpenCrowd {
  type: 'open';
  document: string;
  host: string;
  apiKey: string;
  /** The gateway port of each subscriber, in order. */
  ports: number[];
  /** The index of this process's first subscriber in the whole crowd (with `both`, even: WebSocket, odd: SSE). */
  first: number;
  transport: CrowdTransport;
}

/** What the crowd's subscribers use: WebSocket, SSE, or each in turn. */
export type CrowdTransport = 'both' | 'websocket' | 'sse';

export interface CrowdArrivals {
  type: 'report';
  /** id → [subscribers that received it, when the last over WebSocket did, when the last over SSE did (ms, shared clock; 0: none)]. */
  arrivals: Record<string, Arrival>;
  /** Subscribers whose stream was refused or ended. */
  failed: number;
}

export type Arrival = [count: number, lastWebSocket: number, lastSse: number];

const now = () => performance.timeOrigin + performance.now();
const arrivals = new Map<string, Arrival>();
let failed = 0;
/** One subscriber received `id`: its last arrival over `slot` (1: WebSocket, 2: SSE). */
const heard = (id: string, slot: 1 | 2) => {
  const at = now();
  let entry = arrivals.get(id);
  if (!entry) arrivals.set(id, (entry = [0, 0, 0]));
  entry[0]++;
  entry[slot] = at;
};

const sockets: WebSocket[] = [];

/** The message id of a `messageAdded` result, read off the text (the document selects `id` first). */
const MARK = '"messageAdded":{"id":"';
const idIn = (text: string): string | null => {
  const at = text.indexOf(MARK);
  if (at < 0) return null;
  const from = at + MARK.length;
  return text.slice(from, text.indexOf('"', from));
};
const streams: http.ClientRequest[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

async function open(message: OpenCrowd) {
  const { document, host, apiKey, ports, first, transport } = message;
  const opening: Promise<void>[] = [];
  for (let offset = 0; offset < ports.length; offset++) {
    const port = ports[offset]!;
    if (transport === 'websocket' || (transport === 'both' && (first + offset) % 2 === 0)) {
      // The graphql-transport-ws protocol by hand, as light a client as it can be: what is measured is the gateway.
      const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { headers: { host } });
      sockets.push(socket);
      opening.push(
        new Promise<void>((resolve) => {
          socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${apiKey}` } })));
          socket.on('message', (data: Buffer) => {
            const text = data.toString();
            const id = idIn(text);
            if (id) return heard(id, 1);
            if (text.includes('"connection_ack"')) {
              socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: document } }));
              resolve();
            } else if (text.includes('"error"')) failed++;
          });
          socket.on('close', () => resolve());
          socket.on('error', () => {
            failed++;
            resolve();
          });
        }),
      );
    } else {
      opening.push(
        new Promise<void>((resolve) => {
          const request = http.request(
            { host: '127.0.0.1', port, path: '/graphql', method: 'POST', agent, headers: { host, authorization: `Bearer ${apiKey}`, accept: 'text/event-stream', 'content-type': 'application/json' } },
            (response) => {
              resolve();
              if (response.statusCode !== 200) failed++;
              let buffer = '';
              response.setEncoding('utf8');
              response.on('data', (chunk: string) => {
                buffer += chunk;
                let end: number;
                while ((end = buffer.indexOf('\n\n')) >= 0) {
                  const block = buffer.slice(0, end);
                  buffer = buffer.slice(end + 2);
                  const id = block.startsWith('event: next') ? idIn(block) : null;
                  if (id) heard(id, 2);
                }
              });
              response.on('error', () => {});
            },
          );
          request.on('error', () => {
            failed++;
            resolve();
          });
          request.end(JSON.stringify({ query: document }));
          streams.push(request);
        }),
      );
    }
    // Opened in batches, as a crowd arrives: not all at one instant.
    if (offset % 100 === 99) await Promise.all(opening.slice(-100));
  }
  await Promise.all(opening);
}

process.on('message', (message: OpenCrowd | { type: 'report' } | { type: 'close' }) => {
  if (message.type === 'open') {
    void open(message).then(() => process.send!({ type: 'opened' }));
  } else if (message.type === 'report') {
    const report: CrowdArrivals = { type: 'report', arrivals: Object.fromEntries(arrivals), failed };
    process.send!(report);
  } else if (message.type === 'close') {
    for (const socket of sockets) socket.terminate();
    for (const request of streams) request.destroy();
    agent.destroy();
    process.exit(0);
  }
});
