import type { Socket } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import type { ServerContext } from './state.js';

/**
 * The writes of long-lived streams (SSE responses, WebSockets) gathered per connection: a held
 * socket is corked, and every `intervalMs` each held socket with something written since is
 * uncorked (its writes leave in one system call) and corked again. An event fanned out to
 * thousands of subscribers would otherwise cost a system call per subscriber and event — on a
 * loopback or virtual machine most of the server's time — where this costs one per subscriber and
 * interval, however many events it carries. The price is latency: a write waits at most
 * `intervalMs` (STREAM_FLUSH_MS). 0 leaves sockets alone: every write goes out at once.
 *
 * A socket write costs a system call whatever it carries (12 to 30 µs on the machines measured,
 * docs/benchmarks.md): a crowd written every `intervalMs` would spend the process on them alone.
 * So the next flush comes `intervalMs` after the last one ended, or later when the last one's
 * writes need it to stay within `maxWritesPerSecond` (MAX_SOCKET_WRITES_PER_SECOND): flushes of
 * 200 busy connections begin every 50 ms or more, of 2,000 every 100 ms or more. A crowd's events
 * wait a little longer instead of the whole process falling behind.
 *
 * Back-pressure is unchanged: corked writes count in the socket's buffered bytes, so a client that
 * does not read is still cut off at the transports' limits. A socket that ends flushes what it
 * holds (Node uncorks on end), and one that closes is released.
 */
export interface WriteCoalescer {
  /** Holds `socket`'s writes until the next flush, until the returned function is called or the socket closes. */
  hold(socket: Socket): () => void;
  /**
   * Calls `write` at the next flush, just before `socket`'s writes leave, or when the socket is
   * released (once, however often deferred until then): a stream may gather what it sends in an
   * interval and write it as one chunk. False when `socket` is not held: nothing is deferred, the
   * caller writes at once.
   */
  defer(socket: Socket, write: () => void): boolean;
  /** How many sockets are held. */
  readonly size: number;
  /** Flushes and releases every socket. */
  dispose(): void;
}

/** Sockets flushed between two turns of the event loop. */
const FLUSH_SLICE = 200;

/** The socket writes a second the flushes stay within, by spacing them (see above). */
export const MAX_SOCKET_WRITES_PER_SECOND = 20_000;

export function writeCoalescer(intervalMs: number, maxWritesPerSecond = MAX_SOCKET_WRITES_PER_SECOND): WriteCoalescer {
  const held = new Map<Socket, () => void>();
  const deferred = new Map<Socket, Set<() => void>>();
  let timer: NodeJS.Timeout | undefined;
  let flushing = false;

  /** Runs the writes deferred to `socket`'s next flush, once. */
  const writeDeferred = (socket: Socket) => {
    const writes = deferred.get(socket);
    if (!writes) return;
    deferred.delete(socket);
    for (const write of writes) write();
  };

  // A flush of thousands of sockets gives requests a turn every FLUSH_SLICE sockets: what the API
  // answers meanwhile never waits behind a whole crowd's writes.
  const flush = async () => {
    timer = undefined;
    flushing = true;
    const began = performance.now();
    let written = 0;
    try {
      for (const socket of held.keys()) {
        writeDeferred(socket);
        if (socket.writableLength === 0 || socket.writableCorked === 0) continue;
        socket.uncork();
        socket.cork();
        if (++written % FLUSH_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      flushing = false;
      // The next flush `intervalMs` after this one ended, or later so that a crowd's flushes begin
      // no more often than its writes allow.
      schedule(Math.max(intervalMs, (written * 1000) / maxWritesPerSecond - (performance.now() - began)));
    }
  };
  /** The next flush in `delayMs`, while something is held. */
  const schedule = (delayMs: number) => {
    if (timer || flushing || held.size === 0) return;
    timer = setTimeout(() => void flush(), Math.max(0, Math.ceil(delayMs)));
    timer.unref();
  };

  return {
    hold(socket) {
      if (intervalMs <= 0 || socket.destroyed) return () => {};
      const holding = held.get(socket);
      if (holding) return holding;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        socket.off('close', release);
        held.delete(socket);
        writeDeferred(socket);
        if (socket.writableCorked > 0) socket.uncork();
        if (held.size === 0 && timer) {
          clearTimeout(timer);
          timer = undefined;
        }
      };
      socket.cork();
      held.set(socket, release);
      socket.once('close', release);
      schedule(intervalMs);
      return release;
    },
    defer(socket, write) {
      if (!held.has(socket)) return false;
      const writes = deferred.get(socket);
      if (writes) writes.add(write);
      else deferred.set(socket, new Set([write]));
      return true;
    },
    get size() {
      return held.size;
    },
    dispose() {
      for (const release of [...held.values()]) release();
    },
  };
}

/**
 * Holds the connection of every event-stream answer (GraphQL over SSE, distinct connections and a
 * reserved stream alike) in `coalescer` for as long as the answer lasts: a yoga `onResponse` hook,
 * run before node:http writes the answer. A connection kept alive after its stream ended is released.
 */
export function coalescedEventStreams(coalescer: WriteCoalescer): Plugin<Record<string, unknown>, ServerContext> {
  return {
    onResponse({ response, serverContext }) {
      const res = serverContext?.res;
      if (!res?.socket || !response.headers.get('content-type')?.startsWith('text/event-stream')) return;
      res.once('close', coalescer.hold(res.socket));
    },
  };
}
