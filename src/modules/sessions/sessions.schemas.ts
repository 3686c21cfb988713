import { z } from 'zod';
import { DEFAULT_SESSION_SCOPES, SESSION_SCOPES } from '../../context/scopes.js';
import { apiDateTime, apiUuid } from '../../rest/schemas.js';

/*
 * The session field rules (docs/browser-apps.md), written once: REST answers their messages under
 * `errors`, GraphQL `createSession` under `userErrors`, from the same parse.
 */

export const SESSION_TTL = { min: 60, max: 86_400, default: 3600 } as const;
const MAX_ORIGINS = 20;
const MAX_CHANNELS = 100;

export const MESSAGES = {
  userRequired: 'The user field is required: a workspace user’s id or email.',
  userType: 'The user must be a string: a workspace user’s id or email.',
  userUnknown: 'No user of this workspace has this id or email.',
  ttl: `The ttl_seconds must be a whole number of seconds from ${SESSION_TTL.min} to ${SESSION_TTL.max}.`,
  scopesType: `The scopes must be a list of ${SESSION_SCOPES.join(', ')}.`,
  scopesEmpty: 'The scopes must name at least one scope.',
  scopeUnknown: (value: unknown) => `Unknown scope ${JSON.stringify(value)}: the scopes are ${SESSION_SCOPES.join(', ')}.`,
  channelsType: 'The channels must be a list of channel ids.',
  channelsEmpty: 'The channels must name at least one channel, or be left out for every channel of the credential.',
  channelsMax: `The channels must not name more than ${MAX_CHANNELS} channels.`,
  channelOutside: (id: string) => `The channel ${id} is not an active channel this credential can act as.`,
  originsType: 'The origins must be a list of origins such as https://app.example.com.',
  originsMax: `The origins must not name more than ${MAX_ORIGINS} origins.`,
  originInvalid: (value: unknown) =>
    `${JSON.stringify(value)} is not an origin: a scheme (https, or http), a host and an optional port, such as https://app.example.com, with no path.`,
  bodyObject: 'The request body must be a JSON object.',
} as const;

/** `null` for an optional field means absent (docs/conventions.md). */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === null ? undefined : value), schema.optional());

/**
 * A browser origin as the `Origin` header sends it: `https://host[:port]` (or `http://`, for
 * development), no path, query or credentials. Kept as the URL standard serialises it (host in
 * lowercase, a default port dropped), which is how browsers send it.
 */
export function parseOrigin(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim().replace(/\/$/, '');
  if (!/^https?:\/\/[^/?#@]+$/i.test(text)) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
}

export const createSessionSchema = z.object(
  {
    user: z
      .string({ error: (issue) => (issue.input === undefined || issue.input === null ? MESSAGES.userRequired : MESSAGES.userType) })
      .trim()
      .min(1, MESSAGES.userRequired)
      .max(255, MESSAGES.userUnknown)
      .meta({ description: "The workspace user the session acts as: the user's id or email.", example: 'agent@example.com' }),
    ttl_seconds: optional(z.int({ error: MESSAGES.ttl }).min(SESSION_TTL.min, MESSAGES.ttl).max(SESSION_TTL.max, MESSAGES.ttl)).meta({
      description: `How long the session lives, in seconds (${SESSION_TTL.min}–${SESSION_TTL.max}, default ${SESSION_TTL.default}); never past the minting credential's own expiry.`,
    }),
    scopes: optional(
      z
        .array(z.unknown(), { error: MESSAGES.scopesType })
        .min(1, MESSAGES.scopesEmpty)
        .superRefine((values, ctx) => {
          const unknown = values.find((value) => !SESSION_SCOPES.includes(value as never));
          if (unknown !== undefined) ctx.addIssue({ code: 'custom', message: MESSAGES.scopeUnknown(unknown) });
        })
        .transform((values) => SESSION_SCOPES.filter((scope) => values.includes(scope))),
    ).meta({ description: `What the session may do; default ${DEFAULT_SESSION_SCOPES.join(', ')} (never broadcasts, which must be asked for).` }),
    channels: optional(
      z
        .array(z.string({ error: MESSAGES.channelsType }), { error: MESSAGES.channelsType })
        .min(1, MESSAGES.channelsEmpty)
        .max(MAX_CHANNELS, MESSAGES.channelsMax)
        .transform((ids) => ids.map((id) => id.trim())),
    ).meta({ description: 'Channel ids the session may act as, each one the minting credential can act as; default all of them.' }),
    origins: optional(
      z
        .array(z.unknown(), { error: MESSAGES.originsType })
        .max(MAX_ORIGINS, MESSAGES.originsMax)
        .transform((values, ctx) => {
          const origins: string[] = [];
          for (const value of values) {
            const origin = parseOrigin(value);
            if (origin === null) {
              ctx.addIssue({ code: 'custom', message: MESSAGES.originInvalid(value) });
              return z.NEVER;
            }
            if (!origins.includes(origin)) origins.push(origin);
          }
          return origins;
        }),
    ).meta({ description: 'Browser origins the session may be used from (a request whose `Origin` names another is refused); default any.' }),
  },
  { error: MESSAGES.bodyObject },
);

export type CreateSessionInput = z.output<typeof createSessionSchema>;

/** `?user=`: whose sessions to list or revoke. */
export const sessionUserQuerySchema = z.object({
  user: z.string({ error: MESSAGES.userRequired }).trim().min(1, MESSAGES.userRequired).max(255, MESSAGES.userUnknown).meta({
    description: "A workspace user's id or email.",
  }),
});

export const sessionViewSchema = z
  .object({
    id: apiUuid,
    user: z.object({ id: apiUuid, name: z.string(), email: z.string() }).meta({ id: 'SessionUser' }),
    scopes: z.array(z.enum(SESSION_SCOPES)),
    channels: z.array(apiUuid).meta({ description: 'The channel ids the session may act as.' }),
    origins: z.array(z.string()).meta({ description: 'The origins the session may be used from; empty for any.' }),
    expiresAt: apiDateTime,
    createdAt: apiDateTime,
  })
  .meta({ id: 'Session' });

/** The answer to minting: the view with its token, which is shown this once. */
export const mintedSessionSchema = z
  .object({
    id: apiUuid,
    token: z.string().meta({ description: 'The session token (`cst_…`): shown only in this answer, stored as a hash.' }),
    user: sessionViewSchema.shape.user,
    scopes: sessionViewSchema.shape.scopes,
    channels: sessionViewSchema.shape.channels,
    origins: sessionViewSchema.shape.origins,
    expiresAt: apiDateTime,
    createdAt: apiDateTime,
  })
  .meta({ id: 'MintedSession' });

export type SessionView = z.output<typeof sessionViewSchema>;
export type MintedSessionView = z.output<typeof mintedSessionSchema>;
