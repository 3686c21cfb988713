import type { Contact } from '../../generated/prisma/client.js';
import type { RestRouter } from '../../rest/router.js';
import { json } from '../../rest/http.js';
import { idempotentWrite } from '../../rest/idempotency.js';
import { pageParams } from '../../lib/pagination.js';
import { collection } from '../../rest/collection.js';
import { contactView, createContact, findContact, getContact, listContacts, updateContact } from './contacts.service.js';

/**
 * `?phone=+31…` sent without encoding the `+` arrives as a space; a number that
 * is a space followed by digits can only have meant the `+`.
 */
function plusRestored(phone: string | null): string | null {
  return phone && /^ \d+$/.test(phone) ? `+${phone.slice(1)}` : phone;
}

export function registerContactRoutes(router: RestRouter): void {
  router.on('GET', '/contacts', async ({ ctx, url }) => {
    const page = await listContacts(ctx, { ...pageParams(url.searchParams), search: url.searchParams.get('search') });
    return collection(page, contactView);
  });

  router.on('POST', '/contacts', async ({ ctx, body, request }) => {
    const input = await body();
    return idempotentWrite<Contact>(ctx, request, {
      route: 'POST /contacts',
      body: input,
      render: (contact) => ({ status: 201, body: { data: { contact: contactView(contact) } } }),
      run: (guard) => createContact(ctx, input, guard),
    });
  });

  router.on('GET', '/contacts/find', async ({ ctx, url }) => {
    const contact = await findContact(ctx, { email: url.searchParams.get('email'), phone: plusRestored(url.searchParams.get('phone')) });
    return json(200, { data: { contact: contactView(contact) } });
  });

  router.on('GET', '/contacts/:contact', async ({ ctx, params }) => {
    const contact = await getContact(ctx, params.contact ?? '');
    return json(200, { data: { contact: contactView(contact) } });
  });

  router.on('PATCH', '/contacts/:contact', async ({ ctx, params, body }) => {
    const contact = await updateContact(ctx, params.contact ?? '', await body());
    return json(200, { data: { contact: contactView(contact) } });
  });
}
