import { z } from 'zod';
import { FetchResponse } from '../../lib/response.js';
import { route } from '../../rest/route.js';
import { apiUuid } from '../../rest/schemas.js';
import { reportActivity } from './activity.service.js';
import { reportActivitySchema } from './activity.schemas.js';

export const activityRoutes = [
  route({
    method: 'POST',
    path: '/conversations/:id/activity',
    operationId: 'reportActivity',
    scope: 'send',
    actsAsChannel: false,
    tag: 'Conversations',
    summary: 'Report typing',
    description:
      "A workspace user is typing in the conversation (`typing: true`, lasting 6 s unless renewed) or stopped. A session reports as its user; a backend credential names the user in `from`. Told to the conversation's `conversationActivity` subscribers; nothing is stored.",
    params: z.object({ id: apiUuid.meta({ description: 'The conversation UUID.' }) }),
    body: reportActivitySchema,
    failures: [403, 404, 422],
    responses: { 204: { description: 'The activity was reported.' } },
    handler: async ({ ctx, params, body }) => {
      await reportActivity(ctx, params.id, await body());
      return new FetchResponse(null, { status: 204 });
    },
  }),
];
