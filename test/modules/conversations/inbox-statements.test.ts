import { parse } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementCountingApp, type TestApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/factories.js';
import { executeOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { receiveMessage } from '../../../src/modules/inbound/inbound.service.js';

/* docs/inbox.md: the inbox page is a fixed, small number of statements whatever its size, on REST and GraphQL. */

let app: TestApp;
/** The statements `run` issues (it checks its own answers). */
let counted: (run: () => Promise<void>) => Promise<string[]>;
beforeAll(async () => {
  // Without the credential cache both transports count their authentication.
  ({ app, counted } = await statementCountingApp({ AUTH_CACHE_MS: '0' }));
});
afterAll(() => app.close());

type Node = {
  id: string;
  status: string;
  unreadCount: number;
  lastReadAt: string | null;
  labels: string[];
  assignee: { id: string; name: string; email: string } | null;
  contact: { id: string; name: string; phoneNumber: string | null; email: string | null };
  lastMessage: { id: string; type: string; body: string | null; status: string; createdAt: string; direction: string; sender: { type: string; id: string | null; name: string } } | null;
};
type Nodes<T> = { edges: { node: T }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
type Filters = { first: number; unread?: boolean; label?: string; search?: string; assigneeId?: string; unassigned?: boolean };

const Inbox = parse(`query InboxStatements($first: Int, $unread: Boolean, $label: String, $search: String, $assigneeId: ID, $unassigned: Boolean) {
  conversations(first: $first, sort: last_message, unread: $unread, label: $label, search: $search, assigneeId: $assigneeId, unassigned: $unassigned) {
    edges { node {
      id status unreadCount lastReadAt labels
      assignee { id name email }
      contact { id name phoneNumber email }
      lastMessage { id type body status createdAt direction sender { type id name } }
    } }
    pageInfo { hasNextPage endCursor }
  }
}`) as unknown as TypedDocumentNode<{ conversations: Nodes<Node> }, Filters>;

const WithMessages = parse(`query InboxStatementsMessages($first: Int) {
  conversations(first: $first, sort: last_message) {
    edges { node { id assignee { id } lastMessage { id } messages(first: 2) { edges { node { id body direction } } } stateChanges { type } } }
  }
}`) as unknown as TypedDocumentNode<
  { conversations: Nodes<{ id: string; assignee: { id: string } | null; lastMessage: { id: string } | null; messages: Nodes<{ id: string; body: string | null; direction: string }>; stateChanges: { type: string }[] }> },
  { first: number }
>;

/** A workspace with `n` conversations, each assigned, labelled and with an unread reply. */
async function inbox(n: number) {
  const s = await messagingSetup(app);
  const channel = { id: s.channel.id, workspaceId: s.workspace.id, name: s.channel.name };
  for (let i = 0; i < n; i++) {
    const phone = `+3161${String(n).padStart(2, '0')}${String(i).padStart(5, '0')}`;
    const contact = await s.contact({ phone, name: `Contact ${n}.${i}` });
    const { conversationId } = (await s.send({ to: contact.id, message: `hello ${i}` })).body.data.message;
    await s.api.post(`/conversations/${conversationId}/assign`, { user: s.user.id });
    await s.api.post(`/conversations/${conversationId}/labels`, { add: ['vip', `n${i}`] });
    await receiveMessage({ prisma: app.db.prisma, logger: pino({ level: 'silent' }) }, channel, {
      kind: 'message',
      providerId: `wamid.statements.${n}.${i}`,
      from: { phone },
      at: new Date(Date.now() + 1000 + i),
      body: `reply ${i}`,
      media: [],
    });
  }
  return s;
}

describe('the inbox page', () => {
  it('REST and GraphQL: authentication and one statement each, for 5 rows as for 25, answering alike', async () => {
    const counts: Record<string, number[]> = { rest: [], graphql: [], filtered: [], searched: [] };
    for (const n of [5, 25]) {
      const s = await inbox(n);
      let rest: { id: string; contactId: string; unreadCount: number; lastReadAt: string | null; labels: string[]; assignee: unknown; lastMessage: Record<string, unknown> }[] = [];
      const restStatements = await counted(async () => {
        const page = await s.api.get('/conversations?limit=25&sort=last_message&unread=true&label=vip');
        expect(page.status).toBe(200);
        rest = page.body.data;
        expect(rest).toHaveLength(n);
        expect(rest[0]).toMatchObject({ unreadCount: 1, assignee: { id: s.user.id }, labels: expect.arrayContaining(['vip']), lastMessage: { direction: 'inbound' } });
      });
      counts.rest!.push(restStatements.length);

      let nodes: Node[] = [];
      const graphqlStatements = await counted(async () => {
        const result = await executeOperation(app, s.host, bearer(s.apiKey), Inbox, { first: 25 });
        expect(result.errors).toBeUndefined();
        nodes = result.data!.conversations.edges.map((edge) => edge.node);
        expect(nodes).toHaveLength(n);
        expect(result.data!.conversations.pageInfo.hasNextPage).toBe(false);
      });
      counts.graphql!.push(graphqlStatements.length);
      // One statement reads the page, with its assignees, contacts and newest messages.
      expect(graphqlStatements.filter((sql) => /\bconversations\b/.test(sql))).toHaveLength(1);
      // The same conversations in the same order, with the same values REST shows.
      expect(nodes.map((node) => node.id)).toEqual(rest.map((view) => view.id));
      nodes.forEach((node, i) => {
        const view = rest[i]!;
        expect(node).toMatchObject({ unreadCount: view.unreadCount, lastReadAt: view.lastReadAt, labels: view.labels, assignee: view.assignee, status: 'open' });
        expect(node.lastMessage).toEqual({
          id: view.lastMessage.id,
          type: view.lastMessage.type,
          body: view.lastMessage.body,
          status: view.lastMessage.status,
          createdAt: view.lastMessage.createdAt,
          direction: 'inbound',
          sender: view.lastMessage.sender,
        });
        expect(node.contact).toMatchObject({ id: view.contactId, name: expect.stringMatching(/^Contact /), phoneNumber: expect.stringMatching(/^\+3161/), email: null });
      });

      // Filtered pages are the same statement with its conditions.
      const filtered = await counted(async () => {
        const result = await executeOperation(app, s.host, bearer(s.apiKey), Inbox, { first: 25, unread: true, label: 'VIP', assigneeId: s.user.id });
        expect(result.errors).toBeUndefined();
        expect(result.data!.conversations.edges.map((edge) => edge.node.id)).toEqual(rest.map((view) => view.id));
      });
      counts.filtered!.push(filtered.length);
      const searched = await counted(async () => {
        const result = await executeOperation(app, s.host, bearer(s.apiKey), Inbox, { first: 25, search: `Contact ${n}.1` });
        expect(result.errors).toBeUndefined();
        const found = result.data!.conversations.edges.map((edge) => edge.node);
        expect(found.length).toBeGreaterThanOrEqual(1);
        expect(found.every((node) => node.contact.name.startsWith(`Contact ${n}.1`))).toBe(true);
        expect(found[0]!.assignee).toEqual({ id: s.user.id, name: s.user.name, email: s.user.email });
      });
      counts.searched!.push(searched.length);
    }
    for (const [name, [small, large]] of Object.entries(counts)) {
      expect(small, name).toBeLessThanOrEqual(3);
      expect(large, name).toBe(small);
    }
    // Thirty conversations are made through the API first.
  }, 120_000);

  it('a page that also selects each conversation’s messages and history still answers, in as many statements for 5 rows as for 25', async () => {
    const counts: number[] = [];
    for (const n of [5, 25]) {
      const s = await inbox(n);
      const found = await counted(async () => {
        const result = await executeOperation(app, s.host, bearer(s.apiKey), WithMessages, { first: 25 });
        expect(result.errors).toBeUndefined();
        const nodes = result.data!.conversations.edges.map((edge) => edge.node);
        expect(nodes).toHaveLength(n);
        for (const node of nodes) {
          expect(node.assignee).toEqual({ id: s.user.id });
          expect(node.messages.edges.map((edge) => edge.node.direction)).toEqual(['inbound', 'outbound']);
          expect(node.messages.edges[0]!.node.id).toBe(node.lastMessage!.id);
          expect(node.stateChanges.map((change) => change.type)).toEqual(['opened', 'assigned']);
        }
      });
      counts.push(found.length);
    }
    expect(counts[1]).toBe(counts[0]);
  }, 120_000);
});
