import { z } from 'zod';

/*
 * The shapes every REST answer shares: identifiers and dates as the API writes
 * them, resource and collection envelopes, and the error bodies. The OpenAPI
 * document is rendered from these, and the test suite validates every answer
 * it receives against that document.
 */

export const apiUuid = z.string().meta({ format: 'uuid', example: '0b6f1a2e-7c3d-4e5f-8a9b-1c2d3e4f5a6b' });

/** ISO-8601 in UTC, as `Date.toISOString()` writes it. */
export const apiDateTime = z.string().meta({ format: 'date-time', example: '2026-01-31T09:30:00.000Z' });

/** `{"data":{"<key>":<view>}}`, the body of every single-resource answer. */
export function resourceEnvelope<K extends string, S extends z.ZodType>(key: K, view: S) {
  return z.object({ data: z.object({ [key]: view } as { [P in K]: S }) });
}

export const pageMetaSchema = z
  .object({
    per_page: z.int().meta({ description: 'The page size used.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
    has_more: z.boolean(),
  })
  .meta({ id: 'PageMeta' });

/** `{"data":[…],"meta":{"per_page","next_cursor","has_more"}}`, the body of every collection. */
export function collectionEnvelope<S extends z.ZodType>(view: S) {
  return z.object({ data: z.array(view), meta: pageMetaSchema });
}

export const errorSchema = z
  .object({ status: z.literal('error'), message: z.string() })
  .meta({ id: 'Error', description: 'Every failure except a validation failure.' });

export const validationErrorSchema = z
  .object({
    message: z.string().meta({ description: 'The first error message.' }),
    errors: z.record(z.string(), z.array(z.string())).meta({
      description:
        'Messages per request field: its name (`phone`, `limit`), a dotted path for a nested field ' +
        '(`template.parameters`, `media_urls.0`), `body` for the body as a whole.',
      example: { email: ['The email has already been taken.'] },
    }),
    conflict: z
      .object({ field: z.string().meta({ example: 'email' }), contactId: apiUuid })
      .optional()
      .meta({ description: 'On a uniqueness conflict, the existing contact holding the value.' }),
  })
  .meta({ id: 'ValidationError' });
