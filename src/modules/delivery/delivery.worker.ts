import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { ProviderChoice } from './providers.js';
import { describeError } from '../../errors/log.js';
import { deliveryAttempts } from '../../metrics/process.js';
import { recordEvents } from '../events/events.service.js';
import { messageInclude, messageView } from '../messages/messages.service.js';

export interface DeliveryWorkerOptions {
  prisma: PrismaClient;
  logger: Logger;
  providers: ProviderChoice;
  /** How long a claim lasts; a worker that dies mid-delivery loses it after this. */
  leaseMs: number;
  /** Idle wait between polls (a queued message wakes the worker at once). */
  pollMs: number;
  /** First retry delay; doubles per attempt, with jitter, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs?: number;
  batchSize?: number;
  id?: string;
  /**
   * How long `stop()` waits for deliveries in flight before giving up their leases,
   * so that a stopping process neither hangs on a slow receiver nor keeps its
   * claims locked until the lease runs out.
   */
  stopGraceMs?: number;
}

/** Default for `stopGraceMs`: well inside the time an orchestrator allows a stopping container. */
export const STOP_GRACE_MS = 5000;

/** A claimed delivery: a message to its channel, or an event to an endpoint. */
interface Claimed {
  id: string;
  message_id: string | null;
  endpoint_id: string | null;
  attempts: number;
  max_attempts: number;
}

/**
 * Delivers queued messages and workspace events from the deliveries outbox. Workers claim due rows with
 * FOR UPDATE SKIP LOCKED, so any number of processes can share one PostgreSQL;
 * a claim is a lease, so work held by a crashed worker is claimed again when it
 * expires (at-least-once, under the same delivery id). A worker whose lease was
 * taken over cannot overwrite the new owner's outcome.
 */
export class DeliveryWorker {
  readonly id: string;
  private stopped = true;
  /** Set by stop(): claims made after it are handed back, not attempted. */
  private stopping = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wake: (() => void) | null = null;
  /** Set by nudge(): work was queued, so the loop claims again before it waits. */
  private nudged = false;
  /** While the loop waits with every place taken: called when an attempt ends. */
  private placeFreed: (() => void) | null = null;
  /** The attempts under way, by delivery id. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.id = options.id ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopping = false;
    this.loopDone = this.loop();
  }

  /** Polls now instead of at the next interval (or, while it is claiming, right after). */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /**
   * Stops claiming, waits up to `stopGraceMs` for the deliveries in flight, then
   * releases every lease this worker still holds, so that another worker takes
   * that work at once instead of after the lease. An attempt still running when
   * its lease is released records no outcome (`finish` checks ownership): the
   * next worker delivers it again under the same delivery id, which receivers
   * de-duplicate.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    this.nudge();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.stopGraceMs ?? STOP_GRACE_MS);
    });
    try {
      await Promise.race([Promise.allSettled([this.loopDone, ...this.inFlight.values()]), grace]);
    } finally {
      clearTimeout(timer);
    }
    await this.releaseLeases().catch((error: unknown) => {
      this.options.logger.warn({ err: describeError(error), worker: this.id }, 'could not release delivery leases; they expire with their lease');
    });
  }

  /** Gives up every claim this worker still holds on unfinished deliveries, in one statement. */
  private async releaseLeases(): Promise<void> {
    const { prisma, logger } = this.options;
    const released = await prisma.$executeRaw`
      UPDATE deliveries SET locked_by = NULL, locked_until = NULL, updated_at = now()
       WHERE locked_by = ${this.id} AND status = 'pending'`;
    if (released > 0) logger.info({ worker: this.id, released }, 'delivery leases released');
  }

  /** Returns claims that were never attempted, uncounted. */
  private async handBack(ids: string[]): Promise<void> {
    await this.options.prisma.$executeRaw`
      UPDATE deliveries SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1, updated_at = now()
       WHERE locked_by = ${this.id} AND status = 'pending' AND id = ANY(${ids}::uuid[])`;
  }

  /**
   * Keeps up to `batchSize` deliveries in flight, claiming more as each one ends: a receiver that
   * hangs until its timeout holds one place, never the deliveries claimed beside it nor the
   * next ones. With nothing due, it waits for the poll interval or a nudge.
   */
  private async loop(): Promise<void> {
    const capacity = Math.max(1, this.options.batchSize ?? 10);
    while (!this.stopped) {
      // Requests and signals get their turn between claims, on the embedded database too
      // (whose statements never wait on a socket).
      await nextTurn();
      if (this.stopped) break;
      this.nudged = false;
      const free = capacity - this.inFlight.size;
      let drained = false;
      if (free > 0) {
        try {
          const attempts = await this.startDue(free);
          for (const attempt of attempts) {
            attempt.catch((error: unknown) => this.options.logger.warn({ err: describeError(error), worker: this.id }, 'delivery attempt failed'));
          }
          drained = attempts.length < free;
        } catch (error) {
          this.options.logger.warn({ err: describeError(error), worker: this.id }, 'delivery poll failed');
          drained = true;
        }
      }
      if (this.stopped) break;
      // Work queued while claiming, or more due and room for it: claim again at once.
      if (this.nudged || (!drained && this.inFlight.size < capacity)) continue;
      await new Promise<void>((resolve) => {
        // Nothing due: poll later, or when nudged. Every place taken: claim again when one frees up.
        const timer = drained ? setTimeout(resolve, this.options.pollMs) : undefined;
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (!drained) this.placeFreed = this.wake;
      });
      this.wake = null;
      this.placeFreed = null;
    }
  }

  /** Claims up to `limit` due deliveries and starts attempting them: the attempts, tracked. */
  private async startDue(limit: number): Promise<Promise<void>[]> {
    const claimed = await this.claim(limit);
    // A claim that returns after stop() began is handed back rather than attempted.
    if (this.stopping && claimed.length) {
      await this.handBack(claimed.map((row) => row.id));
      return [];
    }
    return claimed.map((row) => this.track(row.id, this.attempt(row)));
  }

  /** Claims due deliveries and attempts them, waiting for every attempt; returns how many were attempted. */
  async runOnce(): Promise<number> {
    const attempts = await this.startDue(this.options.batchSize ?? 10);
    await Promise.all(attempts);
    return attempts.length;
  }

  /**
   * Takes a lease on up to `limit` due deliveries. A delivery this worker is still attempting is
   * never claimed again by it, even once its lease has run out (another worker may take it).
   */
  async claim(limit: number): Promise<Claimed[]> {
    return this.options.prisma.$queryRaw<Claimed[]>`
      UPDATE deliveries AS d
         SET locked_by = ${this.id},
             locked_until = now() + ${this.options.leaseMs} * interval '1 millisecond',
             attempts = d.attempts + 1,
             updated_at = now()
       WHERE d.id IN (
             SELECT id FROM deliveries
              WHERE status = 'pending' AND run_at <= now() AND (locked_until IS NULL OR locked_until < now())
                AND NOT (id = ANY(${[...this.inFlight.keys()]}::uuid[]))
              ORDER BY run_at
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.message_id, d.endpoint_id, d.attempts, d.max_attempts`;
  }

  private track<T>(id: string, promise: Promise<T>): Promise<T> {
    this.inFlight.set(id, promise);
    return promise.finally(() => {
      this.inFlight.delete(id);
      this.placeFreed?.();
    });
  }

  private async attempt(row: Claimed): Promise<void> {
    const { prisma, logger } = this.options;
    let context: Record<string, unknown>;
    let send: () => Promise<void>;
    if (row.message_id) {
      const message = await prisma.message.findUnique({ where: { id: row.message_id }, include: { channel: true, contact: true } });
      if (!message) return;
      const provider = this.options.providers(message.channel);
      context = { deliveryId: row.id, messageId: message.id, attempt: row.attempts, provider: provider.name, worker: this.id };
      send = () => provider.deliver({ deliveryId: row.id, attempt: row.attempts, message, channel: message.channel, contact: message.contact });
    } else {
      const delivery = await prisma.delivery.findUnique({ where: { id: row.id }, include: { endpoint: true } });
      if (!delivery?.endpoint) return;
      const { endpoint } = delivery;
      const provider = this.options.providers.events;
      context = { deliveryId: row.id, endpointId: endpoint.id, event: delivery.eventType, attempt: row.attempts, provider: provider.name, worker: this.id };
      send = () => provider.deliver({ deliveryId: row.id, url: endpoint.url, secret: endpoint.secret, body: JSON.stringify(delivery.payload) });
    }
    try {
      await send();
    } catch (error) {
      const reason = ((error as Error).message || 'delivery failed').slice(0, 1000);
      const final = row.attempts >= row.max_attempts;
      deliveryAttempts.labels(row.message_id ? 'message' : 'event', final ? 'failed' : 'retry').inc();
      const recorded = await this.finish(row, final ? 'failed' : 'retry', reason);
      logger.warn({ ...context, reason, final, recorded }, final ? 'delivery failed for good' : 'delivery failed, will retry');
      return;
    }
    deliveryAttempts.labels(row.message_id ? 'message' : 'event', 'delivered').inc();
    const recorded = await this.finish(row, 'sent');
    logger.info({ ...context, recorded }, row.message_id ? 'message delivered' : 'event delivered');
  }

  /**
   * Records an outcome, only while this attempt still holds the lease: the row is
   * still claimed by this worker for this attempt's number, so neither another
   * worker's nor this worker's own later claim of the same row (after the lease ran
   * out) is overwritten by a late answer. A message's final outcome (sent or
   * failed) changes its status, which is itself an event.
   */
  private async finish(row: Claimed, outcome: 'sent' | 'retry' | 'failed', reason?: string): Promise<boolean> {
    const { prisma } = this.options;
    const delay = Math.min(this.options.maxBackoffMs ?? 3_600_000, this.options.backoffMs * 2 ** (row.attempts - 1));
    const retryIn = Math.round(delay * (0.5 + Math.random() / 2));
    let queued = 0;
    const owned = await prisma.$transaction(async (tx) => {
      const owned = await tx.$executeRaw`
        UPDATE deliveries
           SET status = ${outcome === 'sent' ? 'succeeded' : outcome === 'failed' ? 'failed' : 'pending'}::delivery_status,
               locked_by = NULL,
               locked_until = NULL,
               last_error = ${reason ?? null},
               run_at = CASE WHEN ${outcome === 'retry'} THEN now() + ${retryIn} * interval '1 millisecond' ELSE run_at END,
               updated_at = now()
         WHERE id = ${row.id}::uuid AND locked_by = ${this.id} AND attempts = ${row.attempts} AND status = 'pending'`;
      if (owned === 0) return false;
      if (!row.message_id) return true;
      const now = new Date();
      const message = await tx.message.update({
        where: { id: row.message_id },
        include: messageInclude,
        data:
          outcome === 'sent'
            ? { status: 'sent', sentAt: now, deliveryAttempts: row.attempts, lastError: null }
            : outcome === 'failed'
              ? { status: 'failed', failedAt: now, deliveryAttempts: row.attempts, lastError: reason ?? null }
              : { deliveryAttempts: row.attempts, lastError: reason ?? null },
      });
      if (outcome !== 'retry') queued = await recordEvents(tx, message.workspaceId, [{ type: 'message.status_changed', data: messageView(message) }], now);
      return true;
    });
    // The status change's events are due at once.
    if (queued > 0) this.nudge();
    return owned;
  }
}
