import { describe, expect, it } from 'vitest';
import { createRelayEnvironment, openThread } from '../../examples/relay/client.js';
import { recipeServer } from '../helpers/recipe-server.js';

// Relay (relay-runtime's Environment, its network layer one fetch function) on a browser session's
// token, against a live server on a real port whose workspace runs only registered documents for
// sessions: the registered manifest is the one the Relay compiler wrote for the recipe
// (examples/relay, `npm run relay`), posted as a deploy step posts it. A thread opens on its
// newest twenty messages in reading order (`messages(order: asc, last: 20)`) and walks back
// through older pages with the query `@refetchable` made, which fetches the conversation again by
// `node(id:)`; Relay's connection handler joins the pages into one list.

const live = recipeServer(new URL('../../examples/relay/persisted-documents.json', import.meta.url));

describe('Relay: a fetch function, a node(id:) refetch, a connection walked backward in reading order', () => {
  it("opens a thread on its newest twenty messages, oldest first, and loads older pages in front of them", async () => {
    const contact = await live.s.contact({ name: 'Reader', email: 'relay-reader@example.com' });
    const conversation = await live.app.db.prisma.conversation.create({ data: { workspaceId: live.s.workspace.id, channelId: live.s.channel.id, contactId: contact.id } });
    const start = Date.UTC(2026, 0, 1);
    const rows = await live.app.db.prisma.message.createManyAndReturn({
      data: Array.from({ length: 45 }, (_, i) => ({
        workspaceId: live.s.workspace.id,
        channelId: live.s.channel.id,
        conversationId: conversation.id,
        contactId: contact.id,
        body: `line ${i}`,
        senderType: 'channel' as const,
        senderChannelId: live.s.channel.id,
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
        baseUrl: `http://127.0.0.1:${live.served.port}`,
        token: () => live.s.session.token,
        headers: { 'x-forwarded-host': live.s.host },
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
        expect(live.manifest[String(body.documentId).replace(/^sha256:/, '')]).toBeDefined();
      }
      expect(live.manifest[sent[1]!.documentId.replace(/^sha256:/, '')]).toMatch(/node\(id: \$id\)/);
      expect(sent[1]!.variables).toEqual({ id: conversation.id, count: 20, before: expect.any(String) });
      thread!.dispose();

      // A conversation the caller cannot see is no thread.
      expect(await openThread(environment, '00000000-0000-4000-8000-000000000000')).toBeNull();
    } finally {
      globalThis.fetch = realFetch;
    }
  });
});
