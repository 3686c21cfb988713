import { z } from 'zod';

export const WEBHOOK_EVENTS = [
  'message.created',
  'message.status_changed',
  'conversation.closed',
  'conversation.reopened',
  'conversation.assigned',
  'conversation.read',
  'conversation.labels_changed',
  'contact.created',
  'contact.updated',
  'broadcast.started',
  'broadcast.finished',
] as const;

export const webhookEventSchema = z.enum(WEBHOOK_EVENTS, {
  error: `must be one of ${WEBHOOK_EVENTS.join(', ')}`,
});
