import { z } from 'zod';
import { apiUuid } from '../../rest/schemas.js';

/** The API view of a workspace user. */
export const userViewSchema = z.object({ id: apiUuid, name: z.string(), email: z.string() }).meta({ id: 'User' });

export type UserView = z.output<typeof userViewSchema>;
