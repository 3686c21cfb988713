import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Prisma, type Channel, type PrismaClient } from '../../generated/prisma/client.js';
import { describeError } from '../../errors/log.js';
import { deriveE164 } from '../../lib/phone.js';
import { redactSecrets } from '../../lib/redact.js';
import type { Sealer } from '../../lib/sealed.js';
import { deliveryAttempts } from '../../metrics/process.js';
import type { SendJob, SendOutcome } from '../../providers/provider.js';
import { findProvider, maxRatePerSecond, type Providers } from '../../providers/registry.js';
import { rateLimitOf, retryAfterMs } from '../../providers/rate-limit.js';
import { sqlOn } from '../../db/types.js';
import { isDatabaseUnavailable } from '../../db/errors.js';
import { afterRateLimit, type PaceLimits } from '../channels/pacing.js';
import { providerChannel } from '../channels/channel-secrets.js';
import { queueEventsSql } from '../events/events.service.js';
import { storedProviderId } from '../inbound/inbound.service.js';
import { messageTable, senderJoins } from '../messages/messages.sql.js';
import { messageOptOutSql } from '../contacts/opt-outs.js';
import type { RunSql } from '../../db/database.js';
import type { EventBus } from '../../context/services.js';
import type { Tracing } from '../../lib/tracing.js';

export interface DeliveryWorkerOptions {
  prisma: PrismaClient;
  /** Runs the claim and the outcomes, one statement each, past Prisma's per-call work (`Database.query`). */
  sql: RunSql;
  logger: Logger;
  /** The providers: their outbound requests, the events' sender, and their descriptors (a channel's rate and rate-limit codes). */
  providers: Pick<Providers, 'outbound' | 'events' | 'list'>;
  /** Opens the channels' and endpoints' stored secrets (null: none can be stored, as on PostgreSQL without SECRETS_KEY). */
  sealer: Sealer | null;
  /** Where GraphQL subscriptions hear of a message's status changing (`message.updated`). */
  events?: EventBus | undefined;
  /** Processes one stored inbound event (src/modules/inbound/inbound.worker.ts); throws to have it retried. */
  inbound?: (eventId: string) => Promise<void>;
  /** How long a claim lasts; a worker that dies mid-delivery loses it after this. */
  leaseMs: number;
  /** Idle wait between polls (a queued message wakes the worker at once). */
  pollMs: number;
  /** First retry delay; doubles per attempt, with jitter, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs?: number;
  /** Deliveries kept in flight at once (DEFAULT_IN_FLIGHT); each waiting on its receiver holds one place. */
  batchSize?: number;
  id?: string;
  /**
   * How long `stop()` waits for deliveries in flight before giving up their leases,
   * so that a stopping process neither hangs on a slow receiver nor keeps its
   * claims locked until the lease runs out.
   */
  stopGraceMs?: number;
  /** A span for each attempt, when OpenTelemetry is on (docs/operations.md#tracing); absent, nothing is traced. */
  tracing?: Tracing;
}

/** Default for `stopGraceMs`: well inside the time an orchestrator allows a stopping container. */
export const STOP_GRACE_MS = 5000;

/**
 * How long this worker holds a channel's other messages after a rate-limit answer without a
 * Retry-After, while the answer's transaction spreads them out at the halved rate.
 */
const LIMITED_HOLD_MS = 250;

/** Deliveries one worker keeps in flight by default (`batchSize`). */
export const DEFAULT_IN_FLIGHT = 32;

/**
 * A claimed delivery: a message to its channel, an event to an endpoint, an inbound event to
 * process, or a conversation's read receipt to its channel — with what attempting it needs, read
 * by the claim itself (`m_`: the message, `c_` its channel or the receipt's, `ct_` its contact,
 * `t_` its template; `e_` an event's endpoint).
 */
interface Claimed {
  id: string;
  workspace_id: string;
  message_id: string | null;
  endpoint_id: string | null;
  inbound_event_id: string | null;
  conversation_id: string | null;
  attempts: number;
  max_attempts: number;
  event_type: string | null;
  payload: unknown;
  /** The traceparent of the request that queued it (tracing on). */
  trace_parent: string | null;
  e_id: string | null;
  e_url: string | null;
  e_secret: string | null;
  m_id: string | null;
  m_conversation_id: string;
  m_type: 'text' | 'template';
  m_body: string;
  m_is_encrypted: boolean;
  m_media_urls: string[];
  m_silent: boolean;
  m_created_at: Date;
  m_template_parameters: unknown;
  m_status: string;
  t_name: string | null;
  t_language: string | null;
  ct_id: string;
  ct_name: string;
  ct_email: string | null;
  ct_phone: string | null;
  ct_is_group: boolean;
  c_id: string;
  c_name: string;
  c_provider: Channel['provider'];
  c_webhook_url: string | null;
  c_webhook_secret: string | null;
  c_provider_settings: Channel['providerSettings'];
  c_provider_secrets: string | null;
  /** The channel's own max_rate_per_second (null: its provider's default). */
  c_max_rate: number | null;
  /** While the channel's provider asked to wait (its Retry-After): until when; else null. */
  c_blocked_until: Date | null;
  sent_parts: string[];
}

type Kind = 'message' | 'event' | 'inbound' | 'receipt';

/**
 * This worker's lease on a delivery ran out and another claim took it over: the attempt stops at
 * once, recording nothing, and the worker that holds the delivery now sends what is left.
 */
export class LeaseLost extends Error {
  override name = 'LeaseLost';
}

/** The channel a claimed message or receipt goes out on, as the claim read it (`c_`). */
const claimedChannel = (row: Claimed) => ({
  id: row.c_id,
  name: row.c_name,
  provider: row.c_provider,
  webhookUrl: row.c_webhook_url,
  webhookSecret: row.c_webhook_secret,
  providerSettings: row.c_provider_settings,
  providerSecrets: row.c_provider_secrets,
});

/** A provider's text may echo a credential it was sent: it is stored, shown and logged without any of the channel's. */
function withoutCredentials(channel: ReturnType<typeof providerChannel>): (text: string) => string {
  const credentials = [...Object.values(channel.secrets), channel.webhookSecret];
  return (text) => redactSecrets(text, credentials);
}

const kindOf = (row: Claimed): Kind => (row.message_id ? 'message' : row.inbound_event_id ? 'inbound' : row.conversation_id ? 'receipt' : 'event');

/** What an attempt came to, for `finish`: delivered, to be retried, or failed for good (with the provider's reason). */
type Outcome = { kind: 'sent'; providerIds?: string[]; warning?: string } | { kind: 'retry'; reason: string } | { kind: 'failed'; reason: string; failureReason?: string };

/**
 * An attempt that is not counted (docs/broadcasts.md#rate-limit-answers): the provider's rate-limit
 * answer (`limited`, with its Retry-After), or a message not sent because its channel's provider
 * asked to wait until `until` (`held`).
 */
type Uncounted = { kind: 'limited'; reason: string; retryAfter: string | null } | { kind: 'held'; until: Date };

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
  /**
   * Channels whose provider answered "too many" to this worker, until when their messages are held:
   * heard at once by this worker's next sends, before the answer's transaction commits for every
   * process (docs/broadcasts.md#rate-limit-answers).
   */
  private readonly limitedChannels = new Map<string, number>();

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
    const capacity = Math.max(1, this.options.batchSize ?? DEFAULT_IN_FLIGHT);
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
    const attempts = await this.startDue(this.options.batchSize ?? DEFAULT_IN_FLIGHT);
    await Promise.all(attempts);
    return attempts.length;
  }

  /**
   * Takes a lease on up to `limit` due deliveries. A delivery this worker is still attempting is
   * never claimed again by it, even once its lease has run out (another worker may take it).
   */
  async claim(limit: number): Promise<Claimed[]> {
    return this.options.sql<Claimed>(Prisma.sql`
      WITH claimed AS (
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
        RETURNING d.id, d.workspace_id, d.message_id, d.endpoint_id, d.inbound_event_id, d.conversation_id, d.attempts, d.max_attempts, d.event_type, d.payload, d.trace_parent)
      SELECT claimed.*,
             e.id AS e_id, e.url AS e_url, e.secret AS e_secret,
             m.id AS m_id, m.conversation_id AS m_conversation_id, m.type::text AS m_type, m.body AS m_body, m.is_encrypted AS m_is_encrypted,
             m.media_urls AS m_media_urls, m.silent AS m_silent, m.created_at AS m_created_at, m.template_parameters AS m_template_parameters,
             m.status::text AS m_status,
             t.name AS t_name, t.language AS t_language,
             ct.id AS ct_id, ct.name AS ct_name, ct.email AS ct_email, ct.phone AS ct_phone, ct.is_group AS ct_is_group,
             c.id AS c_id, c.name AS c_name, c.provider::text AS c_provider, c.webhook_url AS c_webhook_url, c.webhook_secret AS c_webhook_secret,
             c.provider_settings AS c_provider_settings, c.provider_secrets AS c_provider_secrets, c.max_rate_per_second AS c_max_rate,
             CASE WHEN cp.blocked_until > now() THEN cp.blocked_until END AS c_blocked_until,
             ARRAY(SELECT p.provider_id FROM provider_message_ids AS p WHERE p.message_id = m.id ORDER BY p.part) AS sent_parts
        FROM claimed
        LEFT JOIN webhook_endpoints AS e ON e.id = claimed.endpoint_id
        LEFT JOIN messages AS m ON m.id = claimed.message_id
        LEFT JOIN conversations AS receipt ON receipt.id = claimed.conversation_id
        LEFT JOIN channels AS c ON c.id = coalesce(m.channel_id, receipt.channel_id)
        LEFT JOIN contacts AS ct ON ct.id = m.contact_id
        LEFT JOIN channel_templates AS t ON t.id = m.template_id
        LEFT JOIN channel_pacing AS cp ON cp.channel_id = m.channel_id`);
  }

  private track<T>(id: string, promise: Promise<T>): Promise<T> {
    this.inFlight.set(id, promise);
    return promise.finally(() => {
      this.inFlight.delete(id);
      this.placeFreed?.();
    });
  }

  /**
   * One attempt, in a span when tracing is on: beneath the span of the request that queued the
   * delivery (its stored traceparent), so that the attempts join that request's trace, or the
   * first of a trace of its own for a delivery no traced request queued. The attempt's SQL and
   * outbound requests go beneath it.
   */
  private attempt(row: Claimed): Promise<void> {
    const { tracing } = this.options;
    if (!tracing) return this.attemptNow(row);
    const attributes = { 'delivery.id': row.id, 'delivery.kind': kindOf(row), 'delivery.attempt': row.attempts };
    return tracing.span('delivery attempt', attributes, () => this.attemptNow(row), { root: true, parent: row.trace_parent });
  }

  /**
   * Runs `record`, one statement or transaction that records an attempt's outcome only while the
   * attempt holds its lease, again while the database turns it away for want of a connection (the
   * pool's wait running out under load), until the lease is near its end (docs/delivery.md#workers).
   * An outcome left unrecorded leaves the delivery to be taken again once the lease ends: a message
   * the provider took would be sent twice. Recording twice records nothing more (the lease is gone).
   */
  private async recorded<T>(startedAt: number, record: () => Promise<T>): Promise<T> {
    const giveUpAt = startedAt + this.options.leaseMs * 0.8;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
      try {
        return await record();
      } catch (error) {
        if (!isDatabaseUnavailable(error) || Date.now() + wait > giveUpAt) throw error;
        await sleep(wait);
      }
    }
  }

  private async attemptNow(row: Claimed): Promise<void> {
    const { logger } = this.options;
    const startedAt = Date.now();
    const kind = kindOf(row);
    const context: Record<string, unknown> = { deliveryId: row.id, attempt: row.attempts, worker: this.id };
    let outcome: Outcome | Uncounted;
    try {
      outcome =
        kind === 'message'
          ? await this.sendMessage(row, context)
          : kind === 'event'
            ? await this.sendEvent(row, context)
            : kind === 'receipt'
              ? await this.sendReceipt(row, context)
              : await this.processInbound(row, context);
    } catch (error) {
      if (error instanceof LeaseLost) {
        logger.warn(context, 'delivery lease lost mid-attempt: the worker holding it now goes on');
        return;
      }
      outcome = { kind: 'retry', reason: ((error as Error).message || 'delivery failed').slice(0, 1000) };
    }
    if (outcome.kind === 'limited' || outcome.kind === 'held') {
      await this.recorded(startedAt, () => this.uncounted(row, outcome, context));
      return;
    }
    if (outcome.kind === 'sent') {
      if (outcome.warning) logger.warn({ ...context, warning: outcome.warning }, 'delivered with a warning');
      deliveryAttempts.labels(kind, 'delivered').inc();
      const recorded = await this.recorded(startedAt, () => this.finish(row, outcome));
      const done = { message: 'message delivered', event: 'event delivered', inbound: 'inbound event processed', receipt: 'read receipt delivered' }[kind];
      logger.info({ ...context, recorded }, done);
      return;
    }
    // A reason to retry on the last attempt fails the delivery for good.
    const final: Outcome = outcome.kind === 'retry' && row.attempts >= row.max_attempts ? { kind: 'failed', reason: outcome.reason } : outcome;
    deliveryAttempts.labels(kind, final.kind === 'failed' ? 'failed' : 'retry').inc();
    const recorded = await this.recorded(startedAt, () => this.finish(row, final));
    const failedForGood = final.kind === 'failed';
    logger.warn({ ...context, reason: outcome.reason, final: failedForGood, recorded }, failedForGood ? 'delivery failed for good' : 'delivery failed, will retry');
  }

  /** A message to its channel's provider, the parts an earlier attempt sent skipped; a failed message is never sent again. */
  private async sendMessage(row: Claimed, context: Record<string, unknown>): Promise<Outcome | Uncounted> {
    const { sql } = this.options;
    if (!row.m_id) return { kind: 'sent' };
    context.messageId = row.m_id;
    const channel = claimedChannel(row);
    const provider = this.options.providers.outbound(channel);
    // A webhook channel without a webhook URL has no upstream: local delivery (docs/delivery.md).
    context.provider = provider.name === 'webhook' && !channel.webhookUrl ? 'local' : provider.name;
    // A failed message is never sent again. Any other status goes on: a provider's status for a part
    // already sent (sent, delivered, read) may land between attempts, and the parts after it are still owed.
    if (row.m_status === 'failed') return { kind: 'sent' };
    // The channel's provider asked to wait: nothing goes out on the channel before then.
    if (row.c_blocked_until) return { kind: 'held', until: new Date(row.c_blocked_until) };
    const limitedUntil = this.limitedChannels.get(row.c_id);
    if (limitedUntil !== undefined) {
      if (limitedUntil > Date.now()) return { kind: 'held', until: new Date(limitedUntil) };
      this.limitedChannels.delete(row.c_id);
    }
    const job: SendJob = {
      deliveryId: row.id,
      attempt: row.attempts,
      message: {
        id: row.m_id,
        conversationId: row.m_conversation_id,
        type: row.m_type,
        body: row.m_body,
        isEncrypted: row.m_is_encrypted,
        mediaUrls: row.m_media_urls,
        silent: row.m_silent,
        createdAt: row.m_created_at,
        template: row.t_name !== null ? { name: row.t_name, language: row.t_language!, parameters: (row.m_template_parameters as string[] | null) ?? [] } : null,
      },
      recipient: {
        id: row.ct_id,
        name: row.ct_name,
        email: row.ct_email,
        // A phone is sent in its E.164 form, however it was stored.
        phone: row.ct_phone ? (deriveE164(row.ct_phone) ?? row.ct_phone) : null,
        isGroup: row.ct_is_group,
      },
      channel: providerChannel(channel, this.options.sealer),
      sentParts: row.sent_parts,
      // In one statement: the part is recorded only while this attempt holds the lease, and the
      // lease is renewed with it, so a message of many parts outlasts one lease without losing it.
      recordPart: async (providerId, part) => {
        const [held] = await sql<{ held: number }>(Prisma.sql`
          WITH lease AS (
            UPDATE deliveries
               SET locked_until = now() + ${this.options.leaseMs} * interval '1 millisecond', updated_at = now()
             WHERE id = ${row.id}::uuid AND locked_by = ${this.id} AND attempts = ${row.attempts} AND status = 'pending'
            RETURNING id),
          recorded AS (
            INSERT INTO provider_message_ids (channel_id, provider_id, message_id, part)
            SELECT ${row.c_id}::uuid, ${storedProviderId(providerId)}, ${row.m_id}::uuid, ${part} FROM lease
            ON CONFLICT DO NOTHING
            RETURNING part)
          SELECT count(*)::int AS held FROM lease`);
        if (!held?.held) throw new LeaseLost(`lease on delivery ${row.id} lost before part ${part} was recorded`);
      },
    };
    if (job.sentParts.length) this.options.logger.warn({ ...context, parts: job.sentParts.length }, 'message partly sent by an earlier attempt: sending the rest');
    const clean = withoutCredentials(job.channel);
    const outcome: SendOutcome = await provider.send(job);
    // "Too many", in the provider's words: the channel slows down and the message is retried, uncounted.
    const limited = rateLimitOf(outcome, findProvider(row.c_provider, this.options.providers.list));
    if (limited) {
      // This worker's other sends on the channel wait from now on, while the answer is recorded for every process.
      const wait = retryAfterMs(limited.retryAfter, Date.now()) ?? 0;
      this.limitedChannels.set(row.c_id, Math.max(this.limitedChannels.get(row.c_id) ?? 0, Date.now() + Math.max(wait, LIMITED_HOLD_MS)));
      const said = outcome.kind === 'failed' ? `${outcome.code}: ${outcome.text}` : outcome.kind === 'retry' ? `${outcome.reply?.code ? `${outcome.reply.code}: ` : ''}${outcome.reason}` : '';
      return { kind: 'limited', reason: clean(`rate limited: ${said}`).slice(0, 1000), retryAfter: limited.retryAfter };
    }
    if (outcome.kind === 'failed') {
      // Refused because the recipient opted out with the provider: the contact is opted out of the channel.
      if (outcome.optedOut) await sql(messageOptOutSql(row.m_id, new Date()));
      const reason = clean(`${outcome.code}: ${outcome.text}`);
      return { kind: 'failed', reason: reason.slice(0, 1000), failureReason: reason };
    }
    if (outcome.kind === 'retry') return { kind: 'retry', reason: clean(outcome.reason) };
    return outcome.warning ? { ...outcome, warning: clean(outcome.warning) } : outcome;
  }

  /**
   * A conversation's read receipt to its channel's provider: the latest inbound message read. A
   * provider that takes none has nothing to do; a refusal fails the receipt alone, never a message.
   */
  private async sendReceipt(row: Claimed, context: Record<string, unknown>): Promise<Outcome> {
    context.conversationId = row.conversation_id;
    const { message_id: providerMessageId, typing } = (row.payload ?? {}) as { message_id?: unknown; typing?: unknown };
    if (!row.c_id || typeof providerMessageId !== 'string') return { kind: 'sent' };
    const channel = claimedChannel(row);
    const provider = this.options.providers.outbound(channel);
    context.provider = provider.name;
    if (!provider.markRead) return { kind: 'sent' };
    const opened = providerChannel(channel, this.options.sealer);
    const clean = withoutCredentials(opened);
    const outcome = await provider.markRead({ deliveryId: row.id, channel: opened, providerMessageId, ...(typing === true ? { typing } : {}) });
    if (outcome.kind === 'failed') return { kind: 'failed', reason: clean(`${outcome.code}: ${outcome.text}`).slice(0, 1000) };
    if (outcome.kind === 'retry') return { kind: 'retry', reason: clean(outcome.reason).slice(0, 1000) };
    return { kind: 'sent' };
  }

  /** One workspace event to one endpoint, signed with the endpoint's secret. */
  private async sendEvent(row: Claimed, context: Record<string, unknown>): Promise<Outcome> {
    if (!row.e_id) return { kind: 'sent' };
    const provider = this.options.providers.events;
    Object.assign(context, { endpointId: row.e_id, event: row.event_type, provider: provider.name });
    const secret = this.options.sealer ? this.options.sealer.open(row.e_secret!) : row.e_secret!;
    const failure = await provider.deliver({ deliveryId: row.id, url: row.e_url!, secret, body: JSON.stringify(row.payload) });
    return failure ? { kind: 'retry', reason: failure } : { kind: 'sent' };
  }

  /**
   * A stored inbound event: its messages and statuses applied (src/modules/inbound). A big event
   * (thousands of entries) may take longer than a lease: the lease is renewed while it runs, so
   * that no other worker takes up an event that is still being processed.
   */
  private async processInbound(row: Claimed, context: Record<string, unknown>): Promise<Outcome> {
    context.inboundEventId = row.inbound_event_id;
    if (!this.options.inbound) return { kind: 'retry', reason: 'this worker does not process inbound events' };
    const renewal = this.renewWhileRunning(row, context);
    try {
      await this.options.inbound(row.inbound_event_id!);
    } finally {
      renewal.stop();
    }
    return { kind: 'sent' };
  }

  /**
   * Renews this attempt's lease every third of it until stopped, only while the attempt still
   * holds it (released by stop(), taken over after a stall): then renewing ends.
   */
  private renewWhileRunning(row: Claimed, context: Record<string, unknown>): { stop(): void } {
    const { sql, logger, leaseMs } = this.options;
    const timer = setInterval(() => {
      sql<{ id: string }>(Prisma.sql`
        UPDATE deliveries SET locked_until = now() + ${leaseMs} * interval '1 millisecond', updated_at = now()
         WHERE id = ${row.id}::uuid AND locked_by = ${this.id} AND attempts = ${row.attempts} AND status = 'pending'
        RETURNING id`).then(
        (renewed) => {
          if (!renewed.length) clearInterval(timer);
        },
        (error: unknown) => logger.warn({ ...context, err: describeError(error) }, 'could not renew the lease of an inbound event being processed'),
      );
    }, Math.max(10, Math.floor(leaseMs / 3)));
    return { stop: () => clearInterval(timer) };
  }

  /**
   * An attempt not counted against the delivery's attempts (docs/broadcasts.md#rate-limit-answers).
   * A rate-limit answer, in one transaction under the channel's `channel_pacing` row lock shared by
   * every process: the channel's rate halved and the provider's Retry-After recorded (afterRateLimit);
   * the messages owed on the channel — this one first, then every pending one due before the
   * channel's next turn that no worker holds — spread out one turn of the halved rate apart from when
   * sending resumes, and the channel's next turn after them. A held message goes back to the queue,
   * due when the provider's wait ends. Either is recorded only while this attempt holds the lease.
   */
  private async uncounted(row: Claimed, outcome: Uncounted, context: Record<string, unknown>): Promise<void> {
    const { prisma, logger } = this.options;
    const own = Prisma.sql`id = ${row.id}::uuid AND locked_by = ${this.id} AND attempts = ${row.attempts} AND status = 'pending'`;
    if (outcome.kind === 'held') {
      const held = await this.options.sql(Prisma.sql`
        UPDATE deliveries SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1, run_at = ${outcome.until}::timestamptz, updated_at = now()
         WHERE ${own}
        RETURNING id`);
      logger.info({ ...context, channelId: row.c_id, until: outcome.until.toISOString(), recorded: held.length > 0 }, "message held: its channel's provider asked to wait");
      return;
    }
    deliveryAttempts.labels('message', 'retry').inc();
    const max = maxRatePerSecond({ provider: row.c_provider, maxRatePerSecond: row.c_max_rate }, this.options.providers.list);
    const slowed = await prisma.$transaction(async (tx) => {
      const sql = sqlOn(tx);
      await sql(Prisma.sql`INSERT INTO channel_pacing (channel_id) VALUES (${row.c_id}::uuid) ON CONFLICT DO NOTHING RETURNING 1`);
      const [pace] = await sql<PaceLimits & { now: Date; next_at: Date }>(Prisma.sql`
        SELECT now() AS now, next_at, limited_rate, limited_at, blocked_until FROM channel_pacing WHERE channel_id = ${row.c_id}::uuid FOR UPDATE`);
      // Retry-After read against the database's clock, which every process's pacing compares with.
      const now = new Date(pace!.now).getTime();
      const next = afterRateLimit(max, pace!, now, retryAfterMs(outcome.retryAfter, now));
      const turn = 1000 / next.limitedRate;
      const resumeAt = new Date(next.resumeAt);
      const horizon = new Date(Math.max(new Date(pace!.next_at).getTime(), next.resumeAt));
      const [spread] = await sql<{ moved: number }>(Prisma.sql`
        WITH owed AS (
          SELECT d.id, d.run_at FROM deliveries AS d JOIN messages AS m ON m.id = d.message_id
           WHERE m.channel_id = ${row.c_id}::uuid AND d.status = 'pending' AND d.run_at < ${horizon}::timestamptz
             AND (d.locked_until IS NULL OR d.locked_until < now()) AND d.id <> ${row.id}::uuid
             FOR UPDATE OF d SKIP LOCKED),
        turns AS (SELECT id, row_number() OVER (ORDER BY run_at, id) AS n FROM owed),
        moved AS (
          UPDATE deliveries AS d SET run_at = ${resumeAt}::timestamptz + turns.n * ${turn}::float8 * interval '1 millisecond', updated_at = now()
            FROM turns WHERE d.id = turns.id
          RETURNING 1)
        SELECT count(*)::int AS moved FROM moved`);
      const moved = spread?.moved ?? 0;
      await sql(Prisma.sql`
        UPDATE channel_pacing
           SET limited_rate = ${next.limitedRate}::float8, limited_at = ${new Date(next.limitedAt)}::timestamptz,
               blocked_until = ${next.blockedUntil === null ? null : new Date(next.blockedUntil)}::timestamptz,
               next_at = ${new Date(next.resumeAt + (moved + 1) * turn)}::timestamptz
         WHERE channel_id = ${row.c_id}::uuid
        RETURNING 1`);
      // This message first when sending resumes; the attempt is not counted.
      const [mine] = await sql<{ owned: number }>(Prisma.sql`
        WITH delivery AS (
          UPDATE deliveries
             SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1, last_error = ${outcome.reason}, run_at = ${resumeAt}::timestamptz, updated_at = now()
           WHERE ${own}
          RETURNING message_id),
        message AS (
          UPDATE messages SET last_error = ${outcome.reason}, delivery_attempts = ${row.attempts - 1}, updated_at = now()
           WHERE id IN (SELECT message_id FROM delivery)
          RETURNING 1)
        SELECT (SELECT count(*) FROM delivery)::int AS owned, (SELECT count(*) FROM message)::int AS messages`);
      return { ...next, moved, recorded: (mine?.owned ?? 0) > 0 };
    });
    logger.warn(
      {
        ...context,
        channelId: row.c_id,
        reason: outcome.reason,
        ratePerSecond: Math.round(slowed.limitedRate * 100) / 100,
        resumeAt: new Date(slowed.resumeAt).toISOString(),
        respaced: slowed.moved,
        recorded: slowed.recorded,
      },
      'rate limited by the provider: the channel slows down and the message is retried',
    );
  }

  /**
   * Records an outcome, only while this attempt still holds the lease: the row is
   * still claimed by this worker for this attempt's number, so neither another
   * worker's nor this worker's own later claim of the same row (after the lease ran
   * out) is overwritten by a late answer. A message's final outcome (sent or failed)
   * moves its status forward only — a provider's status may already have moved it
   * further — and a change of status is itself an event.
   */
  private async finish(row: Claimed, outcome: Outcome): Promise<boolean> {
    const { sql } = this.options;
    const delay = Math.min(this.options.maxBackoffMs ?? 3_600_000, this.options.backoffMs * 2 ** (row.attempts - 1));
    const retryIn = Math.round(delay * (0.5 + Math.random() / 2));
    const reason = outcome.kind === 'sent' ? null : outcome.reason;
    const delivery = Prisma.sql`
      UPDATE deliveries
         SET status = ${outcome.kind === 'sent' ? 'succeeded' : outcome.kind === 'failed' ? 'failed' : 'pending'}::delivery_status,
             locked_by = NULL,
             locked_until = NULL,
             last_error = ${reason},
             run_at = CASE WHEN ${outcome.kind === 'retry'} THEN now() + ${retryIn} * interval '1 millisecond' ELSE run_at END,
             updated_at = now()
       WHERE id = ${row.id}::uuid AND locked_by = ${this.id} AND attempts = ${row.attempts} AND status = 'pending'
      RETURNING id`;
    if (!row.message_id) return (await sql(delivery)).length > 0;
    // One statement: the delivery while this attempt holds it, then the message under its row lock
    // (as the lock found it, so that a status a provider reported meanwhile is moved past, never
    // back), then the status change's events from the updated row.
    const now = new Date();
    const next = outcome.kind === 'sent' ? Prisma.sql`'sent'` : outcome.kind === 'failed' ? Prisma.sql`'failed'` : Prisma.sql`before.status`;
    const failureReason = outcome.kind === 'failed' ? (outcome.failureReason ?? outcome.reason).slice(0, 1024) : null;
    const events = [{ type: 'message.status_changed' as const, data: Prisma.sql`changed.view` }];
    const [result] = await sql<{ owned: number; queued: number; conversation_id: string | null; channel_id: string | null; broadcast_id: string | null }>(Prisma.sql`
      WITH delivery AS (${delivery}),
      before AS (
        SELECT id, status FROM messages WHERE id = ${row.message_id}::uuid AND EXISTS (SELECT 1 FROM delivery) FOR UPDATE),
      message AS (
        UPDATE messages AS m
           SET status = CASE WHEN before.status = 'queued' THEN ${next}::message_status ELSE before.status END,
               sent_at = CASE WHEN ${outcome.kind === 'sent'} AND m.sent_at IS NULL THEN ${now}::timestamptz ELSE m.sent_at END,
               failed_at = CASE WHEN ${outcome.kind === 'failed'} AND before.status = 'queued' THEN ${now}::timestamptz ELSE m.failed_at END,
               failure_reason = CASE WHEN ${outcome.kind === 'failed'} AND before.status = 'queued' THEN ${failureReason} ELSE m.failure_reason END,
               delivery_attempts = ${row.attempts},
               last_error = ${reason},
               updated_at = now()
          FROM before
         WHERE m.id = before.id
        RETURNING m.*, m.status IS DISTINCT FROM before.status AS changed),
      changed AS (
        SELECT ${messageTable.sql('message')} AS view
          FROM message ${senderJoins('message')}
         WHERE message.changed),
      queued AS (${queueEventsSql(row.workspace_id, events, now, Prisma.sql`changed`)} RETURNING 1)
      SELECT (SELECT count(*) FROM delivery)::int AS owned, (SELECT count(*) FROM queued)::int AS queued,
             (SELECT conversation_id FROM message WHERE message.changed) AS conversation_id,
             (SELECT channel_id FROM message WHERE message.changed) AS channel_id,
             (SELECT broadcast_id FROM message WHERE message.changed) AS broadcast_id`);
    // The status change's events are due at once.
    if ((result?.queued ?? 0) > 0) this.nudge();
    // Committed (one statement): subscriptions hear of the new status.
    if (result?.conversation_id && result.channel_id) {
      this.options.events?.publish({
        type: 'message.updated',
        messageId: row.message_id,
        conversationId: result.conversation_id,
        workspaceId: row.workspace_id,
        channelId: result.channel_id,
        broadcastId: result.broadcast_id,
      });
    }
    return (result?.owned ?? 0) > 0;
  }
}
