import { Prisma, type Channel } from '../../generated/prisma/client.js';
import type { RequestContext } from '../../context/types.js';
import { actingChannel } from '../../context/request.js';
import { sqlOn } from '../../db/types.js';
import { keysetSql } from '../../db/keyset.js';
import { NotFoundError, ValidationError } from '../../errors/domain.js';
import { toPage, type Page, type PageRequest } from '../../lib/pagination.js';
import { isUuid, uuid7 } from '../../lib/uuid.js';
import { parseInput } from '../../lib/validation.js';
import { maxRatePerSecond } from '../../providers/registry.js';
import { recordEvents } from '../events/events.service.js';
import type { WriteGuard } from '../idempotency/idempotency.service.js';
import { findWorkspaceUser } from '../conversations/conversations.service.js';
import { MESSAGES as MESSAGE_RULES } from '../messages/messages.schemas.js';
import {
  BROADCAST_MESSAGES,
  MAX_RECIPIENTS,
  createBroadcastSchema,
  recipientFiltersSchema,
  type CreateBroadcastInput,
  type RecipientView,
} from './broadcasts.schemas.js';
import { RECIPIENT_STATUS_SQL, broadcastById, broadcastColumns, broadcastViewSql, type BroadcastRow } from './broadcasts.sql.js';

/** The message a broadcast makes for each recipient, as stored with it. */
export interface BroadcastMessage {
  type: 'text' | 'template';
  message?: string;
  template?: { id: string; name: string; language: string; parameters: string[] };
  is_encrypted: boolean;
  silent: boolean;
}

/** The channels a caller's broadcasts may be on: the acting one, or every one a multi-channel credential can act as. */
function visibleChannels(ctx: RequestContext): string[] {
  return (ctx.auth.channel ? [ctx.auth.channel] : ctx.auth.channels).map((channel) => channel.id);
}

/** The channel a new broadcast sends on: `channel_id` among those the credential can act as, else the acting channel. */
function broadcastChannel(ctx: RequestContext, channelId: string | undefined): Channel {
  if (!channelId) return actingChannel(ctx.auth);
  const wanted = channelId.trim().toLowerCase();
  const channel = ctx.auth.channels.find((candidate) => candidate.id === wanted);
  if (!channel) throw ValidationError.field('channel_id', BROADCAST_MESSAGES.channel);
  return channel;
}

/** The template a broadcast names: approved on its channel, with as many parameters as it takes. */
async function broadcastTemplate(tx: Prisma.TransactionClient, channelId: string, input: CreateBroadcastInput['message']): Promise<BroadcastMessage['template']> {
  if (input.type !== 'template' || !input.template) return undefined;
  const { name, language, parameters } = input.template;
  const template = await tx.channelTemplate.findFirst({
    where: { channelId, name, status: 'approved', ...(language ? { language } : {}) },
    orderBy: [{ language: 'asc' }],
  });
  if (!template) throw ValidationError.field('message.template.name', MESSAGE_RULES.templateUnknown);
  if (parameters.length !== template.parameterCount) {
    throw ValidationError.field('message.template.parameters', MESSAGE_RULES.templateParameterCount(template.parameterCount));
  }
  return { id: template.id, name: template.name, language: template.language, parameters };
}

/**
 * Stores the recipients of a broadcast in one statement, from a list of contact ids or from the
 * conversations the filters keep: how many were stored. Unknown contacts are listed in the 422
 * and nothing is stored.
 */
async function storeRecipients(ctx: RequestContext, tx: Prisma.TransactionClient, broadcastId: string, channelId: string, input: CreateBroadcastInput): Promise<number> {
  const workspaceId = ctx.auth.workspace.id;
  const sql = sqlOn(tx);
  const { contacts, conversations } = input.audience;
  if (contacts) {
    const [stored] = await sql<{ stored: number; unknown: string[] }>(Prisma.sql`
      WITH wanted AS (SELECT DISTINCT id FROM unnest(${contacts}::uuid[]) AS wanted(id)),
      known AS (
        SELECT w.id FROM wanted AS w JOIN contacts AS c ON c.id = w.id AND c.workspace_id = ${workspaceId}::uuid AND c.deleted_at IS NULL),
      stored AS (
        INSERT INTO broadcast_recipients (broadcast_id, contact_id)
        SELECT ${broadcastId}::uuid, id FROM known WHERE (SELECT count(*) FROM known) = (SELECT count(*) FROM wanted)
        RETURNING 1)
      SELECT (SELECT count(*) FROM stored)::int AS stored,
             ARRAY(SELECT w.id::text FROM wanted AS w WHERE NOT EXISTS (SELECT 1 FROM known AS k WHERE k.id = w.id) ORDER BY w.id LIMIT 1000) AS unknown`);
    if (stored!.unknown.length) throw ValidationError.field('audience.contacts', BROADCAST_MESSAGES.contactsUnknown(stored!.unknown));
    return stored!.stored;
  }
  const filters = conversations!;
  let assigneeId: string | null | undefined;
  if (filters.assignee !== undefined) {
    if (filters.assignee.toLowerCase() === 'none') assigneeId = null;
    else {
      const user = isUuid(filters.assignee) ? { id: filters.assignee.toLowerCase() } : await findWorkspaceUser(ctx, filters.assignee);
      if (!user) throw ValidationError.field('audience.conversations.assignee', 'The assignee must be a user of this workspace (id or email), or none.');
      assigneeId = user.id;
    }
  }
  const where = [
    Prisma.sql`cv.channel_id = ${channelId}::uuid AND cv.workspace_id = ${workspaceId}::uuid`,
    filters.status ? Prisma.sql`cv.status = ${filters.status}::conversation_status` : null,
    filters.label ? Prisma.sql`cv.labels @> ARRAY[${filters.label.toLowerCase()}]::text[]` : null,
    assigneeId === null ? Prisma.sql`cv.assignee_id IS NULL` : assigneeId ? Prisma.sql`cv.assignee_id = ${assigneeId}::uuid` : null,
    filters.unread ? Prisma.sql`cv.unread_count > 0` : null,
  ].filter((part): part is Prisma.Sql => part !== null);
  const [stored] = await sql<{ stored: number }>(Prisma.sql`
    WITH stored AS (
      INSERT INTO broadcast_recipients (broadcast_id, contact_id)
      SELECT DISTINCT ${broadcastId}::uuid, cv.contact_id
        FROM conversations AS cv JOIN contacts AS c ON c.id = cv.contact_id AND c.deleted_at IS NULL
       WHERE ${Prisma.join(where, ' AND ')}
       LIMIT ${MAX_RECIPIENTS + 1}
      RETURNING 1)
    SELECT count(*)::int AS stored FROM stored`);
  if (stored!.stored > MAX_RECIPIENTS) throw ValidationError.field('audience', BROADCAST_MESSAGES.audienceMax);
  return stored!.stored;
}

/**
 * POST /broadcasts: the broadcast and its recipients stored in one transaction (recipients in one
 * statement however many), scheduled to start at `start_at` (default now). Its messages are made
 * later, at the channel's pace, by the broadcast runner.
 */
export async function createBroadcast(ctx: RequestContext, body: unknown, guard?: WriteGuard<BroadcastRow>): Promise<BroadcastRow> {
  const input = parseInput(createBroadcastSchema, body);
  const workspaceId = ctx.auth.workspace.id;
  const acting = broadcastChannel(ctx, input.channel_id);
  const user = ctx.auth.credential.user;
  const id = uuid7();
  return ctx.prisma.$transaction(
    async (tx) => {
      await guard?.begin(tx);
      // The channel's rate as stored now (channel:configure may have changed it since the credential was cached).
      const channel = await tx.channel.findFirstOrThrow({ where: { id: acting.id, workspaceId } });
      const max = maxRatePerSecond(channel, ctx.providers);
      const rate = input.rate_per_second ?? max;
      if (rate > max) throw ValidationError.field('rate_per_second', BROADCAST_MESSAGES.rateMax(max));
      const template = await broadcastTemplate(tx, channel.id, input.message);
      const message: BroadcastMessage = {
        type: input.message.type,
        ...(input.message.type === 'text' ? { message: input.message.message! } : {}),
        ...(template ? { template } : {}),
        is_encrypted: input.message.is_encrypted,
        silent: input.message.silent,
      };
      const startAt = input.start_at ? new Date(input.start_at) : new Date();
      await tx.broadcast.create({
        data: {
          id,
          workspaceId,
          channelId: channel.id,
          name: input.name,
          ratePerSecond: rate,
          message: message as unknown as Prisma.InputJsonValue,
          senderUserId: user?.id ?? null,
          senderName: user?.name ?? null,
          total: 0,
          startAt,
        },
      });
      const total = await storeRecipients(ctx, tx, id, channel.id, input);
      if (total === 0) throw ValidationError.field('audience', BROADCAST_MESSAGES.audienceEmpty);
      await tx.broadcast.update({ where: { id }, data: { total } });
      const row = (await broadcastById(sqlOn(tx), workspaceId, id))!;
      await guard?.end(tx, row);
      return row;
    },
    { timeout: 30_000 },
  );
}

/** A broadcast on a channel the caller can see, or NotFound (malformed ids included). */
export async function getBroadcast(ctx: RequestContext, id: string): Promise<BroadcastRow> {
  const row = isUuid(id) ? await broadcastById(ctx.sql, ctx.auth.workspace.id, id.toLowerCase()) : undefined;
  if (!row || !visibleChannels(ctx).includes(row.channelId)) throw new NotFoundError('Broadcast');
  return row;
}

/** GET /broadcasts: the broadcasts of the channels the caller can see, newest first. */
export async function listBroadcasts(ctx: RequestContext, page: PageRequest): Promise<Page<BroadcastRow>> {
  const keyset = keysetSql(page, 'b');
  const rows = await ctx.sql<BroadcastRow>(Prisma.sql`
    SELECT ${broadcastColumns()} FROM broadcasts AS b
     WHERE b.workspace_id = ${ctx.auth.workspace.id}::uuid AND b.channel_id = ANY(${visibleChannels(ctx)}::uuid[]) ${keyset.bounds}
     ORDER BY ${keyset.order}
     LIMIT ${page.limit + 1}`);
  return toPage(rows, page);
}

/** A page of recipients: ordered by contact id, continued after `cursor` (the last contact id, opaque). */
export interface RecipientPage {
  items: RecipientView[];
  nextCursor: string | null;
  hasMore: boolean;
  perPage: number;
}

const RECIPIENT_CURSOR_INVALID = 'The cursor is invalid.';

function recipientCursor(value: string | undefined): string | null {
  if (!value) return null;
  const id = Buffer.from(value, 'base64url').toString('utf8');
  if (!isUuid(id) || Buffer.from(id).toString('base64url') !== value) throw ValidationError.field('cursor', RECIPIENT_CURSOR_INVALID);
  return id;
}

/** GET /broadcasts/{id}/recipients: keyset pages over the recipients' primary key, optionally of one status. */
export async function listRecipients(ctx: RequestContext, id: string, params: { limit: number; cursor?: string | undefined; status?: string | undefined }): Promise<RecipientPage> {
  const broadcast = await getBroadcast(ctx, id);
  const { status } = parseInput(recipientFiltersSchema, { status: params.status });
  const after = recipientCursor(params.cursor);
  const rows = await ctx.sql<RecipientView>(Prisma.sql`
    SELECT * FROM (
      SELECT r.contact_id AS "contactId", r.message_id AS "messageId", ${RECIPIENT_STATUS_SQL} AS status,
             coalesce(r.failure_reason, m.failure_reason) AS "failureReason"
        FROM broadcast_recipients AS r LEFT JOIN messages AS m ON m.id = r.message_id
       WHERE r.broadcast_id = ${broadcast.id}::uuid ${after ? Prisma.sql`AND r.contact_id > ${after}::uuid` : Prisma.empty}
       ORDER BY r.contact_id) AS page
     ${status ? Prisma.sql`WHERE page.status = ${status}` : Prisma.empty}
     LIMIT ${params.limit + 1}`);
  const hasMore = rows.length > params.limit;
  const items = hasMore ? rows.slice(0, params.limit) : rows;
  return { items, hasMore, perPage: params.limit, nextCursor: hasMore ? Buffer.from(items[items.length - 1]!.contactId).toString('base64url') : null };
}

type Action = 'pause' | 'resume' | 'cancel';

const ACTION_WORDS: Record<Action, string> = { pause: 'paused', resume: 'resumed', cancel: 'canceled' };

/**
 * POST /broadcasts/{id}/pause|resume|cancel. Pausing stops new messages (those already made go
 * on); resuming carries on from the next pending recipient; canceling skips every recipient whose
 * message is not made yet, and ends the broadcast. Repeating what is already so changes nothing.
 */
export async function changeBroadcast(ctx: RequestContext, id: string, action: Action): Promise<BroadcastRow> {
  const broadcast = await getBroadcast(ctx, id);
  const workspaceId = ctx.auth.workspace.id;
  const from: Record<Action, BroadcastRow['status'][]> = {
    pause: ['scheduled', 'running', 'paused'],
    resume: ['paused', 'scheduled', 'running'],
    cancel: ['scheduled', 'running', 'paused', 'canceled'],
  };
  if (!from[action].includes(broadcast.status)) throw ValidationError.field('status', BROADCAST_MESSAGES.transition(ACTION_WORDS[action], broadcast.status));
  await ctx.prisma.$transaction(async (tx) => {
    const sql = sqlOn(tx);
    // Under the broadcast's row lock, which the runner also takes: no message is made for a recipient after it is skipped.
    const [locked] = await sql<{ status: BroadcastRow['status'] }>(Prisma.sql`SELECT status::text AS status FROM broadcasts WHERE id = ${broadcast.id}::uuid FOR UPDATE`);
    if (!locked || !from[action].includes(locked.status)) throw ValidationError.field('status', BROADCAST_MESSAGES.transition(ACTION_WORDS[action], locked?.status ?? broadcast.status));
    if (action === 'pause' && locked.status !== 'paused') {
      await sql(Prisma.sql`UPDATE broadcasts SET status = 'paused', updated_at = now() WHERE id = ${broadcast.id}::uuid RETURNING id`);
    } else if (action === 'resume' && locked.status === 'paused') {
      // Back to running once it has started, or to waiting for its start time.
      await sql(Prisma.sql`
        UPDATE broadcasts SET status = CASE WHEN started_at IS NULL THEN 'scheduled'::broadcast_status ELSE 'running'::broadcast_status END, updated_at = now()
         WHERE id = ${broadcast.id}::uuid RETURNING id`);
    } else if (action === 'cancel' && locked.status !== 'canceled') {
      await sql(Prisma.sql`UPDATE broadcast_recipients SET state = 'skipped' WHERE broadcast_id = ${broadcast.id}::uuid AND state = 'pending' RETURNING 1`);
      await sql(Prisma.sql`UPDATE broadcasts SET status = 'canceled', finished_at = now(), updated_at = now() WHERE id = ${broadcast.id}::uuid RETURNING id`);
      await recordEvents(tx, workspaceId, [{ type: 'broadcast.finished', data: broadcastViewSql(broadcast.id) }]);
    }
  });
  if (action === 'resume') ctx.onBroadcastQueued?.();
  // Committed: subscriptions (broadcastUpdated) hear of it; a cancel is the broadcast's last change.
  ctx.events?.publish({ type: 'broadcast.updated', broadcastId: broadcast.id, workspaceId, channelId: broadcast.channelId, ended: action === 'cancel' });
  return (await broadcastById(ctx.sql, workspaceId, broadcast.id))!;
}
