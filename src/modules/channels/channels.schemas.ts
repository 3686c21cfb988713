import { z } from 'zod';

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
