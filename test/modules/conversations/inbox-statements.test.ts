import { parse } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, openTestDatabase, type TestApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/factories.js';
import { executeOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { receiveMessage } from '../../../src/modules/inbound/inbound.service.js';

/* CONTRACT §9: the inbox page is a fixed, small number of statements whatever its size. */

let app: TestApp;
let statements: string[] = [];
beforeAll(async () => {
  // Without the credential cache both transports count their authentication.
  app = await createTestApp({ AUTH_CACHE_MS: '0' }, await openTestDatabase({ onQuery: (sql) => statements.push(sql) }));
});
afterAll(() => app.close());

async function counted(run: () => Promise<void>): Promise<number> {
  statements = [];
  await run();
  return statements.length;
}

const Inbox = parse(`query InboxStatements($first: Int) {
  conversations(first: $first, sort: last_message) {
    edges { node { id labels unreadCount lastReadAt assignee { id name email } lastMessage { id body sender { type id name } } contact { id name } } }
    pageInfo { hasNextPage endCursor }
  }
}`) as unknown as TypedDocumentNode<{ conversations: { edges: { node: { id: string; unreadCount: number } }[] } }, { first: number }>;

/** A workspace with `n` conversations, each assigned, labelled and with an unread reply. */
async function inbox(n: number) {
  const s = await messagingSetup(app);
  const channel = { id: s.channel.id, workspaceId: s.workspace.id, name: s.channel.name };
  for (let i = 0; i < n; i++) {
    const phone = `+3161${String(n).padStart(2, '0')}${String(i).padStart(5, '0')}`;
    const contact = await s.contact({ phone });
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
  it('GET /conversations: authentication and one statement, for 5 rows as for 25', async () => {
    const counts: number[] = [];
    for (const n of [5, 25]) {
      const s = await inbox(n);
      counts.push(
        await counted(async () => {
          const page = await s.api.get('/conversations?limit=25&sort=last_message&unread=true&label=vip');
          expect(page.status).toBe(200);
          expect(page.body.data).toHaveLength(n);
          expect(page.body.data[0]).toMatchObject({ unreadCount: 1, assignee: { id: s.user.id }, labels: expect.arrayContaining(['vip']), lastMessage: { direction: 'inbound' } });
        }),
      );
    }
    expect(counts[0]).toBeLessThanOrEqual(3);
    expect(counts[1]).toBe(counts[0]);
  });

  it('GraphQL conversations with assignee, labels, unreadCount and lastMessage: the same number for 5 rows as for 25', async () => {
    const counts: number[] = [];
    for (const n of [5, 25]) {
      const s = await inbox(n);
      counts.push(
        await counted(async () => {
          const result = await executeOperation(app, s.host, bearer(s.apiKey), Inbox, { first: 25 });
          expect(result.errors).toBeUndefined();
          expect(result.data!.conversations.edges).toHaveLength(n);
          expect(result.data!.conversations.edges[0]!.node.unreadCount).toBe(1);
        }),
      );
    }
    expect(counts[1]).toBe(counts[0]);
  });
});
