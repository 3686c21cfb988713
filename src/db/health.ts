import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './errors.js';

/** How often PostgreSQL is probed, and how long a probe may take before it counts as failed. */
export const PROBE_INTERVAL_MS = 500;
export const PROBE_TIMEOUT_MS = 1000;

/**
 * Whether the database answers. A probe runs every PROBE_INTERVAL_MS; one that
 * fails or takes longer than PROBE_TIMEOUT_MS marks the database down, the next
 * one that succeeds marks it up again. Requests consult it so that an outage is
 * answered with 503 within 2 seconds instead of hanging, and service resumes by
 * itself when the database returns. A request that meets a connection failure
 * probes at once instead of waiting for the next tick, so that requests needing
 * no statement (a cached credential, the viewer) answer 503 too from then on.
 */
export class DatabaseHealth {
  private down = false;
  private readonly waiters = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private probing = false;

  constructor(
    private readonly probe: () => Promise<unknown>,
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

  /** Probes once now, with the timeout; true when the database answered. */
  async check(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.probe().then(() => true, () => false), timeout]);
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
