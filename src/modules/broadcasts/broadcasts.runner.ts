import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import { Prisma, type Channel, type PrismaClient } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import { sqlOn } from '../../db/types.js';
import { describeError } from '../../errors/log.js';
import type { EventBus } from '../../context/services.js';
import { uuid7 } from '../../lib/uuid.js';
import { characterCount } from '../../lib/validation.js';
import type { ProviderDescriptor } from '../../providers/provider.js';
import { findProvider, maxRatePerSecond, PROVIDERS } from '../../providers/registry.js';
import { currentRate, type PaceLimits } from '../channels/pacing.js';
import { actorColumns, conversationForSend, type Actor } from '../conversations/conversations.service.js';
import { recordEvents, type QueuedEvent } from '../events/events.service.js';
import { MESSAGE_LIMITS, MESSAGES as MESSAGE_RULES } from '../messages/messages.schemas.js';
import { needsWindow, unreachable } from '../messages/messages.service.js';
import { messageTable, senderJoins } from '../messages/messages.sql.js';
import { queueEventsSql } from '../events/events.service.js';
import { renderTemplate } from '../templates/templates.schemas.js';
import { PLACEHOLDER } from './broadcasts.schemas.js';
import type { BroadcastMessage } from './broadcasts.service.js';
import { broadcastViewSql } from './broadcasts.sql.js';

export interface BroadcastRunnerOptions {
  prisma: PrismaClient;
  sql: RunSql;
  logger: Logger;
  /** Where subscriptions hear of the messages made (`message.created`). */
  events?: EventBus | undefined;
  /** Called when messages made become due: the delivery worker claims them at once. */
  onMessagesMade?: () => void;
  /** How often rounds run while a broadcast runs. */
  tickMs?: number;
  /** How far ahead a round makes messages, each due at its turn. */
  aheadMs?: number;
  /** How often an idle runner looks for broadcasts to start. */
  idleMs?: number;
  id?: string;
  /** The providers channels can have (default: every provider): what a channel's provider needs of a recipient, and its pace. */
  providers?: readonly ProviderDescriptor[];
}

/** Default `tickMs`. */
export const TICK_MS = 200;
/**
 * Default `aheadMs`: a round makes the messages of the next two seconds, each with its delivery due at
 * its own turn, so that a slow round (a busy database) never slows the pace, and the worker sends
 * each when its turn comes.
 */
export const AHEAD_MS = 2000;
const IDLE_MS = 500;
/** The most a round's first turn is put off for the time rounds take. */
const MAX_LEAD_MS = 3000;
/** How long after a round's last statement its first turn may come at the earliest: the commit, and the worker's claim. */
const COMMIT_MARGIN_MS = 100;
/** Wake-ups of the worker are grouped to this many milliseconds. */
const WAKE_GRAIN_MS = 5;
/** How often running broadcasts are checked for being done. */
const FINISH_CHECK_MS = 1000;

interface PaceRow extends PaceLimits {
  now: Date;
  next_at: Date;
}

interface RunningRow {
  id: string;
  workspace_id: string;
  rate_per_second: number;
  next_at: Date | null;
  message: BroadcastMessage;
  sender_user_id: string | null;
  sender_name: string | null;
}

/** A broadcast a statement changed, as subscriptions are told of it. */
interface ChangedBroadcast {
  id: string;
  workspace_id: string;
  channel_id: string;
}

interface ClaimedRecipient {
  contact_id: string;
  name: string;
  email: string | null;
  phone: string | null;
  is_group: boolean;
  in_window: boolean;
  opted_out: boolean;
}

/**
 * How many turns fall between `start` and `horizon` at `rate` a second (the first at `start`),
 * and when the turn after them is.
 */
function turns(start: number, horizon: number, rate: number): number {
  if (start > horizon) return 0;
  return Math.floor(((horizon - start) * rate) / 1000) + 1;
}

/** A template parameter with the recipient's {{contact.*}} filled in. */
function personalise(parameter: string, contact: ClaimedRecipient): string {
  return parameter.replace(PLACEHOLDER, (_, field: string) =>
    field === 'name' ? contact.name : field === 'email' ? (contact.email ?? '') : field === 'phoneNumber' ? (contact.phone ?? '') : '',
  );
}

/**
 * Makes broadcasts' messages at their channels' pace (docs/broadcasts.md). Every process runs one;
 * they share each channel's pace through its `channel_pacing` row, which a round holds locked
 * while it makes that channel's messages: turns are handed out one after another, whichever
 * process takes them. A round makes the messages whose turns fall within the next `tickMs`, each
 * an ordinary outbound message with its delivery, in the transaction that marks its recipient
 * made: a process killed mid-round made none of that round's messages, and no recipient gets two.
 */
export class BroadcastRunner {
  readonly id: string;
  private stopped = true;
  private nudged = true;
  private loopDone: Promise<void> = Promise.resolve();
  private wake: (() => void) | null = null;
  private lastFinishCheck = 0;
  private lastStartCheck = 0;
  /** How long this runner's last round of a channel took: the first turn of a round comes after it, never in the past. */
  private lastPaceMs = 100;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: BroadcastRunnerOptions) {
    this.id = options.id ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loopDone = this.loop();
  }

  /** Looks for work now rather than at the next idle poll (a broadcast was created or resumed). */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loopDone;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Wakes this process's delivery worker at `at` (epoch ms), when the messages due then are. */
  private wakeWorkerAt(at: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.options.onMessagesMade?.();
    }, Math.max(0, at - Date.now()));
    this.timers.add(timer);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let busy = false;
      try {
        busy = await this.round();
      } catch (error) {
        this.options.logger.warn({ err: describeError(error), runner: this.id }, 'broadcast round failed');
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, busy ? (this.options.tickMs ?? TICK_MS) : (this.options.idleMs ?? IDLE_MS));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** One round: due broadcasts started, each busy channel's turns taken, finished ones closed. Whether any broadcast runs. */
  async round(): Promise<boolean> {
    const { sql } = this.options;
    if (Date.now() - this.lastStartCheck >= (this.options.idleMs ?? IDLE_MS) || this.nudged) {
      this.nudged = false;
      this.lastStartCheck = Date.now();
      await this.startDue();
    }
    const channels = await sql<{ channel_id: string }>(Prisma.sql`SELECT DISTINCT channel_id FROM broadcasts WHERE finished_at IS NULL AND status = 'running'`);
    for (const { channel_id } of channels) await this.pace(channel_id);
    if (channels.length && Date.now() - this.lastFinishCheck >= FINISH_CHECK_MS) {
      this.lastFinishCheck = Date.now();
      await this.finishDone();
    }
    return channels.length > 0;
  }

  /** Tells subscriptions (broadcastUpdated) that these broadcasts changed, once the change committed. */
  private published(rows: readonly ChangedBroadcast[], ended: boolean): void {
    for (const row of rows) this.options.events?.publish({ type: 'broadcast.updated', broadcastId: row.id, workspaceId: row.workspace_id, channelId: row.channel_id, ended });
  }

  /** Scheduled broadcasts whose start time came are running, each with its `broadcast.started` event. */
  private async startDue(): Promise<void> {
    const started = await this.options.prisma.$transaction(async (tx) => {
      const rows = await sqlOn(tx)<ChangedBroadcast>(Prisma.sql`
        UPDATE broadcasts SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
         WHERE finished_at IS NULL AND status = 'scheduled' AND start_at <= now()
        RETURNING id, workspace_id, channel_id`);
      for (const row of rows) await recordEvents(tx, row.workspace_id, [{ type: 'broadcast.started', data: broadcastViewSql(row.id) }]);
      if (rows.length) this.options.logger.info({ runner: this.id, broadcasts: rows.map((row) => row.id) }, 'broadcasts started');
      return rows;
    });
    this.published(started, false);
  }

  /**
   * Running broadcasts with no recipient left to make a message for and no message of theirs
   * still queued are finished, each with its `broadcast.finished` event.
   */
  private async finishDone(): Promise<void> {
    const finished = await this.options.prisma.$transaction(async (tx) => {
      const rows = await sqlOn(tx)<ChangedBroadcast>(Prisma.sql`
        UPDATE broadcasts AS b SET status = 'finished', finished_at = now(), updated_at = now()
         WHERE b.finished_at IS NULL AND b.status = 'running'
           AND NOT EXISTS (SELECT 1 FROM broadcast_recipients AS r WHERE r.broadcast_id = b.id AND r.state = 'pending')
           AND NOT EXISTS (SELECT 1 FROM broadcast_recipients AS r JOIN messages AS m ON m.id = r.message_id
                            WHERE r.broadcast_id = b.id AND r.state = 'made' AND m.status = 'queued')
        RETURNING b.id, b.workspace_id, b.channel_id`);
      for (const row of rows) await recordEvents(tx, row.workspace_id, [{ type: 'broadcast.finished', data: broadcastViewSql(row.id) }]);
      if (rows.length) this.options.logger.info({ runner: this.id, broadcasts: rows.map((row) => row.id) }, 'broadcasts finished');
      return rows;
    });
    this.published(finished, true);
  }

  /**
   * One channel's round, in one transaction under its pacing row's lock: the turns due before the
   * horizon at the channel's current rate, shared out among its running broadcasts (each within
   * its own rate), their messages made. How many messages were made.
   */
  private async pace(channelId: string): Promise<number> {
    const { prisma, events } = this.options;
    const published: { messageId: string; conversationId: string; workspaceId: string; runAt: Date }[] = [];
    /** Broadcasts whose recipients this round failed or skipped: their counts changed without a message. */
    const marked: ChangedBroadcast[] = [];
    const began = Date.now();
    const made = await prisma.$transaction(
      async (tx) => {
        const sql = sqlOn(tx);
        await sql(Prisma.sql`INSERT INTO channel_pacing (channel_id) VALUES (${channelId}::uuid) ON CONFLICT DO NOTHING RETURNING 1`);
        const [pace] = await sql<PaceRow>(Prisma.sql`
          SELECT now() AS now, next_at, limited_rate, limited_at, blocked_until FROM channel_pacing WHERE channel_id = ${channelId}::uuid FOR UPDATE`);
        const channel = await tx.channel.findUnique({ where: { id: channelId } });
        if (!pace || !channel || channel.status !== 'active') return 0;
        const now = new Date(pace.now).getTime();
        if (pace.blocked_until && new Date(pace.blocked_until).getTime() > now) return 0;
        const rate = currentRate(maxRatePerSecond(channel, this.options.providers), pace, now);
        // Turns follow on from the last round's. When they have fallen behind (the first round, a
        // pause), they restart a little after `now`: as long after as the last round took to commit.
        const earliest = now + Math.min(this.lastPaceMs * 1.5, MAX_LEAD_MS);
        const next = new Date(pace.next_at).getTime();
        const start = next >= now ? next : earliest;
        const horizon = Math.max(now, earliest) + (this.options.aheadMs ?? AHEAD_MS);
        let left = turns(start, horizon, rate);
        if (left === 0) return 0;
        const running = await sql<RunningRow>(Prisma.sql`
          SELECT id, workspace_id, rate_per_second, next_at, message, sender_user_id, sender_name FROM broadcasts
           WHERE channel_id = ${channelId}::uuid AND finished_at IS NULL AND status = 'running'
           ORDER BY created_at, id
             FOR UPDATE`);
        let used = 0;
        /** The broadcasts this round made messages for. */
        const served: string[] = [];
        // The channel's next free turn, moved on by every message made in this round.
        let channelTurn = start;
        for (const broadcast of running) {
          if (left === 0) break;
          const own = Math.min(broadcast.rate_per_second, rate);
          const ownNext = broadcast.next_at ? new Date(broadcast.next_at).getTime() : 0;
          let turn = Math.max(ownNext >= now ? ownNext : earliest, channelTurn);
          if (turn > horizon) continue;
          const wanted = Math.min(left, turns(turn, horizon, own));
          // Each message is due at the later of the channel's and the broadcast's next turns.
          const due = () => {
            const at = Math.max(turn, channelTurn);
            turn = at + 1000 / own;
            channelTurn = at + 1000 / rate;
            return new Date(at);
          };
          const count = await this.makeMessages(tx, channel, broadcast, wanted, due, published, marked);
          if (count > 0) {
            await sql(Prisma.sql`UPDATE broadcasts SET next_at = ${new Date(turn)}::timestamptz WHERE id = ${broadcast.id}::uuid RETURNING 1`);
            served.push(broadcast.id);
          }
          left -= count;
          used += count;
        }
        if (used > 0) {
          // A round that took longer than its lead (a process's first round, a busy database) would
          // have handed out turns already past, all sent at once when it commits: its turns move on
          // together, the first just after the round ends, and the turns after them follow on.
          const first = Math.min(...published.map((message) => message.runAt.getTime()));
          const [clock] = await sql<{ late: number }>(Prisma.sql`
            SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 + ${COMMIT_MARGIN_MS}::float8 - ${first}::float8 AS late`);
          const late = Math.ceil(clock?.late ?? 0);
          if (late > 0) {
            const shift = Prisma.sql`${late}::float8 * interval '1 millisecond'`;
            await sql(Prisma.sql`
              UPDATE deliveries SET run_at = run_at + ${shift} WHERE message_id = ANY(${published.map((message) => message.messageId)}::uuid[]) RETURNING 1`);
            await sql(Prisma.sql`UPDATE broadcasts SET next_at = next_at + ${shift} WHERE id = ANY(${served}::uuid[]) RETURNING 1`);
            for (const message of published) message.runAt = new Date(message.runAt.getTime() + late);
            channelTurn += late;
            this.options.logger.info({ runner: this.id, channelId, lateMs: late, messages: published.length }, "broadcast round outlasted its lead: its turns moved on");
          }
          await sql(Prisma.sql`UPDATE channel_pacing SET next_at = ${new Date(channelTurn)}::timestamptz WHERE channel_id = ${channelId}::uuid RETURNING 1`);
        }
        return used;
      },
      { timeout: 30_000 },
    );
    if (made > 0) this.lastPaceMs = Date.now() - began;
    // Committed: subscriptions hear of the new messages, and this process's worker is woken at each one's turn.
    const wakes = new Set<number>();
    for (const { runAt, ...message } of published) {
      events?.publish({ type: 'message.created', ...message, channelId });
      events?.publish({ type: 'conversation.updated', conversationId: message.conversationId, workspaceId: message.workspaceId, channelId });
      wakes.add(Math.ceil(runAt.getTime() / WAKE_GRAIN_MS) * WAKE_GRAIN_MS);
    }
    for (const at of wakes) this.wakeWorkerAt(at);
    this.published(marked, false);
    return made;
  }

  /**
   * Up to `wanted` pending recipients of the broadcast, each given its message — an ordinary
   * outbound message on its conversation (chosen as for any send: docs/delivery.md), with its
   * delivery due at its turn and its events — or, when the channel cannot reach the contact,
   * failed with the reason. A handful of statements however many recipients: only a closed
   * conversation to reopen takes the one-by-one path, for its state change and event. How many
   * messages were made.
   */
  private async makeMessages(
    tx: Prisma.TransactionClient,
    channel: Channel,
    broadcast: RunningRow,
    wanted: number,
    due: () => Date,
    published: { messageId: string; conversationId: string; workspaceId: string; runAt: Date }[],
    marked: ChangedBroadcast[],
  ): Promise<number> {
    const sql = sqlOn(tx);
    const message = broadcast.message;
    const workspaceId = broadcast.workspace_id;
    const providers = this.options.providers ?? PROVIDERS;
    // As for any send, a provider not listed checks nothing of a recipient.
    const provider = findProvider(channel.provider, providers);
    const windowMs = provider ? needsWindow(provider, message.type) : null;
    const window = windowMs !== null;
    const windowSince = new Date(Date.now() - (windowMs ?? 0));
    const claimed = await sql<ClaimedRecipient>(Prisma.sql`
      SELECT r.contact_id, c.name, c.email, c.phone, c.is_group,
             ${window ? Prisma.sql`EXISTS (SELECT 1 FROM messages AS i WHERE i.contact_id = c.id AND i.channel_id = ${channel.id}::uuid
                                           AND i.direction = 'inbound' AND i.created_at > ${windowSince}::timestamptz)` : Prisma.sql`true`} AS in_window,
             EXISTS (SELECT 1 FROM contact_opt_outs AS o WHERE o.contact_id = c.id AND o.channel_id = ${channel.id}::uuid) AS opted_out
        FROM broadcast_recipients AS r JOIN contacts AS c ON c.id = r.contact_id
       WHERE r.broadcast_id = ${broadcast.id}::uuid AND r.state = 'pending'
       ORDER BY r.contact_id
       LIMIT ${wanted}
         FOR UPDATE OF r SKIP LOCKED`);
    if (!claimed.length) return 0;
    const template = message.template ? await tx.channelTemplate.findUnique({ where: { id: message.template.id } }) : null;
    const sender: Actor = broadcast.sender_user_id
      ? { type: 'user', id: broadcast.sender_user_id, name: broadcast.sender_name ?? '' }
      : { type: 'channel', id: channel.id, name: channel.name };
    const failed: { contact: string; reason: string }[] = [];
    const ready: { contact: string; body: string; parameters: string[] | null }[] = [];
    const skipped: string[] = [];
    for (const contact of claimed) {
      // A contact who opted out of the channel's bulk messages is skipped: no message is made (docs/broadcasts.md).
      if (contact.opted_out) {
        skipped.push(contact.contact_id);
        continue;
      }
      let reason =
        (provider ? unreachable(provider, { isGroup: contact.is_group, phone: contact.phone, email: contact.email }) : null) ??
        (contact.in_window || !provider || !windowMs ? null : MESSAGE_RULES.outsideWindow(provider.label, windowMs / 3600_000)) ??
        (message.template && (!template || template.status !== 'approved') ? MESSAGE_RULES.templateUnknown : null);
      let body = message.message ?? '';
      let parameters: string[] | null = null;
      if (!reason && message.template && template) {
        parameters = message.template.parameters.map((parameter) => personalise(parameter, contact));
        body = renderTemplate(template.body, parameters);
        if (characterCount(body) > MESSAGE_LIMITS.text) reason = MESSAGE_RULES.templateRenderedMax;
      }
      if (reason) failed.push({ contact: contact.contact_id, reason });
      else ready.push({ contact: contact.contact_id, body, parameters });
    }
    const at = new Date();
    const conversations = await this.conversationsFor(tx, channel, workspaceId, ready.map((r) => r.contact), message.silent, sender, at);
    const made = ready.map((recipient) => ({ ...recipient, id: uuid7(), conversationId: conversations.get(recipient.contact)!, runAt: due() }));
    if (made.length) {
      const events = [{ type: 'message.created' as const, data: Prisma.sql`views.view` }];
      await sql(Prisma.sql`
        WITH input AS (
          SELECT * FROM unnest(${made.map((m) => m.id)}::uuid[], ${made.map((m) => m.conversationId)}::uuid[], ${made.map((m) => m.contact)}::uuid[],
                               ${made.map((m) => m.body)}::text[], ${made.map((m) => (m.parameters ? JSON.stringify(m.parameters) : null))}::jsonb[],
                               ${made.map((m) => m.runAt)}::timestamptz[]) AS i(id, conversation_id, contact_id, body, parameters, run_at)),
        message AS (
          INSERT INTO messages (id, workspace_id, channel_id, conversation_id, contact_id, direction, type, body, is_encrypted, silent,
                                template_id, template_parameters, media_urls, sender_type, sender_channel_id, sender_user_id, sender_name,
                                status, broadcast_id, created_at, updated_at)
          SELECT i.id, ${workspaceId}::uuid, ${channel.id}::uuid, i.conversation_id, i.contact_id, 'outbound', ${message.type}::message_type, i.body,
                 ${message.is_encrypted}, ${message.silent}, ${template?.id ?? null}::uuid, i.parameters, '{}'::text[], ${sender.type}::actor_type,
                 ${sender.type === 'channel' ? sender.id : null}::uuid, ${sender.type === 'user' ? sender.id : null}::uuid, ${sender.name},
                 'queued', ${broadcast.id}::uuid, ${at}::timestamptz, ${at}::timestamptz
            FROM input AS i
          RETURNING *),
        delivery AS (
          INSERT INTO deliveries (id, workspace_id, message_id, run_at)
          SELECT gen_random_uuid(), ${workspaceId}::uuid, message.id, i.run_at FROM message JOIN input AS i ON i.id = message.id),
        conversation AS (
          UPDATE conversations AS cv SET last_message_at = ${at}::timestamptz, last_message_id = i.id, updated_at = ${at}::timestamptz
            FROM input AS i WHERE cv.id = i.conversation_id AND EXISTS (SELECT 1 FROM message WHERE message.id = i.id)),
        link AS (
          INSERT INTO contact_channels (contact_id, channel_id) SELECT contact_id, ${channel.id}::uuid FROM message
          ON CONFLICT DO NOTHING),
        views AS (SELECT ${messageTable.sql('message')} AS view FROM message ${senderJoins('message')}),
        queued AS (${queueEventsSql(workspaceId, events, at, Prisma.sql`views`)} RETURNING 1)
        SELECT (SELECT count(*) FROM message)::int AS made`);
      for (const m of made) published.push({ messageId: m.id, conversationId: m.conversationId, workspaceId, runAt: m.runAt });
    }
    const outcomes = [
      ...made.map((m) => ({ contact: m.contact, state: 'made', messageId: m.id as string | null, reason: null as string | null })),
      ...failed.map((f) => ({ contact: f.contact, state: 'failed', messageId: null, reason: f.reason })),
      ...skipped.map((contact) => ({ contact, state: 'skipped', messageId: null, reason: null })),
    ];
    await sql(Prisma.sql`
      UPDATE broadcast_recipients AS r SET state = v.state::broadcast_recipient_state, message_id = v.message_id, failure_reason = v.reason
        FROM unnest(${outcomes.map((o) => o.contact)}::uuid[], ${outcomes.map((o) => o.state)}::text[],
                    ${outcomes.map((o) => o.messageId)}::uuid[], ${outcomes.map((o) => o.reason)}::text[]) AS v(contact_id, state, message_id, reason)
       WHERE r.broadcast_id = ${broadcast.id}::uuid AND r.contact_id = v.contact_id
      RETURNING 1`);
    if (failed.length || skipped.length) marked.push({ id: broadcast.id, workspace_id: workspaceId, channel_id: channel.id });
    return made.length;
  }

  /**
   * Each contact's conversation for a send on the channel, locked: its open one; else its latest
   * closed one, kept closed when silent; else a new open one (with its `opened` state change) —
   * the rows found, locked and created in a few statements. A closed one to reopen, or a new one
   * that a concurrent send opened first, goes through the one-by-one choice (conversationForSend),
   * which records the reopening and its event.
   */
  private async conversationsFor(
    tx: Prisma.TransactionClient,
    channel: Channel,
    workspaceId: string,
    contacts: string[],
    silent: boolean,
    sender: Actor,
    at: Date,
  ): Promise<Map<string, string>> {
    const chosen = new Map<string, string>();
    if (!contacts.length) return chosen;
    const sql = sqlOn(tx);
    const latest = await sql<{ id: string; contact_id: string; status: 'open' | 'closed' }>(Prisma.sql`
      SELECT cv.id, cv.contact_id, cv.status::text AS status FROM conversations AS cv
       WHERE cv.id IN (
             SELECT DISTINCT ON (l.contact_id) l.id FROM conversations AS l
              WHERE l.channel_id = ${channel.id}::uuid AND l.contact_id = ANY(${contacts}::uuid[])
              ORDER BY l.contact_id, (l.status = 'open') DESC, l.created_at DESC, l.id DESC)
       ORDER BY cv.id
         FOR UPDATE`);
    const oneByOne: string[] = [];
    for (const row of latest) {
      if (row.status === 'open' || silent) chosen.set(row.contact_id, row.id);
      else oneByOne.push(row.contact_id);
    }
    const fresh = contacts.filter((contact) => !chosen.has(contact) && !oneByOne.includes(contact)).map((contact) => ({ contact, id: uuid7() }));
    if (fresh.length) {
      const actor = actorColumns(sender);
      const created = await sql<{ id: string; contact_id: string }>(Prisma.sql`
        WITH created AS (
          INSERT INTO conversations (id, workspace_id, channel_id, contact_id, status, last_message_at, created_at, updated_at)
          SELECT f.id, ${workspaceId}::uuid, ${channel.id}::uuid, f.contact_id, 'open', ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
            FROM unnest(${fresh.map((f) => f.id)}::uuid[], ${fresh.map((f) => f.contact)}::uuid[]) AS f(id, contact_id)
          ON CONFLICT DO NOTHING
          RETURNING id, contact_id),
        opened AS (
          INSERT INTO conversation_state_changes (id, conversation_id, type, actor_type, actor_channel_id, actor_user_id, actor_contact_id, actor_name, created_at)
          SELECT gen_random_uuid(), id, 'opened', ${actor.actorType}::actor_type, ${actor.actorChannelId}::uuid, ${actor.actorUserId}::uuid,
                 ${actor.actorContactId}::uuid, ${actor.actorName}, ${at}::timestamptz
            FROM created)
        SELECT id, contact_id FROM created`);
      for (const row of created) chosen.set(row.contact_id, row.id);
      for (const f of fresh) if (!chosen.has(f.contact)) oneByOne.push(f.contact);
    }
    for (const contact of oneByOne) {
      const events: QueuedEvent[] = [];
      const conversation = await conversationForSend(tx, { workspaceId, channelId: channel.id, contactId: contact, silent, actor: sender, at, events });
      if (events.length) await recordEvents(tx, workspaceId, events, at);
      chosen.set(contact, conversation.id);
    }
    return chosen;
  }
}
