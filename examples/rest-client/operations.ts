import type { operations } from './api.js';
import { ConnectApiError, unwrap, type Channel, type ConnectClient, type Contact, type Conversation, type Message } from './client.js';

// Each call names its path as the OpenAPI document spells it; openapi-fetch types its
// parameters, body and answer from ./api.d.ts, so a misspelt field or a missing path
// parameter is a compile error rather than a 422 or a 404 at run time.

type JsonBody<Operation extends keyof operations> = operations[Operation]['requestBody'] extends {
  content: { 'application/json': infer Body };
}
  ? Body
  : never;

export type CreateContactInput = JsonBody<'createContact'>;
export type UpdateContactInput = JsonBody<'updateContact'>;
export type SendMessageInput = JsonBody<'sendMessage'>;

/** The channels the credential can act as (the first page: a credential has few). */
export async function listChannels(client: ConnectClient): Promise<Channel[]> {
  return unwrap(await client.GET('/api/connect/channels', { params: { query: { limit: 100 } } })).data;
}

export async function getContact(client: ConnectClient, id: string): Promise<Contact> {
  return unwrap(await client.GET('/api/connect/contacts/{contact}', { params: { path: { contact: id } } })).data.contact;
}

/**
 * The contact with this email (else this phone), created when there is none. When the
 * create is refused because another contact holds the email or phone — one created by a
 * concurrent caller, or the phone's owner under another email — that contact is returned:
 * the API names it in the 422's `conflict`.
 */
export async function findOrCreateContact(
  client: ConnectClient,
  details: CreateContactInput,
): Promise<{ contact: Contact; created: boolean }> {
  const email = details.email ?? undefined;
  const phone = details.phone ?? undefined;
  if (!email && !phone) throw new TypeError('findOrCreateContact needs an email or a phone to look the contact up by.');

  const found = await client.GET('/api/connect/contacts/find', { params: { query: email ? { email } : { phone } } });
  if (found.response.status !== 404) return { contact: unwrap(found).data.contact, created: false };

  const created = await client.POST('/api/connect/contacts', { body: details });
  if (created.response.status === 422) {
    const refusal = new ConnectApiError(422, created.error, created.response.headers);
    if (refusal.conflict) return { contact: await getContact(client, refusal.conflict.contactId), created: false };
    throw refusal;
  }
  return { contact: unwrap(created).data.contact, created: true };
}

/**
 * Changes a contact's name, email or phone; `null` clears email or phone (a contact keeps
 * at least one). A refused change throws ConnectApiError with the messages per field.
 */
export async function updateContact(client: ConnectClient, id: string, changes: UpdateContactInput): Promise<Contact> {
  return unwrap(await client.PATCH('/api/connect/contacts/{contact}', { params: { path: { contact: id } }, body: changes })).data.contact;
}

/**
 * Every contact (matching `search`, when given), newest first, fetching a page at a time
 * by following `meta.next_cursor` until the last page. Stop iterating to stop fetching.
 */
export async function* allContacts(client: ConnectClient, options: { search?: string; pageSize?: number } = {}): AsyncGenerator<Contact> {
  let cursor: string | undefined;
  do {
    const query = { limit: options.pageSize ?? 100, ...(options.search ? { search: options.search } : {}), ...(cursor ? { cursor } : {}) };
    const page = unwrap(await client.GET('/api/connect/contacts', { params: { query } }));
    yield* page.data;
    cursor = page.meta.next_cursor ?? undefined;
  } while (cursor);
}

/**
 * Sends a text message. The Idempotency-Key makes the call safe to repeat after a timeout
 * or a dropped connection: the same key with the same input within 24 hours returns the
 * first answer (`replayed: true`) instead of sending again; the same key with another
 * input is a 422 on `Idempotency-Key`. Use one key per message you mean to send.
 */
export async function sendText(
  client: ConnectClient,
  input: { to: NonNullable<SendMessageInput['to']>; message: string; from?: string },
  idempotencyKey: string,
): Promise<{ message: Message; replayed: boolean }> {
  const result = await client.POST('/api/connect/messages', {
    params: { header: { 'Idempotency-Key': idempotencyKey } },
    body: { type: 'text', ...input },
  });
  const { message } = unwrap(result).data;
  return { message, replayed: result.response.headers.get('Idempotent-Replayed') === 'true' };
}

/** Closes a conversation; closing a closed one changes nothing. */
export async function closeConversation(client: ConnectClient, id: string): Promise<Conversation> {
  return unwrap(await client.POST('/api/connect/conversations/{id}/close', { params: { path: { id } } })).data.conversation;
}

/**
 * Reopens a conversation; reopening an open one changes nothing. A contact has at most one
 * open conversation per channel, so reopening while another is open is a 422.
 */
export async function reopenConversation(client: ConnectClient, id: string): Promise<Conversation> {
  return unwrap(await client.POST('/api/connect/conversations/{id}/reopen', { params: { path: { id } } })).data.conversation;
}
