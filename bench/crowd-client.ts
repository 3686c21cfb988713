import http from 'node:http';
import WebSocket from 'ws';

/**
 * One client process of the crowd row (bench/crowd.ts): opens its share of the subscribers over
 * WebSocket (the graphql-transport-ws protocol), SSE (distinct connections) or alternately over
 * both, each on the gateway process it is given, and counts what arrives. Told over IPC: `{ type:
 * 'open', … }` to open them (answered `opened`), `report` (answered with each message id's count
 * and last arrival over each transport, on the clock every process shares: `performance.timeOrigin
 * + performance.now()`), `close`. The mixed crowd's subscribers (`open-mixed`, each with its own
 * session, document and variables) are checked as they receive: the channels and conversation they
 * follow, duplicates, `conversation.assignedToMe` against their own user, and the `typing: true`
 * arrivals of activity subscribers (`mark` forgets those heard so far).
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
  /** Streams the gateway ended before the row closed them. */
  ended: number;
  /** The mixed crowd's checks (zero for the crowd's own subscribers). */
  mixed: MixedChecks;
}

export interface MixedChecks {
  /** Events of a channel or conversation the subscriber does not follow. */
  foreign: number;
  /** A message received twice by one subscriber. */
  duplicates: number;
  /** Results with errors, or without the field subscribed to. */
  errors: number;
  /** Messages whose `conversation.assignedToMe` was checked, and those where it was not the subscriber's own user's value. */
  assignedToMe: number;
  wrongAssignedToMe: number;
  /** Activity subscribers' index → `conversationId userId` → each `typing: true` arrival since the last `mark` (shared clock). */
  typing: Record<number, Record<string, number[]>>;
}

/** The mixed crowd (bench/mixed-crowd.ts): each subscriber its own credential, document and variables. */
export interface OpenMixed {
  type: 'open-mixed';
  host: string;
  subscribers: MixedSubscriber[];
  /** Conversation id → the id of the user it is assigned to (unassigned ones absent). */
  assignees: Record<string, string>;
}

export interface MixedSubscriber {
  /** Its place in the whole crowd. */
  index: number;
  port: number;
  /** Its session token. */
  token: string;
  websocket: boolean;
  query: string;
  variables: Record<string, string>;
  /** `messages`: a messageAdded subscriber; `activity`: a conversationActivity one. */
  kind: 'messages' | 'activity';
  /** Its session's user. */
  user: string;
  /** The channels whose messages it should receive, and the one conversation when narrowed to one. */
  channels: string[];
  conversation?: string;
}

export type Arrival = [count: number, lastWebSocket: number, lastSse: number];

const now = () => performance.timeOrigin + performance.now();
const arrivals = new Map<string, Arrival>();
let failed = 0;
/** Streams the gateway ended (a socket closed, an event stream's answer ended) before `close`. */
let ended = 0;
let closing = false;
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

/**
 * One subscriber: `body` (`{ query, variables }`) subscribed with `token` on the gateway at `port`,
 * over WebSocket (the graphql-transport-ws protocol by hand, as light a client as it can be: what
 * is measured is the gateway) or SSE (a distinct connection); `onResult` is given each result's
 * text (a WebSocket message, an SSE `event: next` block). Resolves once it is subscribed.
 */
function subscribe(port: number, host: string, token: string, body: string, overWebSocket: boolean, onResult: (text: string) => void): Promise<void> {
  if (overWebSocket) {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { headers: { host } });
    sockets.push(socket);
    return new Promise<void>((resolve) => {
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } })));
      socket.on('message', (data: Buffer) => {
        const text = data.toString();
        if (text.includes('"type":"next"')) return onResult(text);
        if (text.includes('"connection_ack"')) {
          socket.send(`{"id":"1","type":"subscribe","payload":${body}}`);
          resolve();
        } else if (text.includes('"error"')) failed++;
      });
      socket.on('close', () => {
        if (!closing) ended++;
        resolve();
      });
      socket.on('error', () => {
        failed++;
        resolve();
      });
    });
  }
  return new Promise<void>((resolve) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql',
        method: 'POST',
        agent,
        headers: { host, authorization: `Bearer ${token}`, accept: 'text/event-stream', 'content-type': 'application/json' },
      },
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
            if (block.startsWith('event: next')) onResult(block);
          }
        });
        response.on('end', () => {
          if (!closing) ended++;
        });
        response.on('error', () => {});
      },
    );
    request.on('error', () => {
      failed++;
      resolve();
    });
    request.end(body);
    streams.push(request);
  });
}

async function open(message: OpenCrowd) {
  const { document, host, apiKey, ports, first, transport } = message;
  const body = JSON.stringify({ query: document });
  const opening: Promise<void>[] = [];
  for (let offset = 0; offset < ports.length; offset++) {
    const overWebSocket = transport === 'websocket' || (transport === 'both' && (first + offset) % 2 === 0);
    const slot = overWebSocket ? 1 : 2;
    opening.push(
      subscribe(ports[offset]!, host, apiKey, body, overWebSocket, (text) => {
        const id = idIn(text);
        if (id) heard(id, slot);
      }),
    );
    // Opened in batches, as a crowd arrives: not all at one instant.
    if (offset % 100 === 99) await Promise.all(opening.slice(-100));
  }
  await Promise.all(opening);
}

/** A result's payload: a WebSocket `next` message's, or the `data:` line of an SSE block. */
const payloadOf = (text: string) =>
  (text.startsWith('{') ? (JSON.parse(text) as { payload: ExecutionResult }).payload : (JSON.parse(text.slice(text.indexOf('data:') + 5)) as ExecutionResult));
interface ExecutionResult {
  data?: Record<string, Record<string, unknown> | undefined> | null;
  errors?: unknown[];
}

/** What the mixed crowd's subscribers got wrong, summed over this process's subscribers. */
const mixed = { foreign: 0, duplicates: 0, errors: 0, assignedToMe: 0, wrongAssignedToMe: 0 };
/** Activity subscribers: their index → `conversationId user` → when each `typing: true` arrived (since the last `mark`). */
let typing = new Map<number, Map<string, number[]>>();

async function openMixed(message: OpenMixed) {
  const { host, subscribers, assignees } = message;
  const opening: Promise<void>[] = [];
  for (const [offset, subscriber] of subscribers.entries()) {
    const body = JSON.stringify({ query: subscriber.query, variables: subscriber.variables });
    const slot = subscriber.websocket ? 1 : 2;
    let onResult: (text: string) => void;
    if (subscriber.kind === 'messages') {
      const seen = new Set<string>();
      const channels = new Set(subscriber.channels);
      onResult = (text) => {
        const result = payloadOf(text);
        type Added = { id: string; channelId: string; conversationId: string; conversation: { assignedToMe: boolean } };
        const message = result.data?.messageAdded as Added | undefined;
        if (!message || result.errors) return void mixed.errors++;
        heard(message.id, slot);
        if (seen.has(message.id)) mixed.duplicates++;
        seen.add(message.id);
        if (!channels.has(message.channelId) || (subscriber.conversation && subscriber.conversation !== message.conversationId)) mixed.foreign++;
        mixed.assignedToMe++;
        if (message.conversation.assignedToMe !== (assignees[message.conversationId] === subscriber.user)) mixed.wrongAssignedToMe++;
      };
    } else {
      onResult = (text) => {
        const result = payloadOf(text);
        const activity = result.data?.conversationActivity as { conversationId: string; user: { id: string }; typing: boolean } | undefined;
        if (!activity || result.errors) return void mixed.errors++;
        if (!activity.typing) return;
        let pairs = typing.get(subscriber.index);
        if (!pairs) typing.set(subscriber.index, (pairs = new Map()));
        const key = `${activity.conversationId} ${activity.user.id}`;
        const times = pairs.get(key);
        if (times) times.push(now());
        else pairs.set(key, [now()]);
      };
    }
    opening.push(subscribe(subscriber.port, host, subscriber.token, body, subscriber.websocket, onResult));
    if (offset % 100 === 99) await Promise.all(opening.slice(-100));
  }
  await Promise.all(opening);
}

process.on('message', (message: OpenCrowd | OpenMixed | { type: 'report' } | { type: 'mark' } | { type: 'close' }) => {
  if (message.type === 'open') {
    void open(message).then(() => process.send!({ type: 'opened' }));
  } else if (message.type === 'open-mixed') {
    void openMixed(message).then(() => process.send!({ type: 'opened' }));
  } else if (message.type === 'mark') {
    typing = new Map();
    process.send!({ type: 'marked' });
  } else if (message.type === 'report') {
    const report: CrowdArrivals = {
      type: 'report',
      arrivals: Object.fromEntries(arrivals),
      failed,
      ended,
      mixed: { ...mixed, typing: Object.fromEntries([...typing].map(([index, pairs]) => [index, Object.fromEntries(pairs)])) },
    };
    process.send!(report);
  } else if (message.type === 'close') {
    closing = true;
    for (const socket of sockets) socket.terminate();
    for (const request of streams) request.destroy();
    agent.destroy();
    process.exit(0);
  }
});
