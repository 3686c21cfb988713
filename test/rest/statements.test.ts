import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementCountingApp, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';

/*
 * The hot paths' statement budgets (docs/architecture.md, Statement budgets): every statement that
 * reaches the database is a round trip on the request's critical path. The budgets
 * are what the paths cost today; a change that adds a statement to one of them has
 * to raise its budget here, on purpose. Prisma's query log, which counts them, shows
 * an interactive transaction's COMMIT but not its BEGIN: one statement more per
 * transaction reaches the database than a budget says.
 */

let app: TestApp;
let countedRun: (run: () => Promise<unknown>) => Promise<string[]>;
beforeAll(async () => {
  // Without the credential cache every request pays its authentication statement.
  ({ app, counted: countedRun } = await statementCountingApp({ AUTH_CACHE_MS: '0' }));
});
afterAll(() => app.close());

/** The statements `run` issues, after checking the status it answers. */
function counted(status: number, run: () => Promise<{ status: number }>): Promise<string[]> {
  return countedRun(async () => expect((await run()).status).toBe(status));
}

const authentications = (sqls: string[]) => sqls.filter((sql) => /\bFROM\s+"?access_tokens"?/i.test(sql)).length;

async function setup() {
  const s = await messagingSetup(app);
  const keyed = (key: string, body: unknown) =>
    app.fetch(s.host, '/api/connect/messages', {
      method: 'POST',
      headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
  return { ...s, keyed };
}

describe('statements per request on the hot paths', () => {
  it('authenticates in one statement', async () => {
    const s = await setup();
    const sqls = await counted(200, () => s.api.get('/channels'));
    expect(authentications(sqls)).toBe(1);
    expect(sqls.length).toBeLessThanOrEqual(2);
  });

  it('PATCH /contacts/{id}: a name or an email is one statement after authentication; a phone runs under the row lock', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'a@example.com', phone: '+31612345678' });
    for (const body of [{ name: 'New name' }, { email: 'b@example.com' }, { name: 'New name' }]) {
      const sqls = await counted(200, () => s.api.patch(`/contacts/${c.id}`, body));
      expect(authentications(sqls)).toBe(1);
      expect(sqls.length, JSON.stringify(body)).toBeLessThanOrEqual(2);
    }
    expect((await counted(200, () => s.api.patch(`/contacts/${c.id}`, { phone: '+31612345679' }))).length).toBeLessThanOrEqual(6);
  });

  it('POST /contacts is one statement after authentication, taken values included; with an Idempotency-Key it runs in a transaction', async () => {
    const s = await setup();
    const sqls = await counted(201, () => s.api.post('/contacts', { name: 'New', email: 'new@example.com', phone: '+31612345670' }));
    expect(authentications(sqls)).toBe(1);
    expect(sqls.length).toBeLessThanOrEqual(2);
    const taken = await counted(422, () => s.api.post('/contacts', { name: 'Again', email: 'NEW@example.com' }));
    expect(taken.length).toBeLessThanOrEqual(2);
    const keyed = await counted(201, () =>
      app.fetch(s.host, '/api/connect/contacts', {
        method: 'POST',
        headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'c1' },
        body: JSON.stringify({ name: 'Keyed', email: 'keyed@example.com' }),
      }),
    );
    expect(keyed.length).toBeLessThanOrEqual(12);
  });

  it('POST /messages to a contact with an open conversation is one statement after authentication', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'a@example.com' });
    await s.send({ to: c.id, message: 'opens the conversation' });
    const sqls = await counted(202, () => s.send({ to: c.id, message: 'hello' }));
    expect(authentications(sqls)).toBe(1);
    expect(sqls.length).toBeLessThanOrEqual(2);
  });

  it('POST /messages with an Idempotency-Key: the claim and the stored answer are part of the send’s one statement; a replay reads the answer', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'a@example.com' });
    await s.send({ to: c.id, message: 'opens the conversation' });
    const sqls = await counted(202, () => s.keyed('k1', { to: c.id, message: 'keyed' }));
    expect(authentications(sqls)).toBe(1);
    expect(sqls.length).toBeLessThanOrEqual(2);
    expect((await counted(202, () => s.keyed('k1', { to: c.id, message: 'keyed' }))).length).toBeLessThanOrEqual(3);
  });

  it('POST /messages creating the contact, or reopening a closed conversation, stays bounded', async () => {
    const s = await setup();
    expect((await counted(202, () => s.send({ to: { phone: '+31612340000' }, message: 'hi new' }))).length).toBeLessThanOrEqual(9);
    const c = await s.contact({ email: 'closed@example.com' });
    const { conversationId } = (await s.send({ to: c.id, message: 'first' })).body.data.message;
    await s.api.post(`/conversations/${conversationId}/close`);
    expect((await counted(202, () => s.send({ to: c.id, message: 'reopens' }))).length).toBeLessThanOrEqual(11);
  });

  it('GET /contacts: authentication and one page read', async () => {
    const s = await setup();
    for (let i = 0; i < 3; i++) await s.contact({ email: `page${i}@example.com` });
    const sqls = await counted(200, () => s.api.get('/contacts?limit=2'));
    expect(authentications(sqls)).toBe(1);
    expect(sqls.length).toBeLessThanOrEqual(2);
  });

  it('GET /messages, searched and filtered or not: authentication and one page read with the senders’ names', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'reader@example.com' });
    for (const message of ['alpha one', 'alpha two', 'beta three']) await s.send({ to: c.id, message });
    await s.send({ to: c.id, message: 'alpha from a user', from: s.user.email });
    const first = await s.api.get('/messages?limit=2&search=alpha');
    for (const query of ['?limit=2', '?limit=2&search=alpha', `?limit=2&search=alpha&contact_id=${c.id}&cursor=${first.body.meta.next_cursor}`]) {
      const sqls = await counted(200, () => s.api.get(`/messages${query}`));
      expect(authentications(sqls), query).toBe(1);
      expect(sqls.length, query).toBeLessThanOrEqual(2);
    }
    expect(first.body.data.map((m: { body: string; sender: { type: string; name: string } }) => [m.body, m.sender.type, m.sender.name])).toEqual([
      ['alpha from a user', 'user', s.user.name],
      ['alpha two', 'channel', s.channel.name],
    ]);
  });
});
