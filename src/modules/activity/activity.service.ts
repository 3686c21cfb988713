import type { RequestContext } from '../../context/types.js';
import { ForbiddenError, ServiceUnavailableError, ValidationError } from '../../errors/domain.js';
import { parseInput } from '../../lib/validation.js';
import { findWorkspaceUser, getConversation } from '../conversations/conversations.service.js';
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
  const conversation = await getConversation(ctx, conversationId, { select: { id: true, channelId: true } });
  const user = await reporter(ctx, body.from);
  if (!ctx.presence) throw new ServiceUnavailableError();
  ctx.presence.reportTyping({ workspaceId: ctx.auth.workspace.id, conversationId: conversation.id, user, typing: body.typing });
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
