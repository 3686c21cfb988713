import type { Contact } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import { pageLoader } from '../../graphql/rows.js';
import { connectionType, connectionComplexity, pageArgs, pageFromArgs } from '../../graphql/connection.js';
import { UserError, payloadType, type UserErrorShape } from '../../graphql/user-errors.js';
import { selectionQuery } from '../../graphql/selection.js';
import { toUserErrors } from '../../graphql/errors.js';
import { asPayload, orNull } from '../../graphql/results.js';
import { IDEMPOTENCY_KEY_DESCRIPTION, asIdempotentPayload } from '../idempotency/idempotency.graphql.js';
import { createContact, findContact, getContact, listContacts, updateContact } from './contacts.service.js';
import { importContactsFor, type ImportResult } from './contacts.import.js';

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

const ImportContactRowInput = builder.inputType('ImportContactRowInput', {
  description: 'A contact as createContact takes it: a name, and an email and/or a phone.',
  fields: (t) => ({
    name: t.string({ required: true }),
    email: t.string(),
    phone: t.string({ description: 'E.164: a leading +, the country code and digits only.' }),
  }),
});

const ImportContactsInput = builder.inputType('ImportContactsInput', {
  fields: (t) => ({
    contacts: t.field({ type: [ImportContactRowInput], required: true, description: '1 to 10,000 contacts.' }),
    channelId: t.id({
      description: 'The channel created contacts are linked to: one the credential can act as. Needed, unless X-Channel-Uuid names one, by a credential of several channels.',
    }),
  }),
});

const ContactImportStatusEnum = builder.enumType('ContactImportStatus', {
  values: {
    created: { description: 'A new contact, linked to the channel.' },
    matched: { description: 'A contact holding the row\'s email (any case) or phone (any stored form) already existed, or an earlier row of the call had it; it is left as it is.' },
    failed: { description: 'The row breaks a rule of createContact: see its userErrors. Nothing of it is stored.' },
  } as const,
});

/** The contacts of one import, read together (one statement) the first time a row's `contact` is resolved. */
interface ImportedContacts {
  ids: string[];
  rows?: Promise<Map<string, object>>;
}

interface ImportRowShape {
  result: ImportResult;
  contacts: ImportedContacts;
}

const ContactImportRow = builder.objectRef<ImportRowShape>('ContactImportRow').implement({
  description: "One row's outcome, in the order sent.",
  fields: (t) => ({
    index: t.int({ description: "The row's position in `input.contacts`, from 0.", resolve: (row) => row.result.index }),
    status: t.field({ type: ContactImportStatusEnum, resolve: (row) => row.result.status }),
    contact: t.field({
      type: ContactObject,
      nullable: true,
      description: 'The contact created or matched; null for a failed row.',
      resolve: async ({ result, contacts }, _args, ctx, info) => {
        if (!result.id) return null;
        // The selection is the same for every row: the first row plans it and reads all of them.
        contacts.rows ??= ctx.prisma.contact
          .findMany({ ...selectionQuery(ctx, info), where: { id: { in: contacts.ids }, workspaceId: ctx.auth.workspace.id } })
          .then((found) => new Map(found.map((contact) => [contact.id, contact])));
        return ((await contacts.rows).get(result.id) ?? null) as Contact | null;
      },
    }),
    userErrors: t.field({
      type: [UserError],
      description: 'Why the row failed, on its input path (["input", "contacts", "3", "email"]); empty otherwise.',
      resolve: ({ result }) =>
        Object.entries(result.errors ?? {}).flatMap(([key, messages]) =>
          messages.map((message) => ({
            // A row that is not an object fails on `body`: the row itself.
            field: ['input', 'contacts', String(result.index), ...(key === 'body' ? [] : key.split('.'))],
            message,
            code: 'INVALID' as const,
          })),
        ),
    }),
  }),
});

interface ImportPayloadShape {
  results: ImportRowShape[] | null;
  userErrors: UserErrorShape[];
}

const ImportContactsPayload = builder.objectRef<ImportPayloadShape>('ImportContactsPayload').implement({
  fields: (t) => ({
    results: t.field({ type: [ContactImportRow], nullable: true, description: 'One per row, in order; null when the input as a whole was refused.', resolve: (payload) => payload.results }),
    userErrors: t.field({ type: [UserError], description: 'Why the input as a whole was refused (too few or too many rows, a channel the credential cannot act as).', resolve: (payload) => payload.userErrors }),
  }),
});

builder.mutationField('importContacts', (t) =>
  t.field({
    type: ImportContactsPayload,
    description:
      'POST /contacts/import over GraphQL (docs/contacts.md): each row is created, matched by its email or phone to a contact that holds it, or failed with its userErrors; a row is stored whole or not at all. Backend credentials only: a session is refused (FORBIDDEN).',
    scope: 'credentials',
    args: { input: t.arg({ type: ImportContactsInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      try {
        const results = await importContactsFor(ctx, { contacts: input.contacts }, input.channelId == null ? null : String(input.channelId));
        const contacts: ImportedContacts = { ids: results.flatMap((row) => (row.id ? [row.id] : [])) };
        return { results: results.map((result) => ({ result, contacts })), userErrors: [] };
      } catch (error) {
        const userErrors = toUserErrors(error);
        if (!userErrors) throw error;
        return { results: null, userErrors };
      }
    },
  }),
);
