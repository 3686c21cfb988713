import { z } from 'zod';
import { apiUuid } from '../../rest/schemas.js';
import { targetFormProblem } from '../../lib/outbound-http.js';

export const channelTypeSchema = z.enum(['whatsapp', 'sms', 'email', 'webchat'], {
  error: 'must be one of whatsapp, sms, email, webchat',
});

/** An outbound target URL by its form (docs/operating-safely.md, Outbound targets): http(s), no credentials; its address is checked when it is stored and used. */
export const webhookUrlSchema = z
  .string()
  .trim()
  .max(2048, 'must be at most 2048 characters')
  .superRefine((value, ctx) => {
    const problem = targetFormProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** The API view of a channel. */
export const channelViewSchema = z
  .object({
    id: apiUuid,
    name: z.string(),
    type: z.enum(['whatsapp', 'sms', 'email', 'webchat']),
    status: z.enum(['active', 'inactive']),
  })
  .meta({ id: 'Channel' });

export type ChannelView = z.output<typeof channelViewSchema>;
