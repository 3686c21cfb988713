import type { AuthContext } from './types.js';
import type { DomainEvent, EventBus } from './services.js';
import { ChannelSelectionError, ValidationError } from '../errors/domain.js';
import { hostName } from '../lib/host.js';

/**
 * The workspace hostname of a request: the Host header lowercased without port
 * (X-Forwarded-Host's first entry instead when the server sits behind a trusted proxy).
 * No header, an empty one or one that is no valid host name reaches no workspace: null.
 */
export function requestHost(headers: Pick<Headers, 'get'>, trustProxy: boolean): string | null {
  const forwarded = trustProxy ? headers.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined;
  return hostName(forwarded || headers.get('host'));
}

export function bearerToken(headers: Pick<Headers, 'get'>): string | null {
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(headers.get('authorization') ?? '');
  return match?.[1] ?? null;
}

/** The acting channel, required by every operation except listing channels. */
export function actingChannel(auth: AuthContext) {
  if (!auth.channel) throw new ChannelSelectionError();
  return auth.channel;
}

/**
 * The channels whose conversations, messages and templates the caller reads and changes: the
 * acting channel when one was named (or the credential has only one), otherwise every channel the
 * credential can act as — an object's own channel then decides (docs/inbox.md).
 */
export function readableChannels(auth: AuthContext) {
  return auth.channel ? [auth.channel] : auth.channels;
}

/** The ids of `readableChannels`. */
export function readableChannelIds(auth: AuthContext): string[] {
  return readableChannels(auth).map((channel) => channel.id);
}

/**
 * The channels a subscription follows: `named` (a `channelId` argument), which must be one of the
 * readable channels — an error otherwise, never a stream that stays silent — else every readable
 * channel: a credential of several channels that named none follows all of them (docs/inbox.md).
 */
export function followedChannelIds(auth: AuthContext, named: string | null | undefined): string[] {
  const readable = readableChannelIds(auth);
  if (named == null) return readable;
  const wanted = named.toLowerCase();
  if (!readable.includes(wanted)) throw ValidationError.field('channelId', 'The channelId must be a channel this credential can act as.');
  return [wanted];
}

/** The channel an operation that starts something acts on: `named` (an input's channelId), else the acting channel. */
export function startingChannel(auth: AuthContext, named: string | null | undefined) {
  if (named == null) return actingChannel(auth);
  const wanted = named.toLowerCase();
  const channel = auth.channels.find((candidate) => candidate.id === wanted);
  if (!channel || (auth.channel && auth.channel.id !== channel.id)) throw ValidationError.field('channelId', 'The channelId must be a channel this credential can act as.');
  return channel;
}

/** The events a conversation's subscriptions hear: of one workspace, channel and conversation. */
type ConversationEventType = Extract<DomainEvent, { conversationId: string }>['type'];

/**
 * A subscription's events of `type` (docs/inbox.md): of the caller's workspace, of the channels it
 * follows (`followedChannelIds`: every channel the credential can act as, or the one `channelId`
 * names) and, when `conversationId` is given, of that conversation alone.
 */
export function conversationEvents<T extends ConversationEventType>(
  ctx: { auth: AuthContext; events?: EventBus | undefined },
  type: T,
  args: { channelId?: string | number | null | undefined; conversationId?: string | number | null | undefined },
) {
  const conversationId = args.conversationId == null ? null : String(args.conversationId).toLowerCase();
  const channelIds = new Set(followedChannelIds(ctx.auth, args.channelId == null ? null : String(args.channelId)));
  const workspaceId = ctx.auth.workspace.id;
  const accept = (event: Extract<DomainEvent, { conversationId: string }>) =>
    event.workspaceId === workspaceId && channelIds.has(event.channelId) && (conversationId === null || event.conversationId === conversationId);
  return ctx.events!.subscribe(type, accept as (event: Extract<DomainEvent, { type: T }>) => boolean);
}
