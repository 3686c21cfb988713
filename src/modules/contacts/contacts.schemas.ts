import { z } from 'zod';
import { toE164 } from '../../lib/phone.js';
import { characterCount, documentedAs, inputJsonSchema } from '../../lib/validation.js';
import { apiDateTime, apiUuid } from '../../rest/schemas.js';

/*
 * The contact field rules of the Connect API (spec §2, §4.1), written once. REST
 * answers their messages under `errors`, GraphQL under `userErrors`, from the
 * same parse.
 */

export const MESSAGES = {
  nameRequired: 'The name field is required.',
  nameCleared: 'The name cannot be cleared.',
  nameType: 'The name must be a string.',
  nameMin: 'The name must be at least 2 characters.',
  nameMax: 'The name must not be greater than 255 characters.',
  emailType: 'The email must be a string or null.',
  emailFormat: 'The email must be a valid email address.',
  emailMax: 'The email must not be greater than 255 characters.',
  emailLocalMax: 'The part of the email before the @ must not be greater than 64 characters.',
  emailTaken: 'The email has already been taken.',
  phoneType: 'The phone must be a string or null.',
  phoneFormat: 'The phone must be a valid E.164 number: a leading +, the country code and digits only.',
  phoneTaken: 'The phone has already been taken.',
  lastMethod: 'The contact must keep at least one email or phone.',
  needsMethod: 'An email or a phone is required.',
  bodyObject: 'The request body must be a JSON object.',
  bodyEmpty: 'At least one of name, email or phone must be given.',
} as const;


/** Contact name: 2–255 characters after trimming. */
export const contactNameSchema = z
  .string({
    error: (issue) =>
      issue.input === undefined ? MESSAGES.nameRequired : issue.input === null ? MESSAGES.nameCleared : MESSAGES.nameType,
  })
  .trim()
  .refine((v) => v !== '', { message: MESSAGES.nameCleared, abort: true })
  .refine((v) => characterCount(v) >= 2, MESSAGES.nameMin)
  .refine((v) => characterCount(v) <= 255, MESSAGES.nameMax)
  .meta({ description: '2 to 255 characters after trimming.', minLength: 2, maxLength: 255, example: 'Ada Lovelace' });

/**
 * Contact email: the HTML standard's "valid e-mail address" (ASCII local part of
 * its allowed characters, dot-separated domain labels) within RFC 5321's lengths:
 * a local part of at most 64 characters, at most 255 in all. Stored as given
 * after trimming.
 */
export const contactEmailSchema = z
  .string({ error: MESSAGES.emailType })
  .trim()
  .refine((v) => characterCount(v) <= 255, { message: MESSAGES.emailMax, abort: true })
  .refine((v) => z.regexes.html5Email.test(v), { message: MESSAGES.emailFormat, abort: true })
  .refine((v) => v.indexOf('@') <= 64, MESSAGES.emailLocalMax)
  .meta({ format: 'email', maxLength: 255, example: 'ada@example.com' });

/** What the contact fields mean, on both transports (the OpenAPI document and the GraphQL schema). */
export const CONTACT_FIELDS = {
  phone: 'E.164: a leading +, the country code and digits only.',
  importedId: 'The contact created or matched; null for a failed row.',
} as const;

/** Contact phone: strict E.164, judged by libphonenumber-js. */
export const contactPhoneSchema = z
  .string({ error: MESSAGES.phoneType })
  .trim()
  .transform((value, ctx) => {
    const e164 = toE164(value);
    if (!e164) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.phoneFormat });
      return z.NEVER;
    }
    return e164;
  })
  .meta({ description: CONTACT_FIELDS.phone, example: '+31612345678' });

/** Null or a blank string clears an email or phone; anything else must pass `schema`. */
function clearable(schema: z.ZodType<string, string>, typeMessage: string) {
  const accepts = { anyOf: [inputJsonSchema(schema), { type: 'null' }, { type: 'string', pattern: '^\\s*$', description: 'Blank: the same as null.' }] };
  const parse = z.unknown().transform((value, ctx): string | null => {
    if (value === null || (typeof value === 'string' && value.trim() === '')) return null;
    if (typeof value !== 'string') {
      ctx.addIssue({ code: 'custom', message: typeMessage });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    return z.NEVER;
  });
  return documentedAs(parse, accepts);
}

/**
 * Spec §4.1 rule 4: the contact's current value, exactly as stored (or as one of
 * the forms it is also stored under), is accepted as that value even where
 * today's rule would refuse it (a legacy phone such as `020 123 4567`).
 */
function orAsStored(stored: string | null, schema: z.ZodType<string | null>, forms: string[] = []) {
  const parse = z.unknown().transform((value, ctx): string | null => {
    if (stored !== null && typeof value === 'string' && (value.trim() === stored || forms.includes(value.trim()))) return stored;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    return z.NEVER;
  });
  return documentedAs(parse, inputJsonSchema(schema));
}

/** A request body: a JSON object whose unsupported fields are ignored. */
const requestObject = <T extends z.ZodRawShape>(shape: T) => z.object(shape, { error: MESSAGES.bodyObject });

/** PATCH /contacts/{contact}: any of the supported fields; unsupported ones are ignored. */
export function updateContactSchema(current: { email: string | null; phone: string | null; phoneForms?: string[] }) {
  return requestObject({
    name: contactNameSchema.optional(),
    email: orAsStored(current.email, clearable(contactEmailSchema, MESSAGES.emailType)).optional(),
    phone: orAsStored(current.phone, clearable(contactPhoneSchema, MESSAGES.phoneType), current.phoneForms).optional(),
  })
    .refine((body) => body.name !== undefined || body.email !== undefined || body.phone !== undefined, {
      message: MESSAGES.bodyEmpty,
      path: ['body'],
    });
}

export type UpdateContactInput = z.infer<ReturnType<typeof updateContactSchema>>;

/** POST /contacts: a name and at least one of email or phone. */
export const createContactSchema = requestObject({
  name: z.preprocess((v) => (v === null ? undefined : v), contactNameSchema),
  email: clearable(contactEmailSchema, MESSAGES.emailType).optional(),
  phone: clearable(contactPhoneSchema, MESSAGES.phoneType).optional(),
})
  .superRefine((body, ctx) => {
    if (!body.email && !body.phone) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.needsMethod, path: ['email'] });
      ctx.addIssue({ code: 'custom', message: MESSAGES.needsMethod, path: ['phone'] });
    }
  })
  .transform((body) => ({ name: body.name, email: body.email ?? null, phone: body.phone ?? null }));

export type CreateContactInput = z.infer<typeof createContactSchema>;

/** GET /contacts filters (and the GraphQL `contacts` arguments). */
export const contactFiltersSchema = z.object({
  search: z.string().trim().max(255, 'The search must not be greater than 255 characters.').optional(),
});

/** GET /contacts/find: exactly one lookup key. */
export const findContactSchema = z
  .object({
    email: z.string().trim().optional(),
    phone: z.string().trim().optional(),
  })
  .refine((q) => !!q.email || !!q.phone, { message: 'Give an email or a phone to find a contact by.', path: ['email'] });

/** The API view of a contact (docs/conventions.md, Views); the phone is `phoneNumber` in answers. */
export const contactViewSchema = z
  .object({
    id: apiUuid,
    name: z.string(),
    email: z.string().nullable(),
    phoneNumber: z.string().nullable().meta({ description: 'E.164, or a legacy form as it was imported.' }),
    isGroup: z.boolean(),
    createdAt: apiDateTime,
    updatedAt: apiDateTime,
    optOuts: z
      .array(
        z
          .object({
            channelId: apiUuid,
            at: apiDateTime,
            source: z.enum(['keyword', 'provider']).meta({ description: 'An opt-out keyword the contact sent, or the provider refusing a send.' }),
          })
          .meta({ id: 'ContactOptOut' }),
      )
      .meta({ description: 'The channels the contact opted out of: broadcasts skip it there; one-to-one messages still go.' }),
  })
  .meta({ id: 'Contact' });

export type ContactView = z.output<typeof contactViewSchema>;

/** POST /contacts/import: up to 10,000 contacts, each checked with the rules of POST /contacts. */
export const importContactsSchema = z.object(
  {
    contacts: z
      .array(z.unknown().meta({ description: 'A contact as POST /contacts takes it: `name`, and `email` and/or `phone`.' }), {
        error: 'The contacts must be a list.',
      })
      .min(1, 'At least one contact must be given.')
      .max(10_000, 'At most 10000 contacts may be imported at once.'),
  },
  { error: MESSAGES.bodyObject },
);

/** One row's outcome in an import's answer. */
export const importResultSchema = z
  .object({
    index: z.number().int().meta({ description: 'The row\'s position in `contacts`, from 0.' }),
    id: apiUuid.nullable().meta({ description: CONTACT_FIELDS.importedId }),
    status: z.enum(['created', 'matched', 'failed']),
    errors: z.record(z.string(), z.array(z.string())).optional().meta({ description: "A failed row's field messages, as a 422 gives them." }),
  })
  .meta({ id: 'ContactImportResult' });
