import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { getOperationAST, type ExecutionArgs } from 'graphql';
import { createHandler, type RequestParams, type Request as SseRequest, type Response as SseResponse } from 'graphql-sse';
import { isAsyncIterable, type FetchAPI, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import type { CredentialWatch } from '../context/types.js';
import type { RequestState, ServerContext } from '../http/state.js';
import type { OpenStreams } from '../lib/streams.js';
import { isRecord } from '../lib/validation.js';
import { describeError } from '../errors/log.js';
import type { DocumentStore } from '../graphql/trusted-documents.js';
import type { GraphQLContext, StreamSink } from '../graphql/builder.js';
import { operationPreparer, type PreparedOperation } from '../graphql/operation.js';
import { connectionWriter, eventStreamOutput, streamedResult, type ConnectionWriter, type StreamLimits } from './writer.js';

/** Where graphql-sse clients connect. */
export const SSE_STREAM_PATH = '/graphql/stream';

const STREAM_TOKEN_HEADER = 'x-graphql-event-stream-token';

/** How long a reservation waits for its stream to be connected before it is released. */
export const CONNECT_WITHIN_MS = 30_000;

/** How long a stream whose credential lapsed waits for its operations' last errors before it ends regardless. */
const LAST_ERRORS_WITHIN_MS = 5_000;

export interface SingleConnectionOptions {
  documents: DocumentStore;
  /** The most reservations one credential holds open at once (SSE_RESERVATIONS_PER_CREDENTIAL). */
  perCredential: number;
  /** Ends a connected stream when its credential is revoked or expires. */
  credentialWatch: CredentialWatch;
  /** Streams that end with the server. */
  streams: OpenStreams;
  /** The most reservations the process holds at once (SSE_RESERVATIONS_MAX): past it a new one is refused, never an old one dropped. */
  maxReservations: number;
  /** What each stream's writer keeps to (src/realtime/writer.ts). */
  limits: StreamLimits;
  connectWithinMs?: number;
}

/** One reservation: whose it is, and its stream once connected. */
interface Reservation {
  /** The credential that made it. */
  holder: string;
  /** Releases it if its stream is not connected in time. */
  unclaimed: NodeJS.Timeout | undefined;
  /** Operations started on it and not yet completed. */
  operations: number;
  /** Its credential lapsed: the stream ends once its operations have sent their last results. */
  lapsed: boolean;
  /** Ends the connected stream (after what is already queued on it). */
  end?: () => void;
}

/** What graphql-sse's handler is handed for one request: the request's state and any document id it names beside its parameters. */
interface Sent {
  state: RequestState;
  documentId?: unknown;
  /** The token a PUT reserved, until graphql-sse answers it. */
  reserved?: string;
}

const refusal = (status: number, statusText: string, message: string): SseResponse =>
  [JSON.stringify({ status: 'error', message }), { status, statusText, headers: { 'content-type': 'application/json; charset=utf-8' } }] as const;

/**
 * GraphQL over Server-Sent Events in graphql-sse's single connection mode (docs/graphql.md): a
 * client reserves a stream (`PUT /graphql/stream`, answered with a token), holds it open (`GET`
 * with the token), and runs its operations on it (`POST` with the token in
 * `X-GraphQL-Event-Stream-Token`, `DELETE` to stop one), so one browser tab holds one connection
 * for all its subscriptions. The distinct connections mode stays on `/graphql` itself.
 *
 * graphql-sse's own handler on yoga's hooks, preparing each operation as every transport does
 * (src/graphql/operation.ts): the trusted documents of the caller's workspace (by text, by
 * `documentId` or by `extensions.persistedQuery`), then yoga's envelop. Every request was
 * authenticated by the route table before this plugin sees it, and each operation runs with its
 * own request's credential.
 *
 * Reservations are this app's own (docs/operating-safely.md#event-stream-reservations): each
 * belongs to the credential that made it (another credential naming its token is refused), one
 * credential holds at most `perCredential` at once (429 past it), and the process at most
 * `maxReservations` (503 past it: no reservation is ever dropped to make room). A reservation is
 * released when its stream has not connected within `connectWithinMs`, and when its stream ends;
 * a connected stream ends when its credential lapses, once its operations sent their last errors.
 */
export function singleConnectionSse(options: SingleConnectionOptions): Plugin<Record<string, unknown>, ServerContext> {
  const { documents, perCredential, credentialWatch, streams, maxReservations, limits, connectWithinMs = CONNECT_WITHIN_MS } = options;
  const reservations = new Map<string, Reservation>();
  const held = new Map<string, number>();
  /** Tokens being let go of through the handler's own stream end (see `forget`). */
  const forgetting = new Set<string>();
  let handler: (request: SseRequest<Sent>) => Promise<SseResponse>;
  let fetchAPI: FetchAPI;

  const release = (token: string) => {
    const reservation = reservations.get(token);
    if (!reservation) return;
    reservations.delete(token);
    clearTimeout(reservation.unclaimed);
    const count = (held.get(reservation.holder) ?? 1) - 1;
    if (count > 0) held.set(reservation.holder, count);
    else held.delete(reservation.holder);
  };

  /**
   * Releases a reservation whose stream never connected, here and in graphql-sse's handler, which
   * lets go of a stream only when it ends: its stream is opened and ended at once.
   */
  const forget = async (token: string) => {
    release(token);
    forgetting.add(token);
    try {
      const [body] = await handler({
        method: 'GET',
        url: `http://localhost${SSE_STREAM_PATH}`,
        headers: new Headers({ accept: 'text/event-stream', [STREAM_TOKEN_HEADER]: token }),
        body: null,
        raw: undefined as never,
        context: undefined as never,
      });
      if (body && typeof body !== 'string') await body.return(undefined);
    } finally {
      forgetting.delete(token);
    }
  };

  const tokenOf = (request: Pick<SseRequest<Sent>, 'headers' | 'url'>) =>
    request.headers.get(STREAM_TOKEN_HEADER) ?? new URL(request.url).searchParams.get('token');

  const authenticate = (request: SseRequest<Sent>): string | null | SseResponse => {
    const holder = request.raw.state.caller!.credential.id;
    if (request.method === 'PUT') {
      if ((held.get(holder) ?? 0) >= perCredential) {
        return refusal(429, 'Too Many Requests', `This credential holds ${perCredential} reserved event streams already: connect or end one first.`);
      }
      if (reservations.size >= maxReservations) return refusal(503, 'Service Unavailable', 'No event stream can be reserved now: try again later.');
      const token = randomUUID();
      const unclaimed = setTimeout(() => void forget(token), connectWithinMs);
      unclaimed.unref();
      reservations.set(token, { holder, unclaimed, operations: 0, lapsed: false });
      held.set(holder, (held.get(holder) ?? 0) + 1);
      request.raw.reserved = token;
      return token;
    }
    const token = tokenOf(request);
    if (!token) return null;
    const reservation = reservations.get(token);
    if (!reservation) return refusal(404, 'Not Found', 'No such event stream: reserve one first.');
    if (reservation.holder !== holder) return refusal(403, 'Forbidden', 'This stream is not yours.');
    return token;
  };

  /** An operation on a reserved stream finished (its `complete` queued): a lapsed stream ends after its last. */
  const completed = (request: SseRequest<Sent>) => {
    const token = tokenOf(request);
    const reservation = token ? reservations.get(token) : undefined;
    if (!reservation) return;
    reservation.operations = Math.max(0, reservation.operations - 1);
    if (reservation.lapsed && reservation.operations === 0) reservation.end?.();
  };

  /** The answer holding a reserved stream open: released when it ends, ended when its credential lapses. */
  const connected = (token: string, state: RequestState, messages: AsyncGenerator<string>, signal: AbortSignal, init: ResponseInit): Response => {
    const reservation = reservations.get(token)!;
    clearTimeout(reservation.unclaimed);
    reservation.unclaimed = undefined;
    let finished = false;
    const end = () => void messages.return(undefined);
    const hold = credentialWatch.watch(state.caller!, () => {
      reservation.lapsed = true;
      if (reservation.operations === 0) end();
      else setTimeout(end, LAST_ERRORS_WITHIN_MS).unref();
    });
    const unregister = streams.add(end);
    reservation.end = end;
    const finish = () => {
      if (finished) return;
      finished = true;
      hold.release();
      unregister();
      release(token);
    };
    return eventStream(limits, state, fetchAPI, messages, signal, init, finish);
  };

  return {
    onYogaInit({ yoga }) {
      fetchAPI = yoga.fetchAPI;
      const prepare = operationPreparer(yoga as unknown as YogaServerInstance<Record<string, unknown>, GraphQLContext>, documents);
      handler = createHandler<Sent>({
        authenticate(request) {
          const token = tokenOf(request);
          if (token && forgetting.has(token)) return token;
          return authenticate(request);
        },
        async onSubscribe(request, params) {
          const sent = { ...params, ...(request.raw.documentId !== undefined ? { documentId: request.raw.documentId } : {}) };
          const prepared = await prepare(request.raw.state, sent as RequestParams);
          const token = tokenOf(request);
          const reservation = token ? reservations.get(token) : undefined;
          if (reservation) reservation.operations += 1;
          // A refusal is the operation's result: graphql-sse tells a result from arguments by its `data`.
          if (Array.isArray(prepared)) return { data: null, errors: prepared };
          const { args, execute, subscribe } = prepared as PreparedOperation;
          const operation = getOperationAST(args.document, args.operationName);
          return (operation?.operation === 'subscription' ? subscribe : execute)(args as ExecutionArgs) as never;
        },
        onComplete(_context, request) {
          completed(request);
        },
      });
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      const state = serverContext.state;
      if (url.pathname !== SSE_STREAM_PATH || !state) return;
      const sent: Sent = { state };
      let requestUrl = request.url;
      let body: SseRequest['body'] = () => request.text();
      if (request.method === 'GET' && url.searchParams.has('documentId')) {
        // An operation by id: graphql-sse wants a query string, empty here (src/graphql/trusted-documents.ts reads the id).
        sent.documentId = url.searchParams.get('documentId');
        if (!url.searchParams.has('query')) {
          const withQuery = new URL(url);
          withQuery.searchParams.set('query', '');
          requestUrl = withQuery.toString();
        }
      } else if (request.method === 'POST' && request.headers.get('content-type')?.includes('application/json')) {
        const text = await request.text();
        body = () => Promise.resolve(text);
        try {
          const data: unknown = JSON.parse(text);
          if (isRecord(data)) {
            sent.documentId = data['documentId'];
            // Named by id (documentId or extensions.persistedQuery) without a text: an empty one for graphql-sse.
            if (data['query'] == null && (data['documentId'] != null || isRecord(data['extensions']))) {
              body = () => Promise.resolve(JSON.stringify({ ...data, query: '' }));
            }
          }
        } catch {
          // graphql-sse answers the unparsable body itself.
        }
      }
      const [answer, init] = await handler({ method: request.method, url: requestUrl, headers: request.headers, body, raw: sent, context: undefined });
      // A reservation graphql-sse then refused (an Accept it does not serve) holds nothing.
      if (sent.reserved && init.status !== 201) release(sent.reserved);
      if (!answer || typeof answer === 'string') return endResponse(new fetchAPI.Response(answer, init));
      const token = tokenOf({ headers: request.headers, url: requestUrl });
      if (token && reservations.has(token)) return endResponse(connected(token, state, answer, request.signal, init));
      return endResponse(eventStream(limits, state, fetchAPI, answer, request.signal, init));
    },
  };
}

/** An event stream's messages written through its writer until they end; a failure is logged and drops the answer. */
function writeStream<T>(writer: ConnectionWriter, state: RequestState, source: AsyncIterator<T>, frame: (value: T) => string, last?: string): Promise<void> {
  return writer.writeAll(source, frame, last).catch((error: unknown) => {
    state.log.error({ err: describeError(error) }, 'event stream failed');
    writer.abort();
  });
}

/**
 * graphql-sse's stream as yoga's answer, its messages written as they come by the connection's
 * writer (src/realtime/writer.ts), which paces and bounds them as it does every stream's: `finish`
 * is called once the stream has ended, however (its last message sent, or its client gone).
 */
function eventStream(
  limits: StreamLimits,
  state: RequestState,
  fetchAPI: FetchAPI,
  messages: AsyncGenerator<string, void, undefined>,
  signal: AbortSignal,
  init: ResponseInit,
  finish = () => {},
): Response {
  const res = state.connection?.res;
  const output = eventStreamOutput(res);
  const writer = connectionWriter(limits, output, res?.socket, 'event stream');
  let finished = false;
  const gone = () => {
    if (finished) return;
    finished = true;
    finish();
    void messages.return(undefined);
  };
  output.body.once('close', gone);
  if (signal.aborted) gone();
  else signal.addEventListener('abort', gone, { once: true });
  void writeStream(writer, state, messages, (message) => message).finally(gone);
  return new fetchAPI.Response(output.body as unknown as BodyInit, init);
}

/** How often a quiet event stream on `/graphql` sends a comment, so that nothing between closes it as idle (as yoga's do). */
const PING_MS = 12_000;

const EVENT_STREAM_HEADERS = { 'content-type': 'text/event-stream', connection: 'keep-alive', 'cache-control': 'no-cache', 'content-encoding': 'none' };

/**
 * Subscriptions over an event stream on `path` (graphql-sse's distinct connections mode, one
 * subscription an answer), each answer written by its connection's one writer
 * (src/realtime/writer.ts): the subscription's ordinary results as its sink (`sinkOf`, framed
 * `event: next` blocks of the JSON each cohort made once), and — through yoga's own hook for
 * answering a result, `onResultProcess` — what yoga's pipeline hands on after them: results with
 * errors (masked there), then `event: complete`. The answer starts with a comment (`:`) and sends
 * one every PING_MS while quiet, as yoga's own event streams do; it is served only when node:http
 * serves the request and the client accepts an event stream first, the rest left to yoga.
 *
 * The answers' writers are the plugin's, by request: two apps share nothing.
 */
export function eventStreamAnswers(options: { path: string; limits: StreamLimits }) {
  const { path, limits } = options;
  const writers = new WeakMap<RequestState, { writer: ConnectionWriter; body: Readable }>();

  const sinkOf = (context: GraphQLContext): StreamSink | undefined => {
    const { state } = context;
    const res = state?.connection?.res;
    if (!state || !res || state.path !== path) return undefined;
    // The first media type the client accepts decides yoga's answer: an event stream only when it comes first.
    if (!/^\s*text\/event-stream\b/i.test(state.connection!.req.headers.accept ?? '')) return undefined;
    let answer = writers.get(state);
    if (!answer) {
      const output = eventStreamOutput(res);
      answer = { writer: connectionWriter(limits, output, res.socket, 'event stream'), body: output.body };
      writers.set(state, answer);
      // Some browsers show nothing of an answer until its first bytes.
      answer.writer.write(':\n\n');
    }
    const { writer } = answer;
    return { write: (json) => writer.write(`event: next\ndata: ${json}\n\n`) };
  };

  type Answer = { writer: ConnectionWriter; body: Readable };
  const answer = ({ writer, body }: Answer, state: RequestState, result: AsyncIterable<ExecutionResult>, fetchAPI: FetchAPI) => {
    const iterator = result[Symbol.asyncIterator]();
    const ping = setInterval(() => writer.write(':\n\n'), PING_MS);
    ping.unref();
    body.once('close', () => {
      clearInterval(ping);
      void iterator.return?.();
    });
    const next = (result: ExecutionResult) => `event: next\ndata: ${JSON.stringify(streamedResult(result))}\n\n`;
    void writeStream(writer, state, iterator, next, 'event: complete\ndata:\n\n').finally(() => clearInterval(ping));
    return new fetchAPI.Response(body as unknown as BodyInit, { status: 200, headers: EVENT_STREAM_HEADERS });
  };

  const plugin: Plugin<Record<string, unknown>, ServerContext> = {
    onResultProcess({ serverContext, result, setResultProcessor }) {
      const state = serverContext.state;
      const written = state && writers.get(state);
      if (!written || !isAsyncIterable(result)) return;
      setResultProcessor((processed, fetchAPI) => answer(written, state, processed as AsyncIterable<ExecutionResult>, fetchAPI), 'text/event-stream');
    },
  };
  return { sinkOf, plugin };
}
