import { z } from 'zod';
import { uuidParam } from '../../lib/validation.js';
import { apiDateTime, apiUuid } from '../../rest/schemas.js';

/** GET /conversations filters (and the GraphQL `conversations` arguments). */
export const conversationFiltersSchema = z.object({
  status: z.enum(['open', 'closed'], { error: 'The status must be open or closed.' }).optional(),
  contact_id: uuidParam('contact_id'),
});

/** Who did something: the acting channel, a workspace user, a named external actor, or a contact (a reply). */
export const actorViewSchema = z
  .object({
    type: z.enum(['channel', 'user', 'external', 'contact']),
    id: apiUuid.nullable().meta({ description: "The channel's, user's or contact's id; null for an external actor." }),
    name: z.string().nullable(),
  })
  .meta({ id: 'Actor' });

export type ActorView = z.output<typeof actorViewSchema>;

/** The API view of a conversation with its history of state changes. */
export const conversationViewSchema = z
  .object({
    id: apiUuid,
    status: z.enum(['open', 'closed']),
    contactId: apiUuid,
    channelId: apiUuid,
    lastMessageAt: apiDateTime.nullable(),
    closedAt: apiDateTime.nullable(),
    createdAt: apiDateTime,
    stateChanges: z.array(z.object({ type: z.enum(['opened', 'closed', 'reopened']), at: apiDateTime, actor: actorViewSchema })),
  })
  .meta({ id: 'Conversation' });

export type ConversationView = z.output<typeof conversationViewSchema>;
