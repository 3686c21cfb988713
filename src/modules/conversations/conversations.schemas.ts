import { z } from 'zod';
import { uuidParam } from '../../lib/validation.js';
import { apiDateTime, apiUuid } from '../../rest/schemas.js';
import { messageViewSchema } from '../messages/messages.schemas.js';
import { actorViewSchema, type ActorView } from './actor.schemas.js';

export { actorViewSchema, type ActorView };

/** How a list of conversations is ordered: by creation (the default), or newest activity first. */
export const CONVERSATION_SORTS = ['created', 'last_message'] as const;
export type ConversationSort = (typeof CONVERSATION_SORTS)[number];

/** GET /conversations filters (and the GraphQL `conversations` arguments). */
export const conversationFiltersSchema = z.object({
  status: z.enum(['open', 'closed'], { error: 'The status must be open or closed.' }).optional(),
  contact_id: uuidParam('contact_id'),
  assignee: z
    .string()
    .trim()
    .min(1, 'The assignee must be a user id, a user email or none.')
    .max(255, 'The assignee must be a user id, a user email or none.')
    .optional()
    .meta({ description: 'A workspace user\'s id or email, or `none` for unassigned conversations.' }),
  unread: z.enum(['true', 'false'], { error: 'The unread filter must be true or false.' }).optional().meta({ description: '`true`: only conversations with unread inbound messages.' }),
  label: z.string().trim().min(1, 'The label must be 1 to 50 characters.').max(50, 'The label must be 1 to 50 characters.').optional(),
  search: z
    .string()
    .trim()
    .max(255, 'The search may be at most 255 characters.')
    .optional()
    .meta({ description: "Matches the contact's name, email or phone and the text of the conversation's messages (never encrypted content)." }),
  sort: z.enum(CONVERSATION_SORTS, { error: 'The sort must be created or last_message.' }).optional().meta({ description: '`created` (default): newest conversation first; `last_message`: newest activity first.' }),
  channel_id: uuidParam('channel_id').meta({ description: 'One of the channels the credential can act as; without it (and without X-Channel-Uuid) every one of them.' }),
});

export type ConversationFilters = z.output<typeof conversationFiltersSchema>;

export const LABEL_LIMITS = { length: 50, perConversation: 20 } as const;

const LABEL_LENGTH = `A label must be 1 to ${LABEL_LIMITS.length} characters.`;

/** A label as stored: trimmed, lowercased, 1–50 characters. */
const labelSchema = z
  .string({ error: 'Each label must be a string.' })
  .transform((value) => value.trim().toLowerCase())
  .refine((value) => Array.from(value).length >= 1 && Array.from(value).length <= LABEL_LIMITS.length, LABEL_LENGTH);

/** POST /conversations/{id}/assign */
export const assignConversationSchema = z.object(
  {
    user: z
      .string({ error: 'The user must be a workspace user id or email, or null.' })
      .trim()
      .min(1, 'The user must be a workspace user id or email, or null.')
      .max(255, 'The user must be a workspace user id or email, or null.')
      .nullable()
      .meta({ description: "A workspace user's id or email; null unassigns." }),
  },
  { error: 'The body must be a JSON object.' },
);

/** POST /conversations/{id}/read */
export const markReadSchema = z
  .object(
    {
      through: z
        .string({ error: 'The through field must be a message id.' })
        .nullish()
        .meta({ description: "The message read up to (a message of this conversation); default the latest message." }),
    },
    { error: 'The body must be a JSON object.' },
  )
  .optional();

/** POST /conversations/{id}/labels */
export const updateLabelsSchema = z.object(
  {
    add: z.array(labelSchema, { error: 'The add field must be a list of labels.' }).nullish(),
    remove: z.array(labelSchema, { error: 'The remove field must be a list of labels.' }).nullish(),
  },
  { error: 'The body must be a JSON object.' },
);

/** Who a conversation is assigned to. */
export const assigneeViewSchema = z.object({ id: apiUuid, name: z.string(), email: z.string() }).meta({ id: 'Assignee' });

const STATE_CHANGE_TYPES = ['opened', 'closed', 'reopened', 'assigned', 'unassigned'] as const;

/** What the conversation view's fields mean, on both transports (the OpenAPI document and the GraphQL schema). */
export const CONVERSATION_FIELDS = {
  labels: 'Lowercased, sorted.',
  unreadCount: 'Inbound messages after lastReadAt.',
  assignedToMe: "Whether the conversation is assigned to the caller's user (a session's); false for backend credentials.",
} as const;

/** The API view of a conversation with its history of state changes. */
export const conversationViewSchema = z
  .object({
    id: apiUuid,
    status: z.enum(['open', 'closed']),
    contactId: apiUuid,
    channelId: apiUuid,
    assignee: assigneeViewSchema.nullable(),
    labels: z.array(z.string()).meta({ description: CONVERSATION_FIELDS.labels }),
    unreadCount: z.number().int().meta({ description: CONVERSATION_FIELDS.unreadCount }),
    lastReadAt: apiDateTime.nullable(),
    lastMessage: messageViewSchema.nullable(),
    lastMessageAt: apiDateTime.nullable(),
    closedAt: apiDateTime.nullable(),
    createdAt: apiDateTime,
    stateChanges: z.array(z.object({ type: z.enum(STATE_CHANGE_TYPES), at: apiDateTime, actor: actorViewSchema })),
  });

export type ConversationView = z.output<typeof conversationViewSchema>;

/**
 * The conversation as the REST API answers it to a caller: the view, and whether it is assigned
 * to the caller's user (a session's; false for backend credentials). Events carry the view alone.
 */
export const conversationApiViewSchema = conversationViewSchema
  .extend({
    assignedToMe: z.boolean().meta({ description: CONVERSATION_FIELDS.assignedToMe }),
  })
  .meta({ id: 'Conversation' });

