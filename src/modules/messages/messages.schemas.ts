import { z } from 'zod';
import { isUuid } from '../../lib/uuid.js';
import { characterCount, documentedAs, isRecord, inputJsonSchema, nullMeansAbsent, uuidParam, withoutNulls } from '../../lib/validation.js';
import { contactEmailSchema, contactNameSchema, contactPhoneSchema } from '../contacts/contacts.schemas.js';
import { actorViewSchema } from '../conversations/actor.schemas.js';
import { apiDateTime, apiUuid } from '../../rest/schemas.js';

export const MESSAGE_LIMITS = { text: 4096, encrypted: 65536, mediaUrls: 10, mediaUrlLength: 2048, from: 255 } as const;

export const MESSAGES = {
  recipientRequired: 'A recipient is required: give to, contact or sender.',
  recipientNeedsPhone: (provider: string) => `This channel sends through ${provider}: the recipient needs a phone number.`,
  recipientNeedsE164: (provider: string) => `This channel sends through ${provider}: the recipient needs a phone number in international form (E.164).`,
  recipientNeedsEmail: (provider: string) => `This channel sends through ${provider}: the recipient needs an email address.`,
  recipientIsGroup: (provider: string) => `This channel sends through ${provider}, which cannot message a group contact.`,
  outsideWindow: (provider: string, hours: number) => `Outside ${provider}'s ${hours}-hour window only template messages can be sent.`,
  recipientShape: 'The recipient must be a contact UUID or an object with name, email or phone.',
  recipientDetails: 'The recipient needs an email or a phone.',
  recipientUnknown: 'The selected contact does not exist.',
  type: 'The type must be text or template.',
  messageRequired: 'The message field is required.',
  messageType: 'The message must be a string.',
  messageMax: (max: number) => `The message must not be greater than ${max} characters.`,
  boolean: (field: string) => `The ${field} field must be true or false.`,
  templateRequired: 'The template field is required when type is template.',
  templateShape: 'The template must be an object with name, language and parameters.',
  templateName: 'The template name is required.',
  templateUnknown: 'The selected template does not exist or is not approved for this channel.',
  templateParameters: 'The template parameters must be a list of strings.',
  templateParameterCount: (n: number) => `The template takes exactly ${n} parameter${n === 1 ? '' : 's'}.`,
  templateEncrypted: 'A template message cannot be encrypted.',
  templateParameterMax: `A template parameter must not be greater than ${MESSAGE_LIMITS.text} characters.`,
  templateRenderedMax: `The rendered template must not be greater than ${MESSAGE_LIMITS.text} characters.`,
  mediaList: `The media_urls must be a list of at most ${MESSAGE_LIMITS.mediaUrls} URLs.`,
  mediaUrl: `Each media URL must be an https:// URL of at most ${MESSAGE_LIMITS.mediaUrlLength} characters.`,
  from: `The from must be a user id, a user email, or a name of at most ${MESSAGE_LIMITS.from} characters.`,
} as const;

/** Recipient details (`to` as object, `contact`, `sender`): the contact field rules, all optional; null is absent. */
const recipientDetailsSchema = z
  .object(
    {
      name: contactNameSchema.optional(),
      email: contactEmailSchema.optional(),
      phone: contactPhoneSchema.optional(),
    },
    { error: MESSAGES.recipientShape },
  )
  .refine((d) => !!d.email || !!d.phone, MESSAGES.recipientDetails);

export type RecipientDetails = z.infer<typeof recipientDetailsSchema>;

const recipientParse = z.union([z.string(), z.record(z.string(), z.unknown())], { error: MESSAGES.recipientShape }).transform((value, ctx) => {
  if (typeof value === 'string') {
    const id = value.trim().toLowerCase();
    if (!isUuid(id)) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.recipientShape });
      return z.NEVER;
    }
    return { contactId: id };
  }
  const parsed = recipientDetailsSchema.safeParse(withoutNulls(value));
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    return z.NEVER;
  }
  return parsed.data;
});

const recipientSchema = documentedAs(recipientParse, {
  description: 'An existing contact by UUID, or the details to find the contact by (phone, then email) or create it with.',
  anyOf: [{ type: 'string', format: 'uuid' }, inputJsonSchema(recipientDetailsSchema)],
});

export type Recipient = z.output<typeof recipientSchema>;

/**
 * An absolute https URL with a host, as written: the scheme in any case, an
 * authority right after `//` (the URL parser would read `https:///a.png` as host
 * `a.png`), and no whitespace or control character anywhere.
 */
export function isMediaUrl(value: string): boolean {
  if (!/^https:\/\/[^/\\?#]/i.test(value) || /[\s\u0000-\u001f\u007f]/.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

const mediaUrlSchema = z
  .string({ error: MESSAGES.mediaUrl })
  .max(MESSAGE_LIMITS.mediaUrlLength, MESSAGES.mediaUrl)
  .refine(isMediaUrl, MESSAGES.mediaUrl)
  .meta({ format: 'uri', maxLength: MESSAGE_LIMITS.mediaUrlLength, description: 'An absolute https:// URL.' });


const bool = (field: string) => z.boolean({ error: MESSAGES.boolean(field) });

/**
 * Null means absent for every field of a send. Only the recipient that decides
 * is read (spec §4.2: `to`, then `contact`, then the legacy `sender` only when
 * neither is present); the others are ignored, whatever they hold.
 */
function withDecidingRecipientOnly(raw: Record<string, unknown>): Record<string, unknown> {
  const body = withoutNulls(raw);
  const decides = (['to', 'contact', 'sender'] as const).find((key) => body[key] !== undefined);
  return { ...body, to: undefined, contact: undefined, sender: undefined, ...(decides ? { [decides]: body[decides] } : {}) };
}

const templateParameterSchema = z
  .string({ error: MESSAGES.templateParameters })
  .refine((value) => characterCount(value) <= MESSAGE_LIMITS.text, MESSAGES.templateParameterMax);

/** A template reference; null fields inside it are absent too. */
export const templateSchema = z.preprocess(
  (value) => (isRecord(value) ? withoutNulls(value) : value),
  z.object(
    {
      name: z.string({ error: MESSAGES.templateName }).trim().min(1, MESSAGES.templateName),
      language: z.string({ error: MESSAGES.templateShape }).trim().min(1, MESSAGES.templateShape).optional(),
      parameters: z.array(templateParameterSchema, { error: MESSAGES.templateParameters }).default([]),
    },
    { error: MESSAGES.templateShape },
  ),
);

const sendMessageFields = z.object(
  {
    to: recipientSchema.optional(),
    contact: recipientSchema.optional(),
    sender: recipientSchema.optional(),
    from: z
      .string({ error: MESSAGES.from })
      .trim()
      .min(1, MESSAGES.from)
      .max(MESSAGE_LIMITS.from, MESSAGES.from)
      .meta({ description: "A workspace user's id or email attributes the message to that user; any other name records an external sender." })
      .optional(),
    type: z.enum(['text', 'template'], { error: MESSAGES.type }).default('text'),
    message: z
      .string({ error: MESSAGES.messageType })
      .meta({
        description: `The text, required when type is text: at most ${MESSAGE_LIMITS.text} characters, or ${MESSAGE_LIMITS.encrypted} for an encrypted payload.`,
      })
      .optional(),
    is_encrypted: bool('is_encrypted')
      .meta({ description: 'The message is a ciphertext the caller encrypted: stored and delivered, never shown or searched.' })
      .default(false),
    silent: bool('silent').meta({ description: "Keep a closed conversation closed." }).default(false),
    template: templateSchema.optional(),
    media_urls: z.array(mediaUrlSchema, { error: MESSAGES.mediaList }).max(MESSAGE_LIMITS.mediaUrls, MESSAGES.mediaList).default([]),
  },
  { error: 'The request body must be a JSON object.' },
);

/** POST /messages. Whether the recipient exists is the service's part. */
export const sendMessageSchema = z
  .preprocess(
    (raw) => (isRecord(raw) ? withDecidingRecipientOnly(raw) : raw),
    documentedAs(sendMessageFields, nullMeansAbsent(inputJsonSchema(sendMessageFields))),
  )
  .superRefine((body, ctx) => {
    // Resolution order: to, then contact, then the legacy sender only when neither is present.
    if (!body.to && !body.contact && !body.sender) ctx.addIssue({ code: 'custom', path: ['to'], message: MESSAGES.recipientRequired });
    if (body.type === 'text') {
      const limit = body.is_encrypted ? MESSAGE_LIMITS.encrypted : MESSAGE_LIMITS.text;
      if (!body.message || body.message.trim() === '') ctx.addIssue({ code: 'custom', path: ['message'], message: MESSAGES.messageRequired });
      else if (characterCount(body.message) > limit) ctx.addIssue({ code: 'custom', path: ['message'], message: MESSAGES.messageMax(limit) });
    } else {
      if (!body.template) ctx.addIssue({ code: 'custom', path: ['template'], message: MESSAGES.templateRequired });
      if (body.is_encrypted) ctx.addIssue({ code: 'custom', path: ['is_encrypted'], message: MESSAGES.templateEncrypted });
    }
  });

export type SendMessageInput = z.output<typeof sendMessageSchema>;

export const messageFiltersSchema = z.object({
  conversation_id: uuidParam('conversation_id'),
  contact_id: uuidParam('contact_id'),
  search: z.string().trim().max(255, 'The search must not be greater than 255 characters.').optional(),
});

export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'failed', 'received'] as const;

/** A file received with an inbound message, as views list it. */
export const mediaViewSchema = z
  .object({
    index: z.int().min(0),
    contentType: z.string().nullable(),
    filename: z.string().nullable(),
  })
  .meta({ id: 'MessageMedia' });

export type MediaView = z.output<typeof mediaViewSchema>;

/** What the message view's fields mean, on both transports (the OpenAPI document and the GraphQL schema). */
export const MESSAGE_FIELDS = {
  status: 'Outbound: queued, then sent, delivered and read as the provider reports them (never backwards), or failed. Inbound: received.',
  failureReason: 'Why the provider refused the message for good: its error code and text; null otherwise.',
  broadcastId: 'The broadcast that made this message; null for any other message.',
} as const;

/** The API view of a message; an encrypted message's content never appears in it. */
export const messageViewSchema = z
  .object({
    id: apiUuid,
    conversationId: apiUuid,
    contactId: apiUuid,
    channelId: apiUuid,
    direction: z.enum(['outbound', 'inbound']),
    type: z.enum(['text', 'template']),
    body: z.string().nullable().meta({ description: 'The text; null for an encrypted message.' }),
    placeholder: z.literal('Encrypted message hidden').optional().meta({ description: 'Present on encrypted messages only.' }),
    isEncrypted: z.boolean(),
    status: z.enum(MESSAGE_STATUSES).meta({ description: MESSAGE_FIELDS.status }),
    failureReason: z.string().nullable().meta({ description: MESSAGE_FIELDS.failureReason }),
    sender: actorViewSchema,
    silent: z.boolean(),
    mediaUrls: z.array(z.string()),
    broadcastId: apiUuid.nullable().meta({ description: MESSAGE_FIELDS.broadcastId }),
    media: z.array(mediaViewSchema).meta({ description: 'Files received with an inbound message; fetch each from `/messages/{id}/media/{index}`.' }),
    createdAt: apiDateTime,
  })
  .meta({ id: 'Message' });

export type MessageView = z.output<typeof messageViewSchema>;
