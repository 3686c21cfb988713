import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { bearer } from './factories.js';
import { postOperation } from './graphql.js';
import { messagingSetup } from './messaging.js';

/**
 * A workspace ready to send, with counts of what a refused request must leave unchanged, and
 * GraphQL text sent as written: the edge tests probe documents no client would ship.
 */
export async function edgeSetup(app: TestApp) {
  const s = await messagingSetup(app);
  const counts = async () => ({
    contacts: await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } }),
    messages: await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } }),
    conversations: await app.db.prisma.conversation.count({ where: { workspaceId: s.workspace.id } }),
  });
  const gql = (query: string, variables?: Record<string, unknown>) => postOperation(app, s.host, bearer(s.apiKey), { query, variables });
  return { ...s, counts, gql };
}

export type EdgeSetup = Awaited<ReturnType<typeof edgeSetup>>;

/** A 422 in the spec's shape whose `errors` name `field`. */
export function expect422On(result: { status: number; body: any }, field: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(422);
  expect(result.body.errors, JSON.stringify(result.body)).toHaveProperty([field]);
  expect(result.body.message).toEqual(expect.any(String));
}
