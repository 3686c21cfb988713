import { z } from 'zod';
import { uuidParam } from '../../lib/validation.js';

/** GET /conversations filters (and the GraphQL `conversations` arguments). */
export const conversationFiltersSchema = z.object({
  status: z.enum(['open', 'closed'], { error: 'The status must be open or closed.' }).optional(),
  contact_id: uuidParam('contact_id'),
});
