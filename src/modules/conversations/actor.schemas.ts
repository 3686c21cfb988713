import { z } from 'zod';
import { apiUuid } from '../../rest/schemas.js';

/** Who did something: the acting channel, a workspace user, a named external actor, or a contact (a reply). */
export const actorViewSchema = z
  .object({
    type: z.enum(['channel', 'user', 'external', 'contact']),
    id: apiUuid.nullable().meta({ description: "The channel's, user's or contact's id; null for an external actor." }),
    name: z.string().nullable(),
  })
  .meta({ id: 'Actor' });

export type ActorView = z.output<typeof actorViewSchema>;

/** Who did something, as the services record it. */
export type Actor =
  | { type: 'channel'; id: string; name: string }
  | { type: 'user'; id: string; name: string }
  | { type: 'external'; id: null; name: string }
  | { type: 'contact'; id: string; name: string };
