import type { ExecutionResult } from 'graphql';
import { isListenable, type Listenable, type StreamEnd } from '../context/services.js';
import type { StreamSink } from '../graphql/builder.js';


const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** What waits on a result: a subscriber's stream, or a fan-out writing to many. */
interface Waiter {
  resume(): void;
  fail(error: unknown): void;
}

/**
 * How long a crowd's streams are resumed, or offered results, in one turn of the event loop before
 * it takes the next (ms): requests are answered between the slices. With writes gathered per
 * connection (src/realtime/coalesce.ts) an offer is a few hundred nanoseconds, so a turn reaches a few
 * thousand subscribers: an event is handed to a whole crowd at once, not over a turn per few
 * hundred (each turn waits for what else is due, socket writes included).
 */
const SLICE_MS = 4;

/**
 * The turns of one app's engine: every slice run in one turn of the event loop shares one deadline,
 * set by the first (a fan-out handing out several results, or fan-outs resumed by one result).
 */
export class Turns {
  private ends: number | undefined;

  private endOfTurn(): number {
    if (this.ends === undefined) {
      this.ends = performance.now() + SLICE_MS;
      setImmediate(() => (this.ends = undefined));
    }
    return this.ends;
  }

  /**
   * Runs `each` for the indexes from `from` up to `length` until this turn's slices have run
   * SLICE_MS (at least one, then up to the next multiple of 64): the index it stopped at.
   */
  runSlice(from: number, length: number, each: (index: number) => void): number {
    const until = this.endOfTurn();
    let index = from;
    while (index < length) {
      each(index++);
      if ((index & 63) === 0 && performance.now() >= until) break;
    }
    return index;
  }

  resumeInSlices(waiters: Waiter[], from: number): void {
    const to = this.runSlice(from, waiters.length, (index) => waiters[index]!.resume());
    if (to < waiters.length) setImmediate(() => this.resumeInSlices(waiters, to));
  }
}

/**
 * One execution of an event for a cohort (src/realtime/cohorts.ts): its result once settled, its
 * JSON made once for every subscriber it is written to, and what waits on it — told together, in
 * slices of a turn, when it settles. Everything of it lives on the object, which the event's
 * cohort results hold: it goes with the event.
 */
export class SharedResult {
  value: ExecutionResult | undefined;
  private json: string | undefined;
  private waiters: Waiter[] | undefined;
  private failed: { error: unknown } | undefined;

  constructor(
    readonly promise: Promise<ExecutionResult>,
    private readonly turns: Turns,
  ) {
    promise.then(
      (value) => {
        this.value = value;
        const waiters = this.waiters;
        this.waiters = undefined;
        if (waiters) turns.resumeInSlices(waiters, 0);
      },
      (error: unknown) => {
        this.failed = { error };
        const waiters = this.waiters;
        this.waiters = undefined;
        for (const each of waiters ?? []) each.fail(error);
      },
    );
  }

  /** Tells `waiter` once the result settles (resume) or fails. */
  wait(waiter: Waiter): void {
    if (this.failed) {
      const { error } = this.failed;
      return void queueMicrotask(() => waiter.fail(error));
    }
    (this.waiters ??= []).push(waiter);
  }

  /** The settled result's JSON, made once. */
  get serialised(): string {
    return (this.json ??= JSON.stringify(this.value));
  }
}

/** Where a stream's source ends, in its backlog. */
const END = Symbol('end');

/** A stream's source as DirectStream reads it: one that hands its events on, or one it reads. */
export type StreamSource = AsyncIterator<unknown> & Partial<Listenable<unknown, StreamEnd | null>>;

/**
 * A subscriber's stream whose ordinary results (data, no errors) are written to its connection's
 * writer by `sink` (src/realtime/writer.ts) without passing through the transport's per-result
 * pipeline: each result is serialised once for every subscriber sharing it
 * (src/realtime/cohorts.ts), and the subscribers waiting on one execution are written to together
 * when it settles. What the transport's pipeline must see still goes through it, in order: a
 * result with errors (masked there), the end of a stream whose credential lapsed (its error, then
 * completion; a WebSocket then closes: 4401 when it expired, 4403 otherwise), and completion. The
 * transport iterates this stream as any other; it yields only those, and what it sends of them
 * goes through the same writer, after what was written before.
 *
 * What reaches it is decided by a source — its filter, its credential hold: its own (`read`:
 * handed on as published when the source can, src/realtime/bus.ts `listen`, read one event after
 * another otherwise), or one it shares with the subscribers of its fan-out (FanOut, which offers
 * it each result and its end). A connection that stops taking what is written is cut off by its
 * writer (the one limit of a connection); the stream then completes. `release` lets go of the
 * source once the stream ends.
 */
export class DirectStream implements AsyncIterableIterator<ExecutionResult>, Waiter {
  /** The transport's next(), waiting. */
  private waiting: ((result: IteratorResult<ExecutionResult>) => void) | undefined;
  /** Results for the transport it has not asked for yet. */
  private readonly queued: IteratorResult<ExecutionResult>[] = [];
  /** Told when the transport asks again, having taken what it was handed. */
  private asked: (() => void) | undefined;
  /** Results (and the end) not yet written, in order; the first may be waited on. */
  private readonly backlog: (SharedResult | typeof END)[] = [];
  private busy = false;
  private ended = false;

  constructor(
    private readonly resultOf: (event: unknown) => SharedResult,
    private readonly sink: StreamSink,
    private readonly release: () => unknown,
  ) {}

  /** A stream of its own source's events. */
  static reading(source: StreamSource, resultOf: (event: unknown) => SharedResult, sink: StreamSink): DirectStream {
    const stream = new DirectStream(resultOf, sink, () => source.return?.());
    if (isListenable<unknown, StreamEnd | null>(source)) {
      source.listen(
        (event) => stream.take(resultOf(event)),
        (last) => stream.end(last),
      );
    } else void stream.pump(source);
    return stream;
  }

  /** Reads a source that cannot hand its events on. */
  private async pump(source: AsyncIterator<unknown>): Promise<void> {
    try {
      for (;;) {
        const step = await source.next();
        if (this.ended) return;
        if (step.done) return this.take(END);
        this.take(this.resultOf(step.value));
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private take(item: SharedResult | typeof END): void {
    if (this.ended) return;
    this.backlog.push(item);
    if (!this.busy) this.advance();
  }

  /** A settled result of the source, offered by its fan-out: written at once when nothing waits before it. */
  offer(result: SharedResult): void {
    if (this.ended) return;
    if (this.busy || this.backlog.length) return this.take(result);
    this.emit(result);
  }

  /** The source ended: with the StreamEnd of a lapsed credential (executed for this subscriber), or none. */
  end(last: StreamEnd | null): void {
    if (last) this.take(this.resultOf(last));
    this.take(END);
  }

  /** Writes what can be written now, in order, until a result must be waited for or handed over. */
  private advance(): void {
    while (!this.ended && this.backlog.length) {
      const head = this.backlog[0]!;
      if (head === END) return this.finish();
      if (head.value === undefined) {
        this.busy = true;
        return head.wait(this);
      }
      this.backlog.shift();
      if (!this.emit(head)) return;
    }
    this.busy = false;
  }

  /** Writes a settled result, or hands it to the transport: whether the next may follow at once. */
  private emit(result: SharedResult): boolean {
    const value = result.value!;
    if (value.errors || value.extensions) {
      this.busy = true;
      void this.handOver({ done: false, value }).then(() => this.resume());
      return false;
    }
    if (this.sink.write(result.serialised)) return true;
    // The connection is gone, or was cut off for not reading: nothing more reaches it.
    void this.release();
    this.finish();
    return false;
  }

  /** The result waited on has settled, or the transport has taken what it was handed. */
  resume(): void {
    this.busy = false;
    this.advance();
  }

  /** The source, or an execution, failed: the transport's next() rejects with it. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.backlog.length = 0;
    void this.release();
    const failed = Promise.reject(error as Error);
    failed.catch(() => {});
    this.give(failed as never);
  }

  /** Hands `result` to the transport, and waits until it has taken it and sent it on. */
  private handOver(result: IteratorResult<ExecutionResult>): Promise<void> {
    return new Promise<void>((resolve) => {
      this.asked = () => setImmediate(resolve);
      this.give(result);
    });
  }

  private give(result: IteratorResult<ExecutionResult>): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(result);
    else this.queued.push(result);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.backlog.length = 0;
    this.give(DONE);
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    const asked = this.asked;
    this.asked = undefined;
    asked?.();
    const queued = this.queued.shift();
    if (queued) return Promise.resolve(queued);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    if (!this.ended) {
      this.ended = true;
      this.backlog.length = 0;
      this.waiting?.(DONE);
      this.waiting = undefined;
      this.asked?.();
    }
    await this.release();
    return DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

/** A subscriber of a fan-out, and how many of the fan-out's events had come before it joined. */
interface Member {
  stream: DirectStream;
  since: number;
}

/** An item of a fan-out's backlog: an event's result, or the end of its source; numbered as they came. */
type FanOutItem = { seq: number; result: SharedResult } | { seq: number; end: StreamEnd | null };

/**
 * One source, its events' results written to many subscribers' streams: the subscribers whose
 * results are the same by construction — one cohort (src/realtime/cohorts.ts)
 * and one credential, so one filter and one credential hold. Each event is filtered, held until its
 * credential is known to hold, and executed (or its shared result looked up) once for all of them;
 * only the write is per subscriber. A subscriber receives the events that come after it joined, in
 * order; the source's end reaches each (a lapsed credential's error executed for each, as it would
 * be for a stream of its own). Results are offered to the subscribers in slices of SLICE_MS, the
 * event loop answering requests between the slices. Once the last subscriber leaves, or an
 * execution fails (each subscriber's stream failing with it), the source is let go and `closed` told.
 */
export class FanOut implements Waiter {
  private readonly members: Member[] = [];
  private readonly backlog: FanOutItem[] = [];
  /** Events that came from the source so far. */
  private received = 0;
  private busy = false;
  /** The source has ended (its end may still wait behind results): nobody joins any more. */
  private sourceEnded = false;
  private ended = false;

  constructor(
    private readonly source: StreamSource & Listenable<unknown, StreamEnd | null>,
    private readonly resultOf: (event: unknown, subscribers: number) => SharedResult,
    private readonly closed: () => void,
    private readonly turns: Turns,
  ) {
    source.listen(
      (event) => this.push({ seq: ++this.received, result: this.resultOf(event, this.members.length) }),
      (last) => {
        this.sourceEnded = true;
        this.push({ seq: ++this.received, end: last });
      },
    );
  }

  /** Whether a subscriber may still join. */
  get open(): boolean {
    return !this.ended && !this.sourceEnded;
  }

  /** `stream` receives what comes from now on. */
  join(stream: DirectStream): void {
    this.members.push({ stream, since: this.received });
  }

  /** `stream` leaves; the source is let go with the last one. */
  leave(stream: DirectStream): void {
    const index = this.members.findIndex((member) => member.stream === stream);
    if (index >= 0) this.members.splice(index, 1);
    if (!this.members.length) this.close();
  }

  private close(): void {
    if (this.ended) return;
    this.ended = true;
    this.backlog.length = 0;
    this.closed();
    void this.source.return?.();
  }

  private push(item: FanOutItem): void {
    if (this.ended) return;
    this.backlog.push(item);
    if (!this.busy) this.advance();
  }

  private advance(): void {
    while (!this.ended && this.backlog.length) {
      const head = this.backlog[0]!;
      if ('end' in head) {
        for (const member of this.members.splice(0)) member.stream.end(member.since < head.seq ? head.end : null);
        return this.close();
      }
      if (head.result.value === undefined) {
        this.busy = true;
        return head.result.wait(this);
      }
      this.backlog.shift();
      // A copy: a subscriber cut off as it is written to leaves meanwhile.
      if (!this.offerFrom(this.members.slice(), 0, head)) return;
    }
    this.busy = false;
  }

  /**
   * Offers a result to `members` from `from` on, for a slice of this turn: whether all of them were.
   * If not, the fan-out is busy until the rest, a slice a turn, have been offered it.
   */
  private offerFrom(members: Member[], from: number, item: { seq: number; result: SharedResult }): boolean {
    const to = this.turns.runSlice(from, members.length, (index) => {
      const member = members[index]!;
      if (member.since < item.seq) member.stream.offer(item.result);
    });
    if (to === members.length) return true;
    this.busy = true;
    setImmediate(() => {
      if (this.offerFrom(members, to, item)) this.resume();
    });
    return false;
  }

  resume(): void {
    this.busy = false;
    this.advance();
  }

  fail(error: unknown): void {
    for (const member of this.members.splice(0)) member.stream.fail(error);
    this.close();
  }
}
