import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { GraphQLRequestError, registerDocuments, subscriptionClient, type ConnectOptions } from '../../examples/graphql-client/client.js';
import { getViewer, listContacts, onMessageAdded, sendMessage } from '../../examples/graphql-client/operations.js';
import {
  ConnectApiError,
  createConnectClient,
  unwrap,
  type Channel,
  type ConnectClient,
  type ConnectOptions as RestConnectOptions,
  type Contact,
} from '../../examples/rest-client/client.js';
import {
  allContacts,
  closeConversation,
  findOrCreateContact,
  getContact,
  listChannels,
  reopenConversation,
  sendText,
  updateContact,
} from '../../examples/rest-client/operations.js';
import { onPostgres } from '../helpers/app.js';
import { startServer, waitFor, type ServerProcess } from '../helpers/server-process.js';

// The examples are run as their readers would run them: over real HTTP against `npm start`'s
// entry point with the demo workspace, whose hostname `localhost` is what fetch sends as
// Host. The embedded database is enough; the clients do not depend on the database kind.

/** A server on a fresh in-memory demo workspace, with the key its banner prints. */
async function startDemoServer(): Promise<{ server: ServerProcess; options: { baseUrl: string; apiKey: string } }> {
  const server = startServer({ PGLITE_DIR: 'memory://', SEED_DEMO: '1' });
  try {
    const port = new URL(await server.listening).port;
    await waitFor(server, /GraphiQL: /);
    const apiKey = /Bearer (cak_[\w-]+)/.exec(server.output())?.[1];
    expect(apiKey, server.output()).toBeDefined();
    return { server, options: { baseUrl: `http://localhost:${port}`, apiKey: apiKey! } };
  } catch (error) {
    await stop(server);
    throw error;
  }
}

async function stop(server: ServerProcess | undefined): Promise<void> {
  if (!server) return;
  server.child.kill('SIGTERM');
  await server.exited;
}

/** What a promise rejected with (failing the test when it resolved). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

describe.skipIf(onPostgres)('the typed GraphQL client example against a live server', () => {
  let server: ServerProcess | undefined;
  let options: ConnectOptions;

  beforeAll(async () => {
    ({ server, options } = await startDemoServer());
  });

  afterAll(() => stop(server));

  // The tests after this one run on the documents it registers, as a deployed client does.
  it('sends document ids only: unknown until the deploy step registers the manifest, which stores nothing new the second time', async () => {
    const manifest = JSON.parse(readFileSync('examples/graphql-client/gql/persisted-documents.json', 'utf8')) as Record<string, string>;
    const unknown = await getViewer(options).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(GraphQLRequestError);
    expect((unknown as GraphQLRequestError).errors).toEqual([{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }]);

    expect(await registerDocuments(options, manifest)).toBe(Object.keys(manifest).length);
    expect(await registerDocuments(options, manifest)).toBe(0);
    const [id, text] = Object.entries(manifest)[0]!;
    await expect(registerDocuments(options, { [id]: `${text} ` })).rejects.toThrow(`HTTP 422: ${id}: The key is not the SHA-256 of its document.`);
  });

  it('queries the viewer: the demo workspace and its channel', async () => {
    const viewer = await getViewer(options);
    expect(viewer.workspace).toEqual({ id: expect.any(String), name: 'Demo workspace' });
    expect(viewer.channel).toMatchObject({ name: 'Demo channel', type: 'whatsapp', status: 'active' });
  });

  it('throws GraphQLRequestError for a bad credential, with its status and code', async () => {
    const failure = await getViewer({ ...options, apiKey: 'cak_not-a-key' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GraphQLRequestError);
    expect((failure as GraphQLRequestError).status).toBe(401);
    expect((failure as GraphQLRequestError).errors[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('sends a message, returns a refused input as userErrors, and lists the new contact', async () => {
    const refused = await sendMessage(options, { message: 'Nobody to send this to' });
    expect(refused).toEqual({
      ok: false,
      userErrors: [{ field: ['input', 'to'], message: 'A recipient is required: give to, contact or sender.', code: 'INVALID' }],
    });

    const sent = await sendMessage(options, { to: { name: 'Ada', email: 'ada@example.com' }, message: 'Hello from the example' });
    if (!sent.ok) throw new Error(`refused: ${JSON.stringify(sent.userErrors)}`);
    expect(sent.message).toMatchObject({ body: 'Hello from the example', status: 'queued' });

    const { contacts, pageInfo } = await listContacts(options, { search: 'ada@example.com' });
    expect(contacts).toEqual([expect.objectContaining({ id: sent.message.contactId, name: 'Ada', email: 'ada@example.com' })]);
    expect(pageInfo.hasNextPage).toBe(false);
  });

  it('subscribes to messageAdded, receives the message sent after subscribing, then is disposed', async () => {
    const client = subscriptionClient(options);
    try {
      const added = onMessageAdded(client);
      await added.connected;
      // The server starts listening for events as the stream begins, a moment after it is accepted.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const sent = await sendMessage(options, { to: { phone: '+14155550123' }, message: 'Live over SSE' });
      if (!sent.ok) throw new Error(`refused: ${JSON.stringify(sent.userErrors)}`);

      const events = added[Symbol.asyncIterator]();
      const first = await events.next();
      // Messages sent before subscribing (by the tests above) are not replayed.
      expect(first).toEqual({
        done: false,
        value: expect.objectContaining({ id: sent.message.id, body: 'Live over SSE', sender: { type: 'channel', name: 'Demo channel' } }),
      });

      added.dispose();
      expect(await events.next()).toEqual({ done: true, value: undefined });
    } finally {
      client.dispose();
    }
  });

  it('rejects `connected` when the server refuses the stream', async () => {
    const client = subscriptionClient({ ...options, apiKey: 'cak_not-a-key' });
    try {
      const added = onMessageAdded(client);
      await expect(added.connected).rejects.toThrow();
      await expect(added[Symbol.asyncIterator]().next()).rejects.toThrow();
    } finally {
      client.dispose();
    }
  });
});

describe.skipIf(onPostgres)('the typed REST client example against a live server', () => {
  let server: ServerProcess | undefined;
  let options: RestConnectOptions;
  let client: ConnectClient;

  beforeAll(async () => {
    ({ server, options } = await startDemoServer());
    client = createConnectClient(options);
  });

  afterAll(() => stop(server));

  it('lists the channels the key acts as, typed by the document', async () => {
    const channels = await listChannels(client);
    expect(channels).toEqual([{ id: expect.any(String), name: 'Demo channel', type: 'whatsapp', status: 'active' }]);

    // The answer's type is inferred through openapi-fetch and unwrap, not declared by hand.
    const page = unwrap(await client.GET('/api/connect/channels'));
    expectTypeOf(page.data).toEqualTypeOf<Channel[]>();
    expectTypeOf(page.meta.next_cursor).toEqualTypeOf<string | null>();
    expect(page.meta).toEqual({ per_page: 25, next_cursor: null, has_more: false });
  });

  it('throws ConnectApiError for a bad credential, with its status and the API message', async () => {
    const failure = await rejection(listChannels(createConnectClient({ ...options, apiKey: 'cak_not-a-key' })));
    expect(failure).toBeInstanceOf(ConnectApiError);
    expect(failure).toMatchObject({ status: 401, message: 'Unauthenticated.', errors: {} });
  });

  it('sends the chosen channel as X-Channel-Uuid: messages go out on it, and a channel the key cannot act as is a 401', async () => {
    const [channel] = await listChannels(client);
    const pinned = createConnectClient({ ...options, channelId: channel!.id });
    const { message } = await sendText(pinned, { to: { phone: '+14155550100' }, message: 'On the chosen channel' }, randomUUID());
    expect(message.channelId).toBe(channel!.id);

    const stranger = createConnectClient({ ...options, channelId: randomUUID() });
    expect(await rejection(listChannels(stranger))).toMatchObject({ status: 401 });
  });

  it('finds or creates a contact: created once, then found by email or by phone, or named by a conflict', async () => {
    const first = await findOrCreateContact(client, { name: 'Grace Hopper', email: 'grace@example.com', phone: '+14155550101' });
    expect(first).toEqual({
      created: true,
      contact: expect.objectContaining({ name: 'Grace Hopper', email: 'grace@example.com', phoneNumber: '+14155550101', isGroup: false }),
    });
    const id = first.contact.id;

    expect(await findOrCreateContact(client, { name: 'Grace', email: 'GRACE@example.com' })).toEqual({ created: false, contact: first.contact });
    // A `+` in the query string must be sent encoded, or it arrives as a space.
    expect(await findOrCreateContact(client, { name: 'Grace', phone: '+14155550101' })).toMatchObject({ created: false, contact: { id } });
    // Another email with Grace's phone: the create is refused, and its conflict names Grace.
    expect(await findOrCreateContact(client, { name: 'Someone Else', email: 'else@example.com', phone: '+14155550101' })).toMatchObject({
      created: false,
      contact: { id },
    });
    expect((await collect(allContacts(client, { search: '4155550101' }))).map((contact) => contact.id)).toEqual([id]);

    const refused = await rejection(findOrCreateContact(client, { name: 'Nobody', email: 'not an email' }));
    expect(refused).toBeInstanceOf(ConnectApiError);
    expect(refused).toMatchObject({ status: 422, errors: { email: ['The email must be a valid email address.'] }, conflict: undefined });
  });

  it('updates a contact, and surfaces a refused update as ConnectApiError with the messages per field', async () => {
    const { contact } = await findOrCreateContact(client, { name: 'Alan Turing', email: 'alan@example.com' });
    const updated = await updateContact(client, contact.id, { name: 'Alan M. Turing', phone: '+31612345678' });
    expect(updated).toMatchObject({ id: contact.id, name: 'Alan M. Turing', email: 'alan@example.com', phoneNumber: '+31612345678' });
    // @ts-expect-error The view's field is `phoneNumber`; `phone` is only a request field.
    expect(updated.phone).toBeUndefined();

    const failure = await rejection(updateContact(client, contact.id, { email: 'not an email', phone: '12' }));
    expect(failure).toBeInstanceOf(ConnectApiError);
    const { status, errors, message } = failure as ConnectApiError;
    expect(status).toBe(422);
    expect(Object.keys(errors).sort()).toEqual(['email', 'phone']);
    expect(errors.email).toEqual(['The email must be a valid email address.']);
    expect(message).toBe(errors.email![0]);
    expect(await getContact(client, contact.id)).toEqual(updated);

    // `null` clears the email; the contact keeps its phone.
    expect(await updateContact(client, contact.id, { email: null })).toMatchObject({ email: null, phoneNumber: '+31612345678' });
  });

  it('rejects at compile time what the API would refuse at run time', async () => {
    const { contact } = await findOrCreateContact(client, { name: 'Edsger Dijkstra', email: 'edsger@example.com' });
    // @ts-expect-error The request field is `phone`; `phoneNumber` is the view's name for it.
    const misspelt = await rejection(updateContact(client, contact.id, { phoneNumber: '+31201234567' }));
    expect(misspelt).toMatchObject({ status: 422, errors: { body: [expect.any(String)] } });

    // @ts-expect-error The path parameter is required.
    const unfilled = await client.GET('/api/connect/contacts/{contact}', {});
    expect(unfilled.response.status).toBe(404);
    expect(unfilled.error).toEqual({ status: 'error', message: 'Contact not found.' });

    expectTypeOf<Contact['phoneNumber']>().toEqualTypeOf<string | null>();
    expectTypeOf(sendText).parameter(1).toHaveProperty('to').toEqualTypeOf<string | { name?: string | null; email?: string | null; phone?: string | null }>();
  });

  it('sends a text with an Idempotency-Key: a retry replays the same message, another input under that key is refused', async () => {
    const key = randomUUID();
    const input = { to: { name: 'Linus', phone: '+14155550102' }, message: 'Sent once' };
    const first = await sendText(client, input, key);
    expect(first).toEqual({ replayed: false, message: expect.objectContaining({ type: 'text', body: 'Sent once', status: 'queued', direction: 'outbound' }) });

    const retried = await sendText(client, input, key);
    expect(retried).toEqual({ replayed: true, message: first.message });
    const listed = unwrap(await client.GET('/api/connect/messages', { params: { query: { contact_id: first.message.contactId } } }));
    expect(listed.data.map((message) => message.id)).toEqual([first.message.id]);

    const reused = await rejection(sendText(client, { ...input, message: 'Something else' }, key));
    expect(reused).toBeInstanceOf(ConnectApiError);
    expect(reused).toMatchObject({ status: 422, errors: { 'Idempotency-Key': [expect.any(String)] } });

    const unknown = await rejection(sendText(client, { to: 'not-a-contact', message: 'Nobody' }, randomUUID()));
    expect(unknown).toMatchObject({ status: 422, errors: { to: [expect.any(String)] } });
  });

  it('walks every page of contacts with the cursor, visiting each contact exactly once', async () => {
    const tag = `paged-${randomUUID().slice(0, 8)}`;
    const ids: string[] = [];
    for (let i = 1; i <= 7; i += 1) {
      ids.push((await findOrCreateContact(client, { name: `${tag} ${i}`, email: `${tag}-${i}@example.com` })).contact.id);
    }

    // A client of its own, recording the pages it asked for.
    const paging = createConnectClient(options);
    const requested: URL[] = [];
    paging.use({ onRequest: ({ request }) => void requested.push(new URL(request.url)) });

    const visited = (await collect(allContacts(paging, { search: tag, pageSize: 3 }))).map((contact) => contact.id);
    expect(visited).toHaveLength(7);
    expect(new Set(visited).size).toBe(7);
    expect([...visited].sort()).toEqual([...ids].sort());
    expect(requested.map((url) => url.searchParams.get('limit'))).toEqual(['3', '3', '3']);
    expect(requested[0]!.searchParams.has('cursor')).toBe(false);
    expect(requested.slice(1).every((url) => url.searchParams.get('cursor'))).toBe(true);

    // Every contact of the workspace, in pages of two, in the order of one big page.
    const everything = (await collect(allContacts(client, { pageSize: 2 }))).map((contact) => contact.id);
    const onePage = unwrap(await client.GET('/api/connect/contacts', { params: { query: { limit: 100 } } }));
    expect(onePage.meta.has_more).toBe(false);
    expect(everything).toEqual(onePage.data.map((contact) => contact.id));
    expect(new Set(everything).size).toBe(everything.length);
  });

  it('closes and reopens a conversation, each a no-op when repeated', async () => {
    const { message } = await sendText(client, { to: { email: 'ada@example.com' }, message: 'About your order' }, randomUUID());
    const id = message.conversationId;

    const closed = await closeConversation(client, id);
    expect(closed).toMatchObject({ id, status: 'closed', contactId: message.contactId, closedAt: expect.any(String) });
    expect(closed.stateChanges.map((change) => change.type)).toEqual(['opened', 'closed']);
    expect(closed.stateChanges[1]!.actor).toMatchObject({ type: 'channel', name: 'Demo channel' });
    expect((await closeConversation(client, id)).stateChanges).toEqual(closed.stateChanges);

    const reopened = await reopenConversation(client, id);
    expect(reopened).toMatchObject({ id, status: 'open', closedAt: null });
    expect(reopened.stateChanges.map((change) => change.type)).toEqual(['opened', 'closed', 'reopened']);
    expect((await reopenConversation(client, id)).stateChanges).toEqual(reopened.stateChanges);

    const missing = await rejection(closeConversation(client, randomUUID()));
    expect(missing).toBeInstanceOf(ConnectApiError);
    expect(missing).toMatchObject({ status: 404, message: 'Conversation not found.' });
  });
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
