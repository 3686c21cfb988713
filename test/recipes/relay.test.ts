import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayEnvironment, openThread } from '../../examples/relay/client.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { runAdminOn } from '../helpers/admin.js';
import { serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { sessionSetup } from '../helpers/sessions.js';

// Relay (relay-runtime's Environment, its network layer one fetch function) on a browser session's
// token, against a live server on a real port whose workspace runs only registered documents for
// sessions: the registered manifest is the one the Relay compiler wrote for the recipe
// (examples/relay, `npm run relay`), posted as a deploy step posts it. A thread opens on its
// newest twenty messages in reading order (`messages(order: asc, last: 20)`) and walks back
// through older pages with the query `@refetchable` made, which fetches the conversation again by
// `node(id:)`; Relay's connection handler joins the pages into one list.

const manifest = JSON.parse(readFileSync(new URL('../../examples/relay/persisted-documents.json', import.meta.url), 'utf8')) as Record<string, string>;

let app: TestApp;
let served: ServedApp;
let s: Awaited<ReturnType<typeof sessionSetup>>;

beforeAll(async () => {
  // fetch sends the URL's host: the workspace is named by X-Forwarded-Host, which the server trusts here.
  app = await createTestApp({ TRUST_PROXY: '1' });
  served = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
  s = await sessionSetup(app);
  const registered = await s.api.post('/graphql/documents', manifest);
  expect(registered.body).toEqual({ data: { stored: Object.keys(manifest).length } });
  expect((await runAdminOn(app.db, ['workspace:configure', '--hostname', s.host, '--trusted-documents-only', 'on'])).code).toBe(0);
});
afterAll(async () => {
  await served.close();
  await app.close();
});

describe('Relay: a fetch function, a node(id:) refetch, a connection walked backward in reading order', () => {
  it("opens a thread on its newest twenty messages, oldest first, and loads older pages in front of them", async () => {
    const contact = await s.contact({ name: 'Reader', email: 'relay-reader@example.com' });
    const conversation = await app.db.prisma.conversation.create({ data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: contact.id } });
    const start = Date.UTC(2026, 0, 1);
    const rows = await app.db.prisma.message.createManyAndReturn({
      data: Array.from({ length: 45 }, (_, i) => ({
        workspaceId: s.workspace.id,
        channelId: s.channel.id,
        conversationId: conversation.id,
        contactId: contact.id,
        body: `line ${i}`,
        senderType: 'channel' as const,
        senderChannelId: s.channel.id,
        createdAt: new Date(start + i * 1000),
      })),
    });
    const readingOrder = rows.map((row) => row.id);

    // Every request the network layer sends, as JSON.
    const sent: Record<string, any>[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
      return realFetch(input, init);
    }) as typeof fetch;
    try {
      const environment = createRelayEnvironment({
        baseUrl: `http://127.0.0.1:${served.port}`,
        token: () => s.session.token,
        headers: { 'x-forwarded-host': s.host },
      });
      const thread = await openThread(environment, conversation.id);
      expect(thread).not.toBeNull();
      expect(thread!.conversation).toMatchObject({ id: conversation.id, status: 'open', contact: { name: 'Reader' } });
      const page = () => thread!.messages()!;
      const ids = () => page().edges.map((edge) => edge.node.id);
      // The newest twenty, in reading order.
      expect(ids()).toEqual(readingOrder.slice(-20));
      expect(page().edges.map((edge) => edge.node.body)).toEqual(rows.slice(-20).map((row) => row.body));
      expect(page().pageInfo.hasPreviousPage).toBe(true);

      // Scrolling up: twenty older, then the last five, each page in front of the ones shown.
      await thread!.loadOlder();
      expect(ids()).toEqual(readingOrder.slice(-40));
      expect(page().pageInfo.hasPreviousPage).toBe(true);
      await thread!.loadOlder();
      expect(ids()).toEqual(readingOrder);
      expect(page().pageInfo.hasPreviousPage).toBe(false);
      await thread!.loadOlder();
      expect(sent).toHaveLength(3);

      // Each request was a registered document's id alone; the older pages came through node(id:).
      expect(sent.map((body) => body.operationName)).toEqual(['ThreadQuery', 'ThreadMessagesPaginationQuery', 'ThreadMessagesPaginationQuery']);
      for (const body of sent) {
        expect(body.query).toBeUndefined();
        expect(manifest[String(body.documentId).replace(/^sha256:/, '')]).toBeDefined();
      }
      expect(manifest[sent[1]!.documentId.replace(/^sha256:/, '')]).toMatch(/node\(id: \$id\)/);
      expect(sent[1]!.variables).toEqual({ id: conversation.id, count: 20, before: expect.any(String) });
      thread!.dispose();

      // A conversation the caller cannot see is no thread.
      expect(await openThread(environment, '00000000-0000-4000-8000-000000000000')).toBeNull();
    } finally {
      globalThis.fetch = realFetch;
    }
  });
});
