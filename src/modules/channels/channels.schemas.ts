import { z } from 'zod';
import { apiUuid } from '../../rest/schemas.js';

export const channelTypeSchema = z.enum(['whatsapp', 'sms', 'email', 'webchat'], {
  error: 'must be one of whatsapp, sms, email, webchat',
});

export const webhookUrlSchema = z
  .string()
  .trim()
  .max(2048, 'must be at most 2048 characters')
  .refine((value) => {
    try {
      return ['https:', 'http:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

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
