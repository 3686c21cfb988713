import type { Channel, Contact, Prisma } from '../../generated/prisma/client.js';
import { sqlOn, type Db } from '../../db/types.js';
import type { RunSql } from '../../db/database.js';
import type { Columns, RowLoad } from '../../db/view.js';
import type { RequestContext } from '../../context/types.js';
import { readableChannelIds, startingChannel } from '../../context/request.js';
import { isLockTimeout, isUniqueViolation } from '../../db/errors.js';
import { ForbiddenError, ValidationError } from '../../errors/domain.js';
import { keysetOrder, keysetWhere, toPage, type Page, type PageRequest } from '../../lib/pagination.js';
import { deriveE164 } from '../../lib/phone.js';
import { isUuid, uuid7 } from '../../lib/uuid.js';
import { characterCount, parseInput } from '../../lib/validation.js';
import { renderTemplate } from '../templates/templates.schemas.js';
import { conversationForSend, type Actor } from '../conversations/conversations.service.js';
import type { WriteGuard } from '../idempotency/idempotency.service.js';
import type { QueuedEvent } from '../events/events.service.js';
import type { ProviderDescriptor } from '../../providers/provider.js';
import { MESSAGES, MESSAGE_LIMITS, type Recipient, messageFiltersSchema, sendMessageSchema, type SendMessageInput } from './messages.schemas.js';
import { chooseRecipient, resolveRecipient } from './recipients.js';
import { messagePage, messagePageIds, messageTable, storeMessage, type MessageRow, type Outgoing } from './messages.sql.js';

/** `from`: a workspace user's id or email, otherwise an external actor by that name; absent: the channel. */
async function resolveSender(tx: Db, workspaceId: string, channel: Channel, from: string | null | undefined): Promise<Actor> {
  if (!from) return channelSender(channel);
  const key = from.toLowerCase();
  const user = await tx.user.findFirst({ where: { workspaceId, ...(isUuid(key) ? { id: key } : { emailNormalized: key }) } });
  return user ? { type: 'user', id: user.id, name: user.name } : { type: 'external', id: null, name: from };
}

async function resolveContent(tx: Db, channel: Channel, input: SendMessageInput) {
  if (input.type === 'text') return { body: input.message!, templateId: null, templateParameters: undefined };
  const { name, language, parameters } = input.template!;
  const template = await tx.channelTemplate.findFirst({
    where: { channelId: channel.id, name, status: 'approved', ...(language ? { language } : {}) },
    orderBy: [{ language: 'asc' }],
  });
  if (!template) throw ValidationError.field('template.name', MESSAGES.templateUnknown);
  if (parameters.length !== template.parameterCount) {
    throw ValidationError.field('template.parameters', MESSAGES.templateParameterCount(template.parameterCount));
  }
  const body = renderTemplate(template.body, parameters);
  if (characterCount(body) > MESSAGE_LIMITS.text) throw ValidationError.field('template.parameters', MESSAGES.templateRenderedMax);
  return { body, templateId: template.id, templateParameters: parameters };
}

/** Attempts for a send that lost a race creating the same contact or conversation. */
const SEND_ATTEMPTS = 3;

/**
 * POST /messages (spec §4.2). Stores the message as `queued` and its delivery in
 * the same transaction (transactional outbox): a committed message is always
 * delivered, a rolled-back one never. Its events (a contact created for the
 * recipient, a conversation reopened, the message created) join the same outbox
 * in the same transaction.
 *
 * The common send — text from the channel to a contact's id that has an open
 * conversation on the channel — is one statement (with an idempotency key, one
 * statement between the key's claim and its answer). Anything else, or that
 * statement finding no open conversation, takes the full path in a transaction.
 */
export async function sendMessage(
  ctx: RequestContext,
  body: unknown,
  guard?: WriteGuard<MessageRow>,
  /** The channel to send on (GraphQL's `channelId`); else the acting channel (docs/inbox.md). */
  channelId?: string | null,
): Promise<MessageRow> {
  const channel = startingChannel(ctx.auth, channelId);
  const workspaceId = ctx.auth.workspace.id;
  const input = parseInput(sendMessageSchema, body);
  const { field, recipient } = chooseRecipient(input);
  // A session sends as its user, whom `from` may name and nobody else (docs/browser-apps.md).
  const asUser = sessionSender(ctx, input.from);
  const provider = ctx.providers.find((descriptor) => descriptor.name === channel.provider);
  // The one-statement path skips the recipient checks a provider needs: for a provider that needs nothing of a recipient only.
  const direct = provider && !provider.reaches && !provider.textWindowMs && input.type === 'text' && (!input.from || asUser) && 'contactId' in recipient ? recipient.contactId : null;

  for (let attempt = 1; ; attempt++) {
    try {
      const at = new Date();
      const outgoing = { id: uuid7(), workspaceId, channel, input, at, events: [] as QueuedEvent[] };
      const onOpenConversation = async (sql: RunSql, inline?: WriteGuard<MessageRow>) => {
        const stored = await storeMessage(
          sql,
          { ...outgoing, contactId: direct!, content: { body: input.message!, templateId: null, templateParameters: undefined }, sender: asUser ?? channelSender(channel) },
          { open: true },
          inline,
        );
        if (stored === 'taken') return inline!.replay();
        if (stored) inline?.answered(stored.row);
        return stored;
      };
      const sent =
        (direct ? await onOpenConversation(ctx.sql, guard).catch(inlineWaited) : null) ??
        (await ctx.prisma.$transaction(async (tx) => {
          await guard?.begin(tx);
          const sent = await sendInTransaction(tx, { ...outgoing, field, recipient, asUser, provider });
          await guard?.end(tx, sent.row);
          return sent;
        }));
      ctx.onMessageQueued?.();
      const ids = { conversationId: sent.row.conversationId, workspaceId, channelId: channel.id };
      ctx.events?.publish({ type: 'message.created', messageId: sent.row.id, ...ids });
      ctx.events?.publish({ type: 'conversation.updated', ...ids });
      return sent.row;
    } catch (error) {
      if (attempt < SEND_ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/**
 * The one-statement send waits for its conversation's lock as any send does, but at most 100 ms
 * for what it locks after it (a concurrent claim of its key, the contact's channel link): past
 * that it takes the transaction, which tells a request still in flight (409) from a slow one.
 */
function inlineWaited(error: unknown): null {
  if (isLockTimeout(error)) return null;
  throw error;
}

function channelSender(channel: Channel): Actor {
  return { type: 'channel', id: channel.id, name: channel.name };
}

/**
 * The sender of a session's message: its user, always. `from` may name that user (by id or
 * email), and nobody else: ForbiddenError. Null for a backend credential, whose `from` decides.
 */
function sessionSender(ctx: RequestContext, from: string | null | undefined): Actor | null {
  const user = ctx.auth.credential.user;
  if (!user) return null;
  const named = from?.trim().toLowerCase();
  if (named && named !== user.id && named !== user.email.toLowerCase()) {
    throw new ForbiddenError('A session sends as its own user: `from` may name that user only.');
  }
  return { type: 'user', id: user.id, name: user.name };
}

/** The full send: content, recipient and sender resolved, the conversation chosen and locked, then the message stored. */
async function sendInTransaction(
  tx: Prisma.TransactionClient,
  message: Omit<Outgoing, 'contactId' | 'content' | 'sender'> & { field: string; recipient: Recipient; asUser: Actor | null; provider: ProviderDescriptor | undefined },
): Promise<{ row: MessageRow; queued: number }> {
  const { workspaceId, channel, input, at, events, field, recipient, asUser, provider } = message;
  const content = await resolveContent(tx, channel, input);
  const contact = await resolveRecipient(tx, { workspaceId, field, recipient, events });
  if (provider) await checkReachable(tx, provider, channel, contact, field, input.type);
  const sender = asUser ?? (await resolveSender(tx, workspaceId, channel, input.from));
  const conversation = await conversationForSend(tx, { workspaceId, channelId: channel.id, contactId: contact.id, silent: input.silent, actor: sender, at, events });
  const { asUser: _, provider: __, ...outgoing } = message;
  const stored = await storeMessage(sqlOn(tx), { ...outgoing, contactId: contact.id, content, sender }, conversation);
  // The conversation was chosen and locked in this transaction, so the message was stored.
  return stored as { row: MessageRow; queued: number };
}

/**
 * Why the channel's provider cannot reach the contact (docs/providers.md, Outbound): a phone with
 * an E.164 form or an email, as the provider's descriptor says it needs, never a group; null when it can.
 */
export function unreachable(provider: Pick<ProviderDescriptor, 'label' | 'reaches'>, contact: Pick<Contact, 'isGroup' | 'phone' | 'email'>): string | null {
  const { label, reaches } = provider;
  if (!reaches) return null;
  if (contact.isGroup) return MESSAGES.recipientIsGroup(label);
  if (reaches === 'phone' && !contact.phone) return MESSAGES.recipientNeedsPhone(label);
  // A phone stored before numbers were checked may have no international form: the provider could not dial it.
  if (reaches === 'phone' && !deriveE164(contact.phone!)) return MESSAGES.recipientNeedsE164(label);
  if (reaches === 'email' && !contact.email) return MESSAGES.recipientNeedsEmail(label);
  return null;
}

/** How recently the contact must have written for a message of this type to go (the provider's text window, in ms), or null when it need not have. */
export function needsWindow(provider: Pick<ProviderDescriptor, 'textWindowMs'>, type: 'text' | 'template'): number | null {
  return provider.textWindowMs && type === 'text' ? provider.textWindowMs : null;
}

/**
 * A recipient the channel's provider cannot reach is the caller's error (docs/providers.md,
 * Outbound): a phone with an E.164 form or an email, as the provider needs, never a group; and on
 * a provider with a text window, a text needs the contact to have written on this channel within
 * it (templates always go).
 */
async function checkReachable(tx: Db, provider: ProviderDescriptor, channel: Channel, contact: Contact, field: string, type: SendMessageInput['type']): Promise<void> {
  const problem = unreachable(provider, contact);
  if (problem) throw ValidationError.field(field, problem);
  const windowMs = needsWindow(provider, type);
  if (!windowMs) return;
  const since = new Date(Date.now() - windowMs);
  const [recent] = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM messages
     WHERE contact_id = ${contact.id}::uuid AND channel_id = ${channel.id}::uuid AND direction = 'inbound' AND created_at > ${since}::timestamptz
     LIMIT 1`;
  if (!recent) throw ValidationError.field('type', MESSAGES.outsideWindow(provider.label, windowMs / 3600_000));
}

/**
 * What a page of messages reads: named columns, with the senders' names when `senders` (what the
 * view's sender reads), in one statement; or a Prisma query GraphQL planned for relations.
 */
export type MessageLoad = RowLoad<MessageRow> | { readonly columns: Columns<MessageRow>; readonly senders: true };

/** What GET /messages reads of each message: its view's columns and its sender's name. */
const MESSAGE_VIEW: MessageLoad = { columns: messageTable.columns, senders: true };

/** GET /messages: the messages of the acting channel (or, with none named, of every channel the credential can act as), newest first, with what `load` says; search never sees encrypted content. */
export async function listMessages(
  ctx: RequestContext,
  params: PageRequest & { filters: Record<string, string | undefined> },
  load: MessageLoad = MESSAGE_VIEW,
): Promise<Page<MessageRow>> {
  const channelIds = readableChannelIds(ctx.auth);
  const parsed = parseInput(messageFiltersSchema, params.filters);
  const filters = { conversationId: parsed.conversation_id?.toLowerCase(), contactId: parsed.contact_id?.toLowerCase(), search: parsed.search };
  if ('columns' in load) return toPage(await messagePage(ctx.sql, channelIds, filters, params, load.columns, 'senders' in load), params);
  const { conversationId, contactId } = filters;
  const ids = filters.search ? await messagePageIds(ctx.sql, channelIds, filters, params) : undefined;
  const rows = await ctx.prisma.message.findMany({
    ...load.query,
    where: ids
      ? { id: { in: ids } }
      : {
          AND: [
            { workspaceId: ctx.auth.workspace.id, channelId: channelIds.length === 1 ? channelIds[0]! : { in: channelIds } },
            conversationId ? { conversationId } : {},
            contactId ? { contactId } : {},
            keysetWhere(params),
          ],
        },
    orderBy: keysetOrder(params),
    take: params.limit + 1,
  });
  return toPage(rows as MessageRow[], params);
}
