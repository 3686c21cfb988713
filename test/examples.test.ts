import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLRequestError, subscriptionClient, type ConnectOptions } from '../examples/graphql-client/client.js';
import { getViewer, listContacts, onMessageAdded, sendMessage } from '../examples/graphql-client/operations.js';
import { onPostgres } from './helpers/app.js';
import { startServer, waitFor, type ServerProcess } from './helpers/server-process.js';

// The example is run as its readers would run it: over real HTTP against `npm start`'s
// entry point with the demo workspace, whose hostname `localhost` is what fetch sends as
// Host. The embedded database is enough; the client does not depend on the database kind.
describe.skipIf(onPostgres)('the typed GraphQL client example against a live server', () => {
  let server: ServerProcess;
  let options: ConnectOptions;

  beforeAll(async () => {
    server = startServer({ PGLITE_DIR: 'memory://', SEED_DEMO: '1' });
    const port = new URL(await server.listening).port;
    await waitFor(server, /GraphiQL: /);
    const apiKey = /Bearer (cak_[\w-]+)/.exec(server.output())?.[1];
    expect(apiKey, server.output()).toBeDefined();
    options = { baseUrl: `http://localhost:${port}`, apiKey: apiKey! };
  });

  afterAll(async () => {
    if (!server) return;
    server.child.kill('SIGTERM');
    await server.exited;
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
