import type { Conversation, ConversationStateChange, User } from '../../generated/prisma/client.js';
import { viewFields, viewTable } from '../../db/view.js';
import type { ActorView, ConversationView } from './conversations.schemas.js';

export type StateChangeRow = ConversationStateChange & { actorUser?: Pick<User, 'name'> | null };

export type ConversationRow = Conversation & { stateChanges: StateChangeRow[] };

/** Who made a state change; a user's current name wins over the name recorded then. */
export function stateChangeActor(
  change: Pick<StateChangeRow, 'actorType' | 'actorChannelId' | 'actorUserId' | 'actorContactId' | 'actorName' | 'actorUser'>,
): ActorView {
  return {
    type: change.actorType,
    id:
      change.actorType === 'channel'
        ? change.actorChannelId
        : change.actorType === 'user'
          ? change.actorUserId
          : change.actorType === 'contact'
            ? change.actorContactId
            : null,
    name: change.actorUser?.name ?? change.actorName,
  };
}

/** What the view reads of the rows beside a conversation: its state changes in order, each with its user's name. */
export const CONVERSATION_RELATIONS = {
  stateChanges: { orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }], include: { actorUser: { select: { name: true } } } },
};

const change = viewFields<StateChangeRow>();

/** A state change as a conversation's view lists it. */
const stateChangeTable = viewTable<StateChangeRow, ConversationView['stateChanges'][number]>({
  type: change.column('type'),
  at: change.timestamp('createdAt'),
  actor: change.derived(['actorType', 'actorChannelId', 'actorUserId', 'actorContactId', 'actorName', 'actorUser'], stateChangeActor, {
    relations: CONVERSATION_RELATIONS.stateChanges.include,
  }),
});

const field = viewFields<ConversationRow>();

/** The API view of a conversation with its history of state changes. */
export const conversationTable = viewTable<ConversationRow, ConversationView>({
  id: field.column('id'),
  status: field.column('status'),
  contactId: field.column('contactId'),
  channelId: field.column('channelId'),
  lastMessageAt: field.timestamp('lastMessageAt'),
  closedAt: field.timestamp('closedAt'),
  createdAt: field.timestamp('createdAt'),
  stateChanges: field.derived(['stateChanges'], (conversation) => conversation.stateChanges.map(stateChangeTable.view), {
    relations: CONVERSATION_RELATIONS,
  }),
});
