import type { Contact } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import { pageLoader } from '../../graphql/rows.js';
import { connectionType, connectionComplexity, pageArgs, pageFromArgs } from '../../graphql/connection.js';
import { payloadType } from '../../graphql/user-errors.js';
import { asPayload, orNull } from '../../graphql/results.js';
import { IDEMPOTENCY_KEY_DESCRIPTION, asIdempotentPayload } from '../idempotency/idempotency.graphql.js';
import { createContact, findContact, getContact, listContacts, updateContact } from './contacts.service.js';

const OptOutSourceEnum = builder.enumType('OptOutSource', {
  values: {
    keyword: { description: 'The contact sent an opt-out keyword (STOP, UNSUBSCRIBE, …) to the channel.' },
    provider: { description: "The channel's provider refused a send because the contact opted out there." },
  } as const,
});

builder.prismaObject('ContactOptOut', {
  description: 'A channel the contact opted out of: broadcasts skip the contact there; one-to-one messages still go.',
  fields: (t) => ({
    channelId: t.exposeID('channelId'),
    at: t.expose('at', { type: 'DateTime' }),
    source: t.field({ type: OptOutSourceEnum, select: { source: true }, resolve: (optOut) => optOut.source as 'keyword' | 'provider' }),
  }),
});

export const ContactObject = builder.prismaObject('Contact', {
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    email: t.exposeString('email', { nullable: true }),
    phoneNumber: t.exposeString('phone', { nullable: true, description: 'E.164, or a legacy number as stored.' }),
    isGroup: t.exposeBoolean('isGroup'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    optOuts: t.relation('optOuts', { query: { orderBy: [{ at: 'asc' }, { channelId: 'asc' }] } }),
  }),
});

export const ContactConnection = connectionType('Contact', ContactObject);

/** How a page of `contacts` loads its rows. */
const contactsPage = pageLoader<Contact>();

builder.queryFields((t) => ({
  contact: t.prismaField({
    type: 'Contact',
    nullable: true,
    scope: 'read',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => orNull(() => getContact(ctx, String(args.id), query)),
  }),
  findContact: t.prismaField({
    type: 'Contact',
    nullable: true,
    scope: 'read',
    description: 'Exact match by email (any case) or phone (E.164 and stored variants); email decides when both are given.',
    args: { email: t.arg.string(), phone: t.arg.string() },
    resolve: (query, _root, args, ctx) => orNull(() => findContact(ctx, args, query)),
  }),
  contacts: t.field({
    type: ContactConnection,
    nullable: true,
    description: 'Live contacts of the workspace, newest first.',
    scope: 'read',
    args: { ...pageArgs, search: t.arg.string() },
    complexity: connectionComplexity,
    resolve: (_root, args, ctx, info) =>
      listContacts(ctx, { ...pageFromArgs(args), search: args.search }, contactsPage(ctx, info)),
  }),
}));

const CreateContactInput = builder.inputType('CreateContactInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    email: t.string(),
    phone: t.string({ description: 'E.164: a leading +, the country code and digits only.' }),
    channelId: t.id({
      description: 'The channel the contact is linked to: one the credential can act as. Needed, unless X-Channel-Uuid names one, by a credential of several channels.',
    }),
    idempotencyKey: t.string({ description: IDEMPOTENCY_KEY_DESCRIPTION }),
  }),
});

const UpdateContactInput = builder.inputType('UpdateContactInput', {
  description: 'Omitted fields stay unchanged; null or a blank string clears email or phone.',
  fields: (t) => ({
    name: t.string(),
    email: t.string(),
    phone: t.string(),
  }),
});

const ContactPayload = payloadType('Contact', 'contact', (ctx, id, query) => ctx.prisma.contact.findUnique({ ...query, where: { id } }));

builder.mutationFields((t) => ({
  createContact: t.field({
    type: ContactPayload,
    scope: 'contacts',
    args: { input: t.arg({ type: CreateContactInput, required: true }) },
    resolve: (_root, args, ctx) =>
      asIdempotentPayload(ctx, {
        operation: 'createContact',
        input: args.input,
        run: (guard) => {
          const { channelId, ...input } = args.input;
          return createContact(ctx, input, guard, channelId == null ? null : String(channelId));
        },
      }),
  }),
  updateContact: t.field({
    type: ContactPayload,
    scope: 'contacts',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateContactInput, required: true }) },
    resolve: (_root, args, ctx) => asPayload(() => updateContact(ctx, String(args.id), args.input)),
  }),
}));
