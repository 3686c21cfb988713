import { z } from 'zod';
import { isUuid } from '../../lib/uuid.js';
import { characterCount, isRecord, withoutNulls } from '../../lib/validation.js';
import { apiDateTime, apiUuid } from '../../rest/schemas.js';
import { MESSAGE_LIMITS, MESSAGES as MESSAGE_RULES, templateSchema } from '../messages/messages.schemas.js';

/** At most this many recipients a broadcast (docs/broadcasts.md). */
export const MAX_RECIPIENTS = 100_000;

/** The body limit of POST /broadcasts: a list of 100,000 contact ids fits with room to spare. */
export const BROADCAST_BODY_LIMIT = 8 * 1024 * 1024;

export const BROADCAST_MESSAGES = {
  body: 'The request body must be a JSON object.',
  name: 'The name must be 1 to 255 characters.',
  audience: 'The audience must be {"contacts": [ids]} or {"conversations": {filters}}.',
  contacts: `The contacts must be a list of 1 to ${MAX_RECIPIENTS} contact UUIDs.`,
  contactsUnknown: (ids: string[]) =>
    `These contacts do not exist in this workspace: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ` and ${ids.length - 20} more` : ''}.`,
  conversations: 'The conversations filters must be an object with status, label, assignee or unread.',
  audienceEmpty: 'The audience has no contacts.',
  audienceMax: `A broadcast reaches at most ${MAX_RECIPIENTS} contacts.`,
  message: 'The message must be {"type":"text","message"} or {"type":"template","template"}.',
  rate: 'The rate_per_second must be a whole number of at least 1.',
  rateMax: (max: number) => `The rate_per_second must not be greater than the channel's ${max} messages a second.`,
  startAt: 'The start_at must be an ISO-8601 date and time.',
  channel: 'The channel_id must be a channel this credential can act as.',
  placeholders: 'Template parameters may use {{contact.name}}, {{contact.email}} and {{contact.phoneNumber}} only.',
  status: 'The status must be pending, sent, delivered, read, failed or skipped.',
  transition: (action: string, status: string) => `A ${status} broadcast cannot be ${action}.`,
} as const;

/** What a template parameter may ask of each recipient. */
export const PLACEHOLDER = /\{\{\s*contact\.(\w+)\s*\}\}/g;
export const PLACEHOLDER_FIELDS = ['name', 'email', 'phoneNumber'] as const;

const conversationsAudience = z.preprocess(
  (value) => (isRecord(value) ? withoutNulls(value) : value),
  z.object(
    {
      status: z.enum(['open', 'closed'], { error: 'The status must be open or closed.' }).optional(),
      label: z.string({ error: 'The label must be 1 to 50 characters.' }).trim().min(1, 'The label must be 1 to 50 characters.').max(50, 'The label must be 1 to 50 characters.').optional(),
      assignee: z
        .string({ error: 'The assignee must be a user id, a user email or none.' })
        .trim()
        .min(1, 'The assignee must be a user id, a user email or none.')
        .max(255, 'The assignee must be a user id, a user email or none.')
        .optional(),
      unread: z.boolean({ error: 'The unread filter must be true or false.' }).optional(),
    },
    { error: BROADCAST_MESSAGES.conversations },
  ),
);

const contactsAudience = z
  .array(z.string({ error: BROADCAST_MESSAGES.contacts }).refine((id) => isUuid(id.trim()), BROADCAST_MESSAGES.contacts), { error: BROADCAST_MESSAGES.contacts })
  .min(1, BROADCAST_MESSAGES.contacts)
  .max(MAX_RECIPIENTS, BROADCAST_MESSAGES.audienceMax)
  .transform((ids) => [...new Set(ids.map((id) => id.trim().toLowerCase()))]);

const audienceSchema = z
  .object(
    {
      contacts: contactsAudience.optional().meta({ description: `Contact UUIDs of the workspace, at most ${MAX_RECIPIENTS}; repeats count once.` }),
      conversations: conversationsAudience.optional().meta({ description: 'The contacts of the channel’s conversations these filters of GET /conversations keep.' }),
    },
    { error: BROADCAST_MESSAGES.audience },
  )
  .refine((audience) => (audience.contacts === undefined) !== (audience.conversations === undefined), BROADCAST_MESSAGES.audience);

const messageSchema = z.preprocess(
  (value) => (isRecord(value) ? withoutNulls(value) : value),
  z
    .object(
      {
        type: z.enum(['text', 'template'], { error: MESSAGE_RULES.type }).default('text'),
        message: z.string({ error: MESSAGE_RULES.messageType }).optional().meta({ description: `The text when type is text, at most ${MESSAGE_LIMITS.text} characters.` }),
        template: templateSchema.optional().meta({
          description: 'An approved template of the channel; its parameters may use {{contact.name}}, {{contact.email}} and {{contact.phoneNumber}}.',
        }),
        is_encrypted: z.boolean({ error: MESSAGE_RULES.boolean('is_encrypted') }).default(false),
        silent: z.boolean({ error: MESSAGE_RULES.boolean('silent') }).default(false),
      },
      { error: BROADCAST_MESSAGES.message },
    )
    .superRefine((message, ctx) => {
      if (message.type === 'text') {
        const limit = message.is_encrypted ? MESSAGE_LIMITS.encrypted : MESSAGE_LIMITS.text;
        if (!message.message || message.message.trim() === '') ctx.addIssue({ code: 'custom', path: ['message'], message: MESSAGE_RULES.messageRequired });
        else if (characterCount(message.message) > limit) ctx.addIssue({ code: 'custom', path: ['message'], message: MESSAGE_RULES.messageMax(limit) });
        return;
      }
      if (!message.template) ctx.addIssue({ code: 'custom', path: ['template'], message: MESSAGE_RULES.templateRequired });
      if (message.is_encrypted) ctx.addIssue({ code: 'custom', path: ['is_encrypted'], message: MESSAGE_RULES.templateEncrypted });
      for (const [index, parameter] of (message.template?.parameters ?? []).entries()) {
        for (const match of parameter.matchAll(PLACEHOLDER)) {
          if (!PLACEHOLDER_FIELDS.includes(match[1] as never)) {
            ctx.addIssue({ code: 'custom', path: ['template', 'parameters', index], message: BROADCAST_MESSAGES.placeholders });
            break;
          }
        }
      }
    }),
);

/** POST /broadcasts. Whether the contacts, channel and template exist is the service's part. */
export const createBroadcastSchema = z.preprocess(
  (value) => (isRecord(value) ? withoutNulls(value) : value),
  z.object(
    {
      name: z.string({ error: BROADCAST_MESSAGES.name }).trim().min(1, BROADCAST_MESSAGES.name).max(255, BROADCAST_MESSAGES.name),
      channel_id: z
        .string({ error: BROADCAST_MESSAGES.channel })
        .refine((id) => isUuid(id.trim()), BROADCAST_MESSAGES.channel)
        .optional()
        .meta({ description: 'The channel to send on; default the acting channel.' }),
      audience: audienceSchema,
      message: messageSchema,
      rate_per_second: z.int({ error: BROADCAST_MESSAGES.rate }).min(1, BROADCAST_MESSAGES.rate).optional().meta({
        description: "Messages a second; at most, and by default, the channel's max_rate_per_second.",
      }),
      start_at: z.iso.datetime({ offset: true, error: BROADCAST_MESSAGES.startAt }).optional().meta({ description: 'When to start; default now.' }),
    },
    { error: BROADCAST_MESSAGES.body },
  ),
);

export type CreateBroadcastInput = z.output<typeof createBroadcastSchema>;

export const BROADCAST_STATUSES = ['scheduled', 'running', 'paused', 'finished', 'canceled'] as const;
export const RECIPIENT_STATUSES = ['pending', 'sent', 'delivered', 'read', 'failed', 'skipped'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

/** What a broadcast's counts are, on both transports (the OpenAPI document and the GraphQL schema). */
export const BROADCAST_COUNTS_DESCRIPTION = "Recipients by status: pending until their message leaves, then their message's status, or skipped.";

export const broadcastCountsSchema = z
  .object({
    total: z.int(),
    pending: z.int(),
    sent: z.int(),
    delivered: z.int(),
    read: z.int(),
    failed: z.int(),
    skipped: z.int(),
  })
  .meta({ id: 'BroadcastCounts', description: BROADCAST_COUNTS_DESCRIPTION });

export type BroadcastCounts = z.output<typeof broadcastCountsSchema>;

export const broadcastViewSchema = z
  .object({
    id: apiUuid,
    name: z.string(),
    channelId: apiUuid,
    status: z.enum(BROADCAST_STATUSES),
    ratePerSecond: z.int(),
    counts: broadcastCountsSchema,
    createdAt: apiDateTime,
    startedAt: apiDateTime.nullable(),
    finishedAt: apiDateTime.nullable(),
  })
  .meta({ id: 'Broadcast' });

export type BroadcastView = z.output<typeof broadcastViewSchema>;

export const recipientViewSchema = z
  .object({
    contactId: apiUuid,
    messageId: apiUuid.nullable(),
    status: z.enum(RECIPIENT_STATUSES),
    failureReason: z.string().nullable(),
  })
  .meta({ id: 'BroadcastRecipient' });

export type RecipientView = z.output<typeof recipientViewSchema>;

export const recipientFiltersSchema = z.object({
  status: z.enum(RECIPIENT_STATUSES, { error: BROADCAST_MESSAGES.status }).optional(),
});
