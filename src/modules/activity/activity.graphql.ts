import { builder } from '../../graphql/builder.js';
import { toUserErrors } from '../../graphql/errors.js';
import { UserError, type UserErrorShape } from '../../graphql/user-errors.js';
import { reportActivity, watchActivity } from './activity.service.js';
import type { ActivityEvent, ActivityUser } from '../../context/services.js';

const ActivityUserObject = builder.objectRef<ActivityUser>('ActivityUser').implement({
  description: 'The workspace user an activity is about.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
  }),
});

const ConversationActivity = builder.objectRef<ActivityEvent>('ConversationActivity').implement({
  description: 'What one workspace user is doing in a conversation now: typing, viewing, both or neither.',
  fields: (t) => ({
    conversationId: t.exposeID('conversationId'),
    user: t.field({ type: ActivityUserObject, resolve: (event) => event.user }),
    typing: t.exposeBoolean('typing', { description: 'True from a typing report until 6 s after it, unless renewed or stopped.' }),
    viewing: t.exposeBoolean('viewing', { description: 'True while the user holds a conversationActivity subscription on the conversation.' }),
    at: t.expose('at', { type: 'DateTime' }),
  }),
});

interface ReportActivityResult {
  reported: boolean;
  userErrors: UserErrorShape[];
}

const ReportActivityPayload = builder.objectRef<ReportActivityResult>('ReportActivityPayload').implement({
  fields: (t) => ({
    reported: t.exposeBoolean('reported', { description: 'Whether the activity was told to the conversation\'s subscribers.' }),
    userErrors: t.field({ type: [UserError], resolve: (payload) => payload.userErrors }),
  }),
});

builder.mutationField('reportActivity', (t) =>
  t.field({
    type: ReportActivityPayload,
    nullable: true,
    description:
      'A workspace user is typing in the conversation (`typing: true`, lasting 6 s unless renewed) or stopped. A session reports as its user (`from` may name it only); a backend credential names the user in `from`.',
    scope: 'send',
    args: { conversationId: t.arg.id({ required: true }), typing: t.arg.boolean({ required: true }), from: t.arg.id() },
    resolve: async (_root, args, ctx) => {
      try {
        await reportActivity(ctx, String(args.conversationId), { typing: args.typing, from: args.from == null ? null : String(args.from) });
        return { reported: true, userErrors: [] };
      } catch (error) {
        const userErrors = toUserErrors(error);
        if (!userErrors) throw error;
        // Argument paths: ["from"], ["conversationId"] for a conversation that cannot be found.
        return {
          reported: false,
          userErrors: userErrors.map((userError) => {
            const field = userError.field[0] === 'input' ? userError.field.slice(1) : userError.field;
            return { ...userError, field: field[0] === 'id' ? ['conversationId'] : field };
          }),
        };
      }
    },
  }),
);

builder.subscriptionField('conversationActivity', (t) =>
  t.field({
    type: ConversationActivity,
    description:
      "Who is typing and who is viewing a conversation: what is known when it starts, then each change. A session's user counts as viewing it while this subscription is open.",
    scope: 'read',
    args: { conversationId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => watchActivity(ctx, String(args.conversationId)),
    resolve: (event) => event as ActivityEvent,
  }),
);
