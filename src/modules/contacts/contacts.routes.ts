import { z } from 'zod';
import { json } from '../../http/exchange.js';
import { idempotentWrite } from '../idempotency/idempotency.rest.js';
import { pageQuerySchema, type Page } from '../../lib/pagination.js';
import { collection } from '../../rest/collection.js';
import { route } from '../../rest/route.js';
import { apiUuid, collectionEnvelope, resourceEnvelope } from '../../rest/schemas.js';
import { CONTACT_VIEW_QUERY, createContact, findContact, getContact, listContacts, updateContact } from './contacts.service.js';
import { contactTable, type ContactRow } from './contacts.sql.js';
import { contactFiltersSchema, contactViewSchema, createContactSchema, findContactSchema, importContactsSchema, importResultSchema, updateContactSchema } from './contacts.schemas.js';
import { importContactsFor } from './contacts.import.js';

const contactEnvelope = resourceEnvelope('contact', contactViewSchema);
const contactParams = z.object({ contact: apiUuid.meta({ description: 'The contact UUID.' }) });

/**
 * `?phone=+31…` or `?email=ann+tag@…` sent without encoding the `+` arrives with a
 * space: a number that is a space followed by digits, or an address holding a
 * space inside it, can only have meant the `+`.
 */
function plusRestored(query: unknown): unknown {
  if (typeof query !== 'object' || query === null) return query;
  const { phone, email } = query as { phone?: unknown; email?: unknown };
  return {
    ...query,
    ...(typeof phone === 'string' && /^ \d+$/.test(phone) ? { phone: `+${phone.slice(1)}` } : {}),
    ...(typeof email === 'string' && /^\S+( +\S+)+$/.test(email.trim()) && email.includes('@') ? { email: email.trim().replace(/ /g, '+') } : {}),
  };
}

export const contactRoutes = [
  route({
    method: 'GET',
    path: '/contacts',
    operationId: 'listContacts',
    scope: 'read',
    tag: 'Contacts',
    summary: 'List contacts',
    description: "The workspace's contacts, newest first. `search` matches name, email or phone.",
    query: pageQuerySchema.extend(contactFiltersSchema.shape),
    responses: { 200: { description: 'A page of contacts.', schema: collectionEnvelope(contactViewSchema) } },
    handler: async ({ ctx, query }) => collection((await listContacts(ctx, query)) as Page<ContactRow>, contactTable.view),
  }),

  route({
    method: 'POST',
    path: '/contacts',
    operationId: 'createContact',
    scope: 'contacts',
    tag: 'Contacts',
    summary: 'Create a contact',
    description: 'A name and at least one of email or phone; the contact is linked to the acting channel.',
    idempotent: true,
    body: createContactSchema,
    responses: { 201: { description: 'The contact was created.', schema: contactEnvelope } },
    handler: async ({ ctx, body, request }) => {
      const input = await body();
      return idempotentWrite<ContactRow>(ctx, request, {
        route: 'POST /contacts',
        body: input,
        render: (contact) => ({ status: 201, body: { data: { contact: contactTable.view(contact) } } }),
        run: (guard) => createContact(ctx, input, guard),
      });
    },
  }),

  route({
    method: 'POST',
    path: '/contacts/import',
    operationId: 'importContacts',
    scope: 'credentials',
    tag: 'Contacts',
    summary: 'Import contacts',
    description:
      'Up to 10,000 contacts (a body of up to 8 MiB), each with the rules of POST /contacts. A row whose email (any case) or phone (any stored form) a contact holds is `matched` and left as it is; a new one is `created` and linked to the acting channel; an invalid one `failed` with its field messages. A row is stored whole or not at all. Backend credentials only.',
    body: importContactsSchema,
    bodyLimitBytes: 8 * 1024 * 1024,
    responses: { 200: { description: 'Each row\'s outcome, in the order sent.', schema: z.object({ data: z.object({ results: z.array(importResultSchema) }) }) } },
    handler: async ({ ctx, body }) => json(200, { data: { results: await importContactsFor(ctx, await body()) } }),
  }),

  route({
    method: 'GET',
    path: '/contacts/find',
    operationId: 'findContact',
    scope: 'read',
    tag: 'Contacts',
    summary: 'Find a contact by email or phone',
    description: 'An exact match; a phone matches through its E.164 form and the forms it was imported under.',
    query: z.preprocess(plusRestored, findContactSchema),
    failures: [404],
    responses: { 200: { description: 'The contact.', schema: contactEnvelope } },
    handler: async ({ ctx, query }) => json(200, { data: { contact: contactTable.view((await findContact(ctx, query, CONTACT_VIEW_QUERY)) as ContactRow) } }),
  }),

  route({
    method: 'GET',
    path: '/contacts/:contact',
    operationId: 'getContact',
    scope: 'read',
    tag: 'Contacts',
    summary: 'Get a contact',
    params: contactParams,
    failures: [404],
    responses: { 200: { description: 'The contact.', schema: contactEnvelope } },
    handler: async ({ ctx, params }) => json(200, { data: { contact: contactTable.view((await getContact(ctx, params.contact, CONTACT_VIEW_QUERY)) as ContactRow) } }),
  }),

  route({
    method: 'PATCH',
    path: '/contacts/:contact',
    operationId: 'updateContact',
    scope: 'contacts',
    tag: 'Contacts',
    summary: 'Update a contact',
    description:
      'Any of name, email and phone (spec §4.1). `null` or an empty string clears email or phone, but a contact keeps at least one of them; its current value sent exactly as stored is accepted and changes nothing.',
    params: contactParams,
    // Parsed by the service under the contact's row lock: the stored values take part in the rules.
    body: updateContactSchema({ email: null, phone: null }),
    failures: [404],
    responses: { 200: { description: 'The updated contact.', schema: contactEnvelope } },
    handler: async ({ ctx, params, body }) => json(200, { data: { contact: contactTable.view(await updateContact(ctx, params.contact, await body())) } }),
  }),
];
