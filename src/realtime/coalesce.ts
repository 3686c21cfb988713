import type { Socket } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import type { ServerContext } from '../http/state.js';

/**
 * The writes of long-lived streams (SSE responses, WebSockets) gathered per connection: a held
 * socket is corked, and its writes leave together (uncorked: one system call; corked again) at
 * most once per `intervalMs` (STREAM_FLUSH_MS). An event fanned out to thousands of subscribers
 * would otherwise cost a system call per subscriber and event — on a loopback or virtual machine
 * most of the server's time — where this costs at most one per subscriber and interval, however
 * many events it carries. What a connection's writer gathers (`defer`, src/realtime/writer.ts)
 * for a connection whose last writes left longer than `intervalMs` ago is written at once, in the
 * next turn of the event loop; what is written to a held socket straight (a WebSocket's pings and
 * close frame) is found by the next look through the held sockets (every SWEEP_MS at most) and
 * leaves with it. A busy connection waits until `intervalMs` has passed since its last writes, then for
 * the next tick. 0 leaves sockets alone: every write goes out at once.
 *
 * A socket write costs a system call whatever it carries (12 to 30 µs on the machines measured,
 * docs/benchmarks.md): a crowd written without limit would spend the process on them alone. So
 * the coalescer writes, every tick (a quarter of the interval, at most TICK_MS), the sockets whose
 * turn it is — oldest waiting first — as many as `maxWritesPerSecond` (MAX_SOCKET_WRITES_PER_SECOND)
 * allows (refilled as time passes, up to one interval's worth): 2,000 busy connections are each
 * written about every 100 ms, the share of the writes that came due since the last tick at a time,
 * rather than all of them in one burst that the next event would wait behind. A crowd's events
 * wait a little longer instead of the whole process falling behind.
 *
 * Back-pressure is unchanged: corked writes count in the socket's buffered bytes, so a client that
 * does not read is still cut off at its writer's limit. A socket that ends flushes what it
 * holds (Node uncorks on end), and one that closes is released.
 */
export interface WriteCoalescer {
  /** Holds `socket`'s writes until the next flush, until the returned function is called or the socket closes. */
  hold(socket: Socket): () => void;
  /**
   * Calls `write` when `socket`'s writes next leave, just before, or when the socket is released
   * (once, however often deferred until then): a stream may gather what it sends in an interval
   * and write it as one chunk. False when `socket` is not held: nothing is deferred, the caller
   * writes at once.
   */
  defer(socket: Socket, write: () => void): boolean;
  /** How many sockets are held. */
  readonly size: number;
  /** Flushes and releases every socket. */
  dispose(): void;
}

/** Sockets flushed between two turns of the event loop. */
const FLUSH_SLICE = 200;

/** The longest tick (ms): how often, at least, the coalescer writes the sockets whose turn it is. */
const TICK_MS = 12;

/**
 * How often, at most, the held sockets are looked through for what was written to them straight
 * (ms), and how often the coalescer wakes while nothing waits for a turn: a look costs a check per
 * held socket, so that a crowd of idle streams costs no more than at this pace.
 */
const SWEEP_MS = 25;

/** The socket writes a second the coalescer stays within (see above). */
export const MAX_SOCKET_WRITES_PER_SECOND = 20_000;

/** A held socket: how it is released, when its writes last left (performance.now()), what waits for their next leaving. */
interface Held {
  release: () => void;
  flushedAt: number;
  deferred: Set<() => void> | undefined;
}

export function writeCoalescer(intervalMs: number, maxWritesPerSecond = MAX_SOCKET_WRITES_PER_SECOND): WriteCoalescer {
  /** Each held socket: how it is released, when its writes last left, and what was deferred to their next leaving. */
  const held = new Map<Socket, Held>();
  /** Held sockets with something to write, in the order their first unwritten write came. */
  const pending = new Set<Socket>();
  const tickMs = Math.min(TICK_MS, Math.max(1, Math.floor(intervalMs / 4)));
  const sweepMs = Math.max(tickMs, Math.min(SWEEP_MS, Math.floor(intervalMs / 4)));
  /** Socket writes allowed now: refilled at `maxWritesPerSecond`, up to one interval's worth (two ticks' at least). */
  const allowanceCap = Math.max(1, (maxWritesPerSecond * Math.max(intervalMs, 2 * tickMs)) / 1000);
  let allowance = allowanceCap;
  let refilledAt = performance.now();
  /** When the held sockets were last looked through for what was written to them straight. */
  let sweptAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  /** When the next tick is due (performance.now()). */
  let timerDue = 0;
  let ticking = false;

  /** Runs the writes deferred to a socket's next flush, once. */
  const writeDeferred = (entry: Held) => {
    const writes = entry.deferred;
    if (!writes) return;
    entry.deferred = undefined;
    for (const write of writes) write();
  };

  // Each tick writes out the sockets whose turn it is, oldest waiting first, as many as the
  // allowance has room for, giving requests a turn every FLUSH_SLICE sockets: what the API answers
  // meanwhile never waits behind a whole crowd's writes.
  const tick = async () => {
    timer = undefined;
    ticking = true;
    try {
      let now = performance.now();
      allowance = Math.min(allowanceCap, allowance + ((now - refilledAt) * maxWritesPerSecond) / 1000);
      refilledAt = now;
      // Writes made straight to a held socket (a WebSocket's pings and close frame) wait their turn
      // too: found every sweepMs, not at every tick (nor at every tick a deferred write asks for).
      if (now - sweptAt >= sweepMs) {
        sweptAt = now;
        for (const socket of held.keys()) if (!pending.has(socket) && socket.writableLength > 0) pending.add(socket);
      }
      let written = 0;
      for (const socket of pending) {
        if (allowance < 1) break;
        // Only held sockets are pending: a released one leaves `pending` with `held`.
        const entry = held.get(socket)!;
        if (now - entry.flushedAt < intervalMs) continue;
        pending.delete(socket);
        writeDeferred(entry);
        if (socket.writableLength === 0 || socket.writableCorked === 0) continue;
        entry.flushedAt = now;
        allowance--;
        socket.uncork();
        socket.cork();
        if (++written % FLUSH_SLICE === 0) {
          await new Promise((resolve) => setImmediate(resolve));
          now = performance.now();
        }
      }
    } finally {
      ticking = false;
      schedule(pending.size ? tickMs : sweepMs);
    }
  };
  /** The next tick in `delayMs` (a tick's length unless said), while something is held. */
  const schedule = (delayMs = tickMs) => {
    if (ticking || held.size === 0) return;
    const due = performance.now() + delayMs;
    if (timer) {
      if (due >= timerDue) return;
      clearTimeout(timer);
    }
    timerDue = due;
    timer = setTimeout(() => void tick(), delayMs);
    timer.unref();
  };

  return {
    hold(socket) {
      if (intervalMs <= 0 || socket.destroyed) return () => {};
      const holding = held.get(socket);
      if (holding) return holding.release;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        socket.off('close', release);
        held.delete(socket);
        pending.delete(socket);
        writeDeferred(entry);
        if (socket.writableCorked > 0) socket.uncork();
        if (held.size === 0 && timer) {
          clearTimeout(timer);
          timer = undefined;
        }
      };
      const entry: Held = { release, flushedAt: -Infinity, deferred: undefined };
      socket.cork();
      held.set(socket, entry);
      socket.once('close', release);
      schedule();
      return release;
    },
    defer(socket, write) {
      const entry = held.get(socket);
      if (!entry) return false;
      (entry.deferred ??= new Set()).add(write);
      if (!pending.has(socket)) {
        pending.add(socket);
        // A connection whose last writes left long enough ago goes out with the next tick at once;
        // another, at its turn (ticks come every tickMs while anything waits).
        schedule(performance.now() - entry.flushedAt >= intervalMs ? 0 : tickMs);
      }
      return true;
    },
    get size() {
      return held.size;
    },
    dispose() {
      for (const { release } of [...held.values()]) release();
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
