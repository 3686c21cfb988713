import type http from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { WriteCoalescer } from './coalesce.js';

/**
 * Where a connection's writer puts what it wrote: a WebSocket (a message each) or an event-stream
 * answer (one chunk a flush).
 */
export interface Output {
  /** Writes the texts gathered since the last flush, in order. */
  write(texts: string[]): void;
  /** What was written and has not left for the client yet (in the connection's buffers). */
  readonly buffered: number;
  /** Whether anything written can still reach the client. */
  readonly open: boolean;
  /** Drops the connection: its client does not read. */
  cut(): void;
  /** Ends the connection once what was written has left (a WebSocket with its close code). */
  end(close?: { code?: number | undefined; reason?: string | undefined }): void;
}

export interface WriterOptions {
  /** Where the connection's writes wait for its turn (src/realtime/coalesce.ts). */
  coalescer: WriteCoalescer;
  /** The socket under the connection, whose writes the coalescer holds; none: every write goes out at once. */
  socket: Socket | null | undefined;
  /** What may wait for the client, gathered and in the connection's buffers, before it is cut off (STREAM_MAX_BUFFERED_BYTES). */
  maxBufferedBytes: number;
  /** Told once, when the connection is cut off with this much waiting. */
  cutOff(buffered: number): void;
}

/**
 * The one writer of a subscriber's connection (docs/graphql.md, "One writer per connection"):
 * everything that reaches the connection — the subscriptions' results, framed here once per
 * cohort's JSON, and the transport's own messages (graphql-ws's, graphql-sse's, the event
 * stream's errors and `complete`) — goes through it, in the order written. It paces: what is
 * written between two of the connection's turns (src/realtime/coalesce.ts) is gathered and leaves
 * together at the next. It bounds: a connection with more than `maxBufferedBytes` waiting for its
 * client (gathered, and written but not yet taken) is cut off rather than buffered for — its
 * socket or answer dropped, logged once — the one back-pressure limit of a connection.
 *
 * State is the writer's own: it goes with its connection.
 */
export class ConnectionWriter {
  private texts: string[] = [];
  private gathered = 0;
  /**
   * What waited in the connection's buffers when it was last written: it only shrinks until the
   * next write, so gathered + this bounds what waits, and the buffers are read only when that
   * bound passes the limit (a write is made for every result and subscriber; reading the
   * transport's buffers for each would cost more than the write).
   */
  private buffered = 0;
  /** Cut off, or found gone at a flush: nothing more is written. */
  private done = false;
  private readonly flush = () => {
    if (!this.texts.length) return;
    const texts = this.texts;
    this.texts = [];
    this.gathered = 0;
    if (this.done) return;
    if (!this.output.open) {
      this.done = true;
      return;
    }
    this.output.write(texts);
    this.buffered = this.output.buffered;
  };

  constructor(
    private readonly output: Output,
    private readonly options: WriterOptions,
  ) {}

  /** Whether what is written can still reach the client. */
  get open(): boolean {
    return !this.done && this.output.open;
  }

  /**
   * Writes `text` at the connection's next turn, after everything written before it: false when
   * nothing reaches the client any more (the connection was found gone, or is cut off now for
   * not reading).
   */
  write(text: string): boolean {
    if (this.done) return false;
    if (this.gathered + this.buffered > this.options.maxBufferedBytes) {
      this.buffered = this.output.buffered;
      const waiting = this.gathered + this.buffered;
      if (waiting > this.options.maxBufferedBytes) {
        this.done = true;
        this.texts = [];
        this.gathered = 0;
        if (!this.output.open) return false;
        this.options.cutOff(waiting);
        this.output.cut();
        return false;
      }
    }
    this.texts.push(text);
    this.gathered += text.length;
    const { coalescer, socket } = this.options;
    if (this.texts.length === 1 && !(socket && coalescer.defer(socket, this.flush))) this.flush();
    return true;
  }

  /** Drops the connection without a word more: its stream failed. */
  /**
   * Writes what `source` yields, each framed by `frame`, until it ends — then `last`, when given,
   * and the end of the connection — or until the connection is cut off. A failure of the source
   * is thrown to the caller.
   */
  async writeAll<T>(source: AsyncIterator<T>, frame: (value: T) => string, last?: string): Promise<void> {
    for (;;) {
      const step = await source.next();
      if (step.done) break;
      if (!this.write(frame(step.value))) return;
    }
    if (last !== undefined) this.write(last);
    this.end();
  }

  abort(): void {
    this.done = true;
    this.texts = [];
    this.gathered = 0;
    this.output.cut();
  }

  /** Ends the connection after everything written so far: at once, not at its next turn. */
  end(close?: { code?: number | undefined; reason?: string | undefined }): void {
    this.flush();
    if (this.output.open) this.output.end(close);
  }
}

/** A result as it is sent on a stream: without what only an HTTP answer uses (`extensions.http`). */
export function streamedResult(result: ExecutionResult): ExecutionResult {
  const httpOnly = result.errors?.some((error) => error.extensions?.['http'] !== undefined) || result.extensions?.['http'] !== undefined;
  if (!httpOnly) return result;
  const { http: _http, ...extensions } = result.extensions ?? {};
  return {
    ...result,
    ...(result.errors ? { errors: result.errors.map(withoutHttp) as never } : {}),
    ...(result.extensions ? { extensions: Object.keys(extensions).length ? extensions : undefined } : {}),
  };
}

function withoutHttp(error: ExecutionResult['errors'] extends readonly (infer E)[] | undefined ? E : never): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.extensions ?? {};
  return { ...error.toJSON(), extensions };
}

/** A WebSocket as a writer's output: each text one message, pings beside them. */
export function webSocketOutput(socket: WebSocket): Output {
  return {
    write(texts) {
      for (const text of texts) socket.send(text);
    },
    get buffered() {
      return socket.bufferedAmount;
    },
    get open() {
      return socket.readyState === socket.OPEN;
    },
    cut() {
      socket.terminate();
    },
    end(close) {
      socket.close(close?.code, close?.reason);
    },
  };
}

/**
 * An event-stream answer as a writer's output: the body yoga hands node:http (a stream it pipes to
 * the answer, so that a chunk goes out as it is written), one chunk a flush. `res` is the
 * answer's, when it is served over node:http: what waits in it counts, and cutting off drops it.
 */
export function eventStreamOutput(res: http.ServerResponse | undefined): Output & { body: Readable } {
  const body = new Readable({ read() {} });
  let ended = false;
  return {
    body,
    write(texts) {
      body.push(texts.length === 1 ? texts[0] : texts.join(''));
    },
    get buffered() {
      return body.readableLength + (res?.writableLength ?? 0);
    },
    get open() {
      return !ended && !body.destroyed && !(res && (res.destroyed || res.writableEnded));
    },
    cut() {
      if (res) res.destroy();
      body.destroy();
    },
    end() {
      ended = true;
      body.push(null);
    },
  };
}

/** What every connection's writer of an app keeps to (docs/graphql.md, "One writer per connection"). */
export interface StreamLimits {
  coalescer: WriteCoalescer;
  /** STREAM_MAX_BUFFERED_BYTES. */
  maxBufferedBytes: number;
  logger: Logger;
}

/** A writer for `output` on `socket`, its cutting off logged as `<what> cut off: the client does not read`. */
export function connectionWriter(limits: StreamLimits, output: Output, socket: Socket | null | undefined, what: string): ConnectionWriter {
  const { coalescer, maxBufferedBytes, logger } = limits;
  return new ConnectionWriter(output, {
    coalescer,
    socket,
    maxBufferedBytes,
    cutOff: (buffered) => logger.warn({ buffered }, `${what} cut off: the client does not read`),
  });
}
