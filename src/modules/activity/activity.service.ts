import { Prisma } from '../../generated/prisma/client.js';
import type { RequestContext } from '../../context/types.js';
import { activeTraceparent } from '../../lib/tracing.js';
import { ForbiddenError, NotFoundError, ServiceUnavailableError, ValidationError } from '../../errors/domain.js';
import { parseInput } from '../../lib/validation.js';
import { isUuid } from '../../lib/uuid.js';
import { readableChannelIds } from '../../context/request.js';
import { REPLACING_PENDING_RECEIPT, findWorkspaceUser, getConversation, latestInboundSql } from '../conversations/conversations.service.js';
import { ACTIVITY_MESSAGES, reportActivitySchema } from './activity.schemas.js';
import type { ActivityEvent, ActivityUser } from '../../context/services.js';

/**
 * Who reports activity: a session's own user (`from` may name that user only: 403), or for a
 * backend credential the workspace user `from` names (required: 422 on `from`).
 */
async function reporter(ctx: RequestContext, from: string | null | undefined): Promise<ActivityUser> {
  const own = ctx.auth.credential.user;
  if (own) {
    const named = from?.trim().toLowerCase();
    if (named && named !== own.id && named !== own.email.toLowerCase()) throw new ForbiddenError(ACTIVITY_MESSAGES.fromOther);
    return { id: own.id, name: own.name };
  }
  if (!from) throw ValidationError.field('from', ACTIVITY_MESSAGES.fromRequired);
  const user = await findWorkspaceUser(ctx, from);
  if (!user) throw ValidationError.field('from', ACTIVITY_MESSAGES.fromUnknown);
  return { id: user.id, name: user.name };
}

/**
 * POST /conversations/{id}/activity: a user is typing in a conversation (or stopped). Told to the
 * conversation's `conversationActivity` subscribers on every process; nothing is stored.
 */
export async function reportActivity(ctx: RequestContext, conversationId: string, input: unknown): Promise<void> {
  const body = parseInput(reportActivitySchema, input);
  const conversation = await reportedConversation(ctx, conversationId);
  const user = await reporter(ctx, body.from);
  if (!ctx.presence) throw new ServiceUnavailableError();
  ctx.presence.reportTyping({ workspaceId: ctx.auth.workspace.id, conversationId: conversation.id, user, typing: body.typing });
  if (body.typing && conversation.showsTyping && (await queueTypingIndicator(ctx, conversation.id)) > 0) ctx.onMessageQueued?.();
}

/** The providers that can show a contact the team is typing: their names, and the setting that turns it on. */
function typingProviders(ctx: RequestContext): { names: string[]; settings: string[] } {
  const showing = ctx.providers.filter((provider) => provider.typingIndicator);
  return { names: showing.map((provider) => provider.name), settings: showing.map((provider) => provider.typingIndicator!.setting) };
}

/**
 * The conversation a report names, if the caller can read it (404 otherwise, as getConversation),
 * and whether its channel shows typing indicators, in one statement: a report on a channel that
 * shows none — every channel but a `whatsapp_cloud` one turned on — costs that statement alone.
 */
async function reportedConversation(ctx: RequestContext, id: string): Promise<{ id: string; showsTyping: boolean }> {
  const { names, settings } = typingProviders(ctx);
  const [row] = isUuid(id)
    ? await ctx.sql<{ id: string; shows_typing: boolean }>(Prisma.sql`
        SELECT c.id,
               EXISTS (SELECT 1 FROM unnest(${names}::text[], ${settings}::text[]) AS p(name, setting)
                        WHERE p.name = channel.provider AND channel.provider_settings ->> p.setting = 'on') AS shows_typing
          FROM conversations AS c
          JOIN channels AS channel ON channel.id = c.channel_id
         WHERE c.id = ${id.toLowerCase()}::uuid
           AND c.workspace_id = ${ctx.auth.workspace.id}::uuid
           AND c.channel_id = ANY(${readableChannelIds(ctx.auth)}::uuid[])`)
    : [];
  if (!row) throw new NotFoundError('Conversation');
  return { id: row.id, showsTyping: row.shows_typing };
}

/** How often a conversation's contact is shown a typing indicator at most: the indicator lasts 25 s. */
const TYPING_INDICATOR_EVERY_S = 20;

/**
 * Queues the typing indicator of a conversation whose channel shows one (a provider with
 * `typingIndicator`, its setting `on`: docs/inbox.md, "Typing on WhatsApp") — in the outbox, as
 * a read receipt naming the latest inbound message, with `typing`: it takes the conversation's
 * pending receipt if there is one (the indicator marks that message read too). At most one in any
 * TYPING_INDICATOR_EVERY_S per conversation, on every process alike (`typing_indicated_at`). The
 * channel's setting is read again here: one turned off since the conversation was read queues
 * nothing. The number of receipts queued.
 */
async function queueTypingIndicator(ctx: RequestContext, conversationId: string): Promise<number> {
  const { names, settings } = typingProviders(ctx);
  if (!names.length) return 0;
  return ctx.prisma.$executeRaw`
    WITH due AS (
      UPDATE conversations AS c
         SET typing_indicated_at = now()
        FROM channels AS channel
       WHERE c.id = ${conversationId}::uuid
         AND channel.id = c.channel_id
         AND EXISTS (SELECT 1 FROM unnest(${names}::text[], ${settings}::text[]) AS p(name, setting)
                      WHERE p.name = channel.provider AND channel.provider_settings ->> p.setting = 'on')
         AND (c.typing_indicated_at IS NULL OR c.typing_indicated_at <= now() - make_interval(secs => ${TYPING_INDICATOR_EVERY_S}))
      RETURNING c.id, c.workspace_id, c.channel_id)
    INSERT INTO deliveries (id, workspace_id, conversation_id, payload, trace_parent)
    SELECT gen_random_uuid(), due.workspace_id, due.id, json_build_object('message_id', latest.provider_id, 'typing', true), ${activeTraceparent()}::text
      FROM due
    ${latestInboundSql(Prisma.raw('due.id'), Prisma.raw('due.channel_id'))}
     WHERE latest.provider_id IS NOT NULL
    ${REPLACING_PENDING_RECEIPT}`;
}

/**
 * The activity of a conversation the caller can read: who is typing and who is viewing it. A
 * session's user counts as viewing while the stream is open; a backend credential only watches.
 */
export async function watchActivity(ctx: RequestContext, conversationId: string): Promise<AsyncIterableIterator<ActivityEvent>> {
  const conversation = await getConversation(ctx, conversationId, { select: { id: true } });
  if (!ctx.presence) throw new ServiceUnavailableError();
  const own = ctx.auth.credential.user;
  return ctx.presence.watch({ workspaceId: ctx.auth.workspace.id, conversationId: conversation.id, viewer: own ? { id: own.id, name: own.name } : null });
}
