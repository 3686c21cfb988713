import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/factories.js';
import { postOperation } from '../helpers/graphql.js';
import { messagingSetup } from '../helpers/messaging.js';

/**
 * Queries run compiled (src/graphql/jit.ts); these are the places where a compiled query could
 * answer differently from the interpreter, each asked as a client would.
 */
let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const post = (s: { host: string; apiKey: string }, body: Parameters<typeof postOperation>[3]) => postOperation(app, s.host, bearer(s.apiKey), body);

describe('compiled queries answer as the interpreter does', () => {
  it('runs the operation the request names, when one document holds several', async () => {
    const s = await messagingSetup(app);
    const query = 'query Workspace { viewer { workspace { name } } } query Channels { channels { name } }';
    for (let i = 0; i < 2; i++) {
      const workspace = await post(s, { query, operationName: 'Workspace' });
      expect(workspace.errors).toBeUndefined();
      expect(workspace.data).toEqual({ viewer: { workspace: { name: expect.any(String) } } });
      const channels = await post(s, { query, operationName: 'Channels' });
      expect(channels.errors).toBeUndefined();
      expect(channels.data).toEqual({ channels: [{ name: expect.any(String) }] });
    }
  });

  it('applies @include on one spread of a fragment to that spread only', async () => {
    const s = await messagingSetup(app);
    const contact = await s.contact({ name: 'Ann Fragment', email: 'ann.fragment@example.com' });
    const query = `query Spreads($with: Boolean!, $id: ID!) {
      contacts(first: 5) { edges { node { id ...Names @include(if: $with) } } }
      contact(id: $id) { ...Names }
    }
    fragment Names on Contact { name email }`;
    for (const include of [false, true, false]) {
      const result = await post(s, { query, variables: { with: include, id: contact.id } });
      expect(result.errors).toBeUndefined();
      expect(result.data.contact).toEqual({ name: 'Ann Fragment', email: 'ann.fragment@example.com' });
      expect(result.data.contacts.edges[0].node).toEqual(
        include ? { id: contact.id, name: 'Ann Fragment', email: 'ann.fragment@example.com' } : { id: contact.id },
      );
    }
  });

  it('costs each request with its own variables: the same query is within the limit, then over it, then within again', async () => {
    const s = await messagingSetup(app);
    const query = `query Pages($n: Int) {
      conversations(first: $n) { edges { node { id messages(first: $n) { edges { node { id contact { id } } } } } } }
    }`;
    for (const n of [2, 100, 2, 100]) {
      const result = await post(s, { query, variables: { n } });
      if (n === 2) {
        expect(result.errors).toBeUndefined();
        expect(result.data.conversations.edges).toEqual(expect.any(Array));
      } else {
        expect(result.data ?? null).toBeNull();
        expect(result.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'QUERY_TOO_COMPLEX' }) })]);
      }
    }
  });

  it('costs and checks the pages of a mutation with its own variables: within, over the limit, a bad page, within again', async () => {
    const s = await messagingSetup(app);
    const sent = () => app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } });
    const mutation = `mutation Send($text: String!, $n: Int) {
      sendMessage(input: { to: { phone: "+31612349011" }, message: $text }) {
        message { conversation { messages(first: $n) { edges { node { conversation { messages(first: $n) { edges { node { id contact { id } } } } } } } } } }
        userErrors { field }
      }
    }`;
    const cases = [
      { n: 2, answer: 'sent' },
      { n: 100, answer: 'QUERY_TOO_COMPLEX' },
      { n: 0, answer: 'BAD_USER_INPUT' },
      { n: 2, answer: 'sent' },
    ] as const;
    let expected = 0;
    for (const [i, { n, answer }] of cases.entries()) {
      const result = await post(s, { query: mutation, variables: { text: `message ${i}`, n } });
      if (answer === 'sent') {
        expected += 1;
        expect(result.errors, `n = ${n}`).toBeUndefined();
        expect(result.data.sendMessage.userErrors).toEqual([]);
      } else {
        expect(result.data ?? null, `n = ${n}`).toBeNull();
        expect(result.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: answer }) })]);
      }
      expect(await sent()).toBe(expected);
    }
  });

  it('reports a refused argument at its place in the document', async () => {
    const s = await messagingSetup(app);
    const result = await post(s, { query: '{\n  viewer { workspace { id } }\n  contacts(first: 1, search: "a\\u0000b") { edges { node { id } } }\n}' });
    expect(result.errors).toEqual([
      expect.objectContaining({
        locations: [{ line: 3, column: 3 }],
        path: ['contacts'],
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
      }),
    ]);
  });
});

describe("a list's query is planned once per document only when nothing in it varies", () => {
  it("answers a leaf-only selection and a relation's selection in one document, request after request", async () => {
    const s = await messagingSetup(app);
    const contact = await s.contact({ name: 'Leaf Plan', email: 'leaf.plan@example.com' });
    expect((await s.send({ to: contact.id, message: 'leaf' })).status).toBe(202);
    const query = `query Both($first: Int) {
      contacts(first: $first) { edges { node { id name } } }
      messages(first: $first) { edges { node { body contact { id name email } } } }
    }`;
    for (const first of [1, 2, 1]) {
      const result = await post(s, { query, variables: { first } });
      expect(result.errors).toBeUndefined();
      expect(result.data.contacts.edges).toHaveLength(1);
      expect(result.data.contacts.edges[0].node).toEqual({ id: contact.id, name: 'Leaf Plan' });
      expect(result.data.messages.edges[0].node).toEqual({ body: 'leaf', contact: { id: contact.id, name: 'Leaf Plan', email: 'leaf.plan@example.com' } });
    }
  });
});
