import { z } from 'zod';

export const ACTIVITY_MESSAGES = {
  typing: 'The typing field must be true or false.',
  from: 'The from field must be a workspace user id or email.',
  fromRequired: 'A backend credential names the user who is typing in from (a workspace user id or email).',
  fromUnknown: 'The from user must be a user of this workspace (id or email).',
  fromOther: 'A session reports its own activity: `from` may name its user only.',
} as const;

/** POST /conversations/{id}/activity */
export const reportActivitySchema = z.object(
  {
    typing: z.boolean({ error: ACTIVITY_MESSAGES.typing }).meta({ description: 'Whether the user is typing now; `true` lasts 6 s unless renewed.' }),
    from: z
      .string({ error: ACTIVITY_MESSAGES.from })
      .trim()
      .min(1, ACTIVITY_MESSAGES.from)
      .max(255, ACTIVITY_MESSAGES.from)
      .nullish()
      .meta({ description: "The workspace user (id or email) who is typing: required of a backend credential; a session's own user when given by a session." }),
  },
  { error: 'The body must be a JSON object.' },
);

export type ReportActivityInput = z.output<typeof reportActivitySchema>;
