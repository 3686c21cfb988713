import { builder } from '../../graphql/builder.js';
import { connectionComplexity, connectionType, pageArgs, pageFromArgs } from '../../graphql/connection.js';
import { orNull, payloadOf, accepted } from '../../graphql/results.js';
import { UserError, type Payload } from '../../graphql/user-errors.js';
import { IDEMPOTENCY_KEY_DESCRIPTION, asIdempotentPayload } from '../idempotency/idempotency.graphql.js';
import { BROADCAST_STATUSES, type BroadcastCounts } from './broadcasts.schemas.js';
import { changeBroadcast, createBroadcast, getBroadcast, listBroadcasts } from './broadcasts.service.js';
import { broadcastById, type BroadcastRow } from './broadcasts.sql.js';
import { broadcastUpdates, type BroadcastUpdate } from './broadcasts.updates.js';

const BroadcastStatusEnum = builder.enumType('BroadcastStatus', { values: BROADCAST_STATUSES });

const BroadcastCountsObject = builder.objectRef<BroadcastCounts>('BroadcastCounts').implement({
  description: "Recipients by status: pending until their message leaves, then their message's status, or skipped.",
  fields: (t) => ({
    total: t.exposeInt('total'),
    pending: t.exposeInt('pending'),
    sent: t.exposeInt('sent'),
    delivered: t.exposeInt('delivered'),
    read: t.exposeInt('read'),
    failed: t.exposeInt('failed'),
    skipped: t.exposeInt('skipped'),
  }),
});

export const BroadcastObject = builder.objectRef<BroadcastRow>('Broadcast').implement({
  description: "One message to many contacts of a channel, sent at the channel's pace.",
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    channelId: t.exposeID('channelId'),
    status: t.field({ type: BroadcastStatusEnum, resolve: (row) => row.status }),
    ratePerSecond: t.exposeInt('ratePerSecond'),
    counts: t.field({ type: BroadcastCountsObject, resolve: (row) => row.counts }),
    createdAt: t.field({ type: 'DateTime', resolve: (row) => new Date(row.createdAt) }),
    startedAt: t.field({ type: 'DateTime', nullable: true, resolve: (row) => (row.startedAt ? new Date(row.startedAt) : null) }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (row) => (row.finishedAt ? new Date(row.finishedAt) : null) }),
  }),
});

const BroadcastConnection = connectionType('Broadcast', BroadcastObject);

/** `BroadcastPayload { broadcast userErrors }`: the broadcast after the mutation, read again by id when only the id is known (a replay). */
const BroadcastPayload = builder.objectRef<Payload>('BroadcastPayload').implement({
  fields: (t) => ({
    broadcast: t.field({
      type: BroadcastObject,
      nullable: true,
      resolve: async (payload, _args, ctx) => {
        if (!payload.id) return null;
        return (payload.row as BroadcastRow | undefined) ?? orNull(() => getBroadcast(ctx, payload.id!));
      },
    }),
    userErrors: t.field({ type: [UserError], resolve: (payload) => payload.userErrors }),
  }),
});

const BroadcastConversationsInput = builder.inputType('BroadcastConversationsInput', {
  description: 'The GET /conversations filters whose conversations’ contacts the broadcast reaches.',
  fields: (t) => ({
    status: t.string(),
    label: t.string(),
    assignee: t.string({ description: "A user's id or email, or none." }),
    unread: t.boolean(),
  }),
});

const BroadcastAudienceInput = builder.inputType('BroadcastAudienceInput', {
  description: 'Exactly one of contacts (ids) or conversations (filters).',
  fields: (t) => ({
    contacts: t.idList(),
    conversations: t.field({ type: BroadcastConversationsInput }),
  }),
});

const BroadcastTemplateInput = builder.inputType('BroadcastTemplateInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    language: t.string(),
    parameters: t.stringList({ description: 'May use {{contact.name}}, {{contact.email}} and {{contact.phoneNumber}}.' }),
  }),
});

const BroadcastMessageInput = builder.inputType('BroadcastMessageInput', {
  fields: (t) => ({
    type: t.string({ description: 'text (default) or template.' }),
    message: t.string(),
    template: t.field({ type: BroadcastTemplateInput }),
    isEncrypted: t.boolean(),
    silent: t.boolean(),
  }),
});

const CreateBroadcastInput = builder.inputType('CreateBroadcastInput', {
  description: 'The REST body of POST /broadcasts in camelCase.',
  fields: (t) => ({
    name: t.string({ required: true }),
    channelId: t.id(),
    audience: t.field({ type: BroadcastAudienceInput, required: true }),
    message: t.field({ type: BroadcastMessageInput, required: true }),
    ratePerSecond: t.int(),
    startAt: t.field({ type: 'DateTime' }),
    idempotencyKey: t.string({ description: IDEMPOTENCY_KEY_DESCRIPTION }),
  }),
});

const GRAPHQL_NAMES: Record<string, string> = {
  channel_id: 'channelId',
  rate_per_second: 'ratePerSecond',
  start_at: 'startAt',
  is_encrypted: 'isEncrypted',
};

/** A REST field path (`message.is_encrypted`) as the GraphQL input's (`message.isEncrypted`). */
const rename = (field: string) =>
  field
    .split('.')
    .map((part) => GRAPHQL_NAMES[part] ?? part)
    .join('.');

builder.queryFields((t) => ({
  broadcast: t.field({
    type: BroadcastObject,
    nullable: true,
    scope: 'read',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => orNull(() => getBroadcast(ctx, String(args.id))),
  }),
  broadcasts: t.field({
    type: BroadcastConnection,
    nullable: true,
    description: 'Broadcasts of the channels the credential acts as, newest first.',
    scope: 'read',
    args: pageArgs,
    complexity: connectionComplexity,
    resolve: (_root, args, ctx) => listBroadcasts(ctx, pageFromArgs(args)),
  }),
}));

builder.mutationFields((t) => ({
  createBroadcast: t.field({
    type: BroadcastPayload,
    scope: 'broadcasts',
    args: { input: t.arg({ type: CreateBroadcastInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { audience, message } = input;
      const payload = await asIdempotentPayload(ctx, {
        operation: 'createBroadcast',
        input,
        run: (guard) =>
          createBroadcast(
            ctx,
            {
              name: input.name,
              channel_id: input.channelId == null ? undefined : String(input.channelId),
              audience: {
                contacts: audience.contacts?.map(String),
                conversations: audience.conversations ?? undefined,
              },
              message: {
                type: message.type,
                message: message.message,
                template: message.template,
                is_encrypted: message.isEncrypted,
                silent: message.silent,
              },
              rate_per_second: input.ratePerSecond,
              start_at: input.startAt ? new Date(input.startAt as Date).toISOString() : undefined,
            },
            guard,
          ),
        rename,
      });
      if (payload.id) ctx.onBroadcastQueued?.();
      return payload;
    },
  }),
  pauseBroadcast: t.field({
    type: BroadcastPayload,
    scope: 'broadcasts',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => payloadOf(async () => accepted(await changeBroadcast(ctx, String(args.id), 'pause'))),
  }),
  resumeBroadcast: t.field({
    type: BroadcastPayload,
    scope: 'broadcasts',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => payloadOf(async () => accepted(await changeBroadcast(ctx, String(args.id), 'resume'))),
  }),
  cancelBroadcast: t.field({
    type: BroadcastPayload,
    scope: 'broadcasts',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => payloadOf(async () => accepted(await changeBroadcast(ctx, String(args.id), 'cancel'))),
  }),
}));

builder.subscriptionField('broadcastUpdated', (t) =>
  t.field({
    type: BroadcastObject,
    description:
      'A broadcast of the channels the credential acts as: its view now, then at most once a second while its counts or status change, and a last time when it finishes or is canceled, after which the stream completes.',
    scope: 'read',
    args: { id: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      // Another workspace's or channel's broadcast is refused here, as `broadcast(id:)` answers it: not found.
      const row = await getBroadcast(ctx, String(args.id));
      const ended = row.status === 'finished' || row.status === 'canceled';
      return broadcastUpdates(ctx.events!, { id: row.id, workspaceId: row.workspaceId, channelId: row.channelId, ended });
    },
    // The broadcast the event names, loaded once for every subscriber of the app (src/realtime/event-loads.ts).
    resolve: async (event, _args, ctx) => {
      const { broadcastId, workspaceId } = event as BroadcastUpdate & { broadcastId: string };
      const load = async () => (await broadcastById(ctx.sql, workspaceId, broadcastId))!;
      return ctx.eventLoads ? ctx.eventLoads.load(event as object, `broadcast:${broadcastId}`, load) : load();
    },
  }),
);
