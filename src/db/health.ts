import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './errors.js';

/** How often PostgreSQL is probed, and how long a probe may take before it counts as failed. */
export const PROBE_INTERVAL_MS = 500;
export const PROBE_TIMEOUT_MS = 1000;

/**
 * Whether the database answers. A probe runs every PROBE_INTERVAL_MS; one that
 * fails marks the database down, the next one that succeeds marks it up again.
 * Requests consult it so that an outage is answered with 503 within 2 seconds
 * instead of hanging, and service resumes by itself when the database returns.
 * A request that meets a connection failure probes at once instead of waiting
 * for the next tick, so that requests needing no statement (a cached credential,
 * the viewer) answer 503 too from then on.
 *
 * A probe unanswered after PROBE_TIMEOUT_MS fails, unless the database answered
 * a statement sent after the probe (see `answered`): then the machine is loaded,
 * not the database gone, and a slow probe is no reason to refuse every request.
 */
export class DatabaseHealth {
  private down = false;
  private readonly waiters = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private probing = false;
  /** When the latest statement the database is known to have answered was sent (performance.now()). */
  private answeredSentAt = -Infinity;

  /**
   * `probe` runs one check; on a timeout `signal` is aborted, so that the probe can
   * give up its connection rather than leave the next probe waiting behind it.
   */
  constructor(
    private readonly probe: (signal: AbortSignal) => Promise<unknown>,
    private readonly logger?: Logger,
  ) {}

  get isDown(): boolean {
    return this.down;
  }

  /**
   * Settles like `work`, unless the database is or goes down first: then with
   * 'unavailable', leaving `work` to finish (or fail) on its own.
   */
  race<T>(work: Promise<T>): Promise<T | 'unavailable'> {
    if (this.down) {
      work.catch(() => {});
      return Promise.resolve('unavailable');
    }
    let waiter!: () => void;
    const downed = new Promise<'unavailable'>((resolve) => {
      waiter = () => resolve('unavailable');
      this.waiters.add(waiter);
    });
    work.catch((error: unknown) => {
      if (isDatabaseUnavailable(error)) this.probeNow();
    });
    return Promise.race([work, downed]).finally(() => this.waiters.delete(waiter));
  }

  /** One probe now, unless one is running or the database is already known to be down. */
  private probeNow(): void {
    if (this.stopped || this.down || this.probing) return;
    this.probing = true;
    void this.check()
      .then((up) => this.set(up))
      .finally(() => {
        this.probing = false;
      });
  }

  /** Tells that a statement sent at `sentAt` (performance.now()) was answered. */
  answered(sentAt: number): void {
    if (sentAt > this.answeredSentAt) this.answeredSentAt = sentAt;
  }

  /** Probes once now, with the timeout; true when the database answered. */
  async check(): Promise<boolean> {
    const sentAt = performance.now();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'slow'>((resolve) => {
      // After a stalled event loop the timer and the answer are due together, and timers run
      // before I/O: the check phase comes after it, so an answer already received still counts.
      timer = setTimeout(() => setImmediate(() => resolve('slow')), PROBE_TIMEOUT_MS);
    });
    try {
      const outcome = await Promise.race([this.probe(abort.signal).then(() => true, () => false), timeout]);
      if (outcome !== 'slow') return outcome;
      abort.abort();
      return this.answeredSentAt >= sentAt;
    } finally {
      clearTimeout(timer);
    }
  }

  start(): this {
    const tick = async () => {
      this.set(await this.check());
      if (!this.stopped) this.timer = setTimeout(tick, PROBE_INTERVAL_MS).unref();
    };
    this.timer = setTimeout(tick, 0).unref();
    return this;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private set(up: boolean): void {
    if (this.stopped || up === !this.down) return;
    this.down = !up;
    // Once per transition, however many probes and requests fail in between.
    if (up) this.logger?.info('database available again');
    else this.logger?.error('database unavailable: answering 503 until it returns');
    if (this.down) {
      for (const resolve of [...this.waiters]) resolve();
    }
  }
}
