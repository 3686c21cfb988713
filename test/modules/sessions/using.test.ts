import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, openTestDatabase, type TestApp } from '../../helpers/app.js';
import { addChannel, bearer, createConnection } from '../../helpers/factories.js';
import { executeOperation, postOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';
import { mintSession, sessionSetup } from '../../helpers/sessions.js';
import { graphql } from '../../gql/index.js';
import { createUser } from '../../../src/modules/users/users.service.js';

/* docs/browser-apps.md: what a session token may do, as whom, from where, how often, and until when. */

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const SessionViewer = graphql(`
  query SessionViewer {
    viewer { channel { id } }
  }
`);

const SessionSend = graphql(`
  mutation SessionSend($input: SendMessageInput!) {
    sendMessage(input: $input) { message { id sender { type id name } } userErrors { field message } }
  }
`);

const SessionCreateContact = graphql(`
  mutation SessionCreateContact($input: CreateContactInput!) {
    createContact(input: $input) { contact { id } userErrors { field message } }
  }
`);

const SessionClose = graphql(`
  mutation SessionClose($id: ID!) {
    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id name } } } userErrors { field message } }
  }
`);

const forbidden = (path: string) => [expect.objectContaining({ path: [path], extensions: { code: 'FORBIDDEN' } })];

describe('scopes over REST', () => {
  it('read: every GET; nothing else is written', async () => {
    const s = await sessionSetup(app, { scopes: ['read'] });
    const c = await s.contact({ email: 'read@example.com' });
    const { conversationId } = (await s.send({ to: c.id, message: 'hello' })).body.data.message;
    for (const path of ['/channels', '/contacts', `/contacts/${c.id}`, '/contacts/find?email=read@example.com', '/messages', '/conversations', `/conversations/${conversationId}`, '/templates']) {
      expect((await s.browser.get(path)).status, path).toBe(200);
    }
    const refusals = [
      await s.browser.post('/messages', { to: c.id, message: 'not allowed' }),
      await s.browser.post('/contacts', { name: 'Nope', email: 'nope@example.com' }),
      await s.browser.patch(`/contacts/${c.id}`, { name: 'Renamed' }),
      await s.browser.post(`/conversations/${conversationId}/close`),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ status: 'error', message: expect.stringMatching(/scope/) });
    }
    expect(await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } })).toBe(1);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(1);
    expect((await app.db.prisma.contact.findUniqueOrThrow({ where: { id: c.id } })).name).toBe('Recipient');
    expect((await app.db.prisma.conversation.findUniqueOrThrow({ where: { id: conversationId } })).status).toBe('open');
  });

  it('send, contacts, conversations: each allows its writes only, and no GET without read', async () => {
    const s = await messagingSetup(app);
    const c = await s.contact({ email: 'scoped@example.com' });
    const { conversationId } = (await s.send({ to: c.id, message: 'hello' })).body.data.message;
    const as = async (scopes: string[]) => restClient(app, s.host, (await mintSession(s.api, { user: s.user.id, scopes })).token);
    const send = await as(['send']);
    expect((await send.post('/messages', { to: c.id, message: 'from the browser' })).status).toBe(202);
    expect((await send.get('/messages')).status).toBe(403);
    expect((await send.get('/channels')).status).toBe(403);
    expect((await send.post('/contacts', { name: 'Nope', email: 'n@example.com' })).status).toBe(403);
    const contacts = await as(['contacts']);
    expect((await contacts.post('/contacts', { name: 'New one', email: 'new@example.com' })).status).toBe(201);
    expect((await contacts.patch(`/contacts/${c.id}`, { name: 'Renamed' })).status).toBe(200);
    expect((await contacts.post('/messages', { to: c.id, message: 'no' })).status).toBe(403);
    expect((await contacts.post(`/conversations/${conversationId}/close`)).status).toBe(403);
    const conversations = await as(['conversations']);
    expect((await conversations.post(`/conversations/${conversationId}/close`)).status).toBe(200);
    expect((await conversations.post(`/conversations/${conversationId}/reopen`)).status).toBe(200);
    expect((await conversations.patch(`/contacts/${c.id}`, { name: 'Again' })).status).toBe(403);
  });
});

describe('scopes over GraphQL', () => {
  it('a field outside the scopes is FORBIDDEN and null, beside the fields that are allowed; nothing is written', async () => {
    const s = await sessionSetup(app, { scopes: ['conversations'] });
    const c = await s.contact({ email: 'gql@example.com' });
    const { conversationId } = (await s.send({ to: c.id, message: 'hello' })).body.data.message;
    const headers = bearer(s.session.token);

    const viewer = await executeOperation(app, s.host, headers, SessionViewer);
    expect(viewer).toMatchObject({ status: 200, data: { viewer: null }, errors: forbidden('viewer') });
    const sent = await executeOperation(app, s.host, headers, SessionSend, { input: { to: { contactId: c.id }, message: 'no' } });
    expect(sent).toMatchObject({ data: { sendMessage: null }, errors: forbidden('sendMessage') });
    const created = await executeOperation(app, s.host, headers, SessionCreateContact, { input: { name: 'Nope', email: 'nope@example.com' } });
    expect(created).toMatchObject({ data: { createContact: null }, errors: forbidden('createContact') });

    const both = await postOperation(app, s.host, headers, {
      query: `mutation { close: closeConversation(id: "${conversationId}") { conversation { status } } send: sendMessage(input: { to: { contactId: "${c.id}" }, message: "no" }) { message { id } } }`,
    });
    expect(both.data).toEqual({ close: { conversation: { status: 'closed' } }, send: null });
    expect(both.errors).toEqual(forbidden('send'));
    expect(await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } })).toBe(1);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(1);
  });
});

describe('a session acts as its user', () => {
  it('its messages are sent by its user; `from` may name that user only (403 otherwise, nothing written)', async () => {
    const s = await sessionSetup(app);
    const colleague = await createUser(app.db.prisma, { workspaceId: s.workspace.id, name: 'Colleague', email: 'colleague@example.com' });
    const c = await s.contact({ email: 'to@example.com' });
    const agent = { type: 'user', id: s.user.id, name: 'Agent Smith' };
    // The one-statement send (an open conversation) and the full one (a new recipient) alike.
    expect((await s.browser.post('/messages', { to: c.id, message: 'first' })).body.data.message.sender).toEqual(agent);
    expect((await s.browser.post('/messages', { to: c.id, message: 'second' })).body.data.message.sender).toEqual(agent);
    expect((await s.browser.post('/messages', { to: { email: 'fresh@example.com' }, message: 'new recipient' })).body.data.message.sender).toEqual(agent);
    expect((await s.browser.post('/messages', { to: c.id, message: 'as me', from: 'AGENT@example.com' })).body.data.message.sender).toEqual(agent);
    expect((await s.browser.post('/messages', { to: c.id, message: 'as me', from: s.user.id })).body.data.message.sender).toEqual(agent);
    const before = await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } });
    for (const from of [colleague.email, colleague.id, 'Support bot']) {
      const refused = await s.browser.post('/messages', { to: c.id, message: 'as someone else', from });
      expect(refused.status, from).toBe(403);
      expect(refused.body).toEqual({ status: 'error', message: expect.stringContaining('from') });
    }
    expect(await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } })).toBe(before);

    const gql = await executeOperation(app, s.host, bearer(s.session.token), SessionSend, { input: { to: { contactId: c.id }, message: 'gql', from: colleague.email } });
    expect(gql).toMatchObject({ data: { sendMessage: null }, errors: forbidden('sendMessage') });
    const ok = await executeOperation(app, s.host, bearer(s.session.token), SessionSend, { input: { to: { contactId: c.id }, message: 'gql' } });
    expect(ok.data!.sendMessage!.message!.sender).toEqual(agent);
  });

  it('records its user as the actor of the state changes it makes', async () => {
    const s = await sessionSetup(app);
    const c = await s.contact({ email: 'actor@example.com' });
    const { conversationId } = (await s.send({ to: c.id, message: 'hello' })).body.data.message;
    const closed = await s.browser.post(`/conversations/${conversationId}/close`);
    expect(closed.body.data.conversation.stateChanges.at(-1)).toMatchObject({ type: 'closed', actor: { type: 'user', id: s.user.id, name: 'Agent Smith' } });
    const reopened = await executeOperation(app, s.host, bearer(s.session.token), SessionClose, { id: conversationId });
    expect(reopened.data!.closeConversation!.conversation!.status).toBe('closed');
    const gqlReopen = await postOperation(app, s.host, bearer(s.session.token), {
      query: `mutation { reopenConversation(id: "${conversationId}") { conversation { stateChanges { type actor { type id } } } } }`,
    });
    expect(gqlReopen.data.reopenConversation.conversation.stateChanges.at(-1)).toEqual({ type: 'reopened', actor: { type: 'user', id: s.user.id } });
  });
});

describe('channels', () => {
  it('a session over one channel needs no X-Channel-Uuid; over several, the header picks one of its own', async () => {
    const s = await messagingSetup(app);
    const second = await addChannel(app.db.prisma, s.workspace.id, 'Second');
    const third = await addChannel(app.db.prisma, s.workspace.id, 'Third');
    const connection = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Backend', channelIds: [s.channel.id, second.channel.id, third.channel.id] });
    const backend = restClient(app, s.host, connection.token);
    const c = await s.contact({ email: 'multi@example.com' });

    const one = await mintSession(backend, { user: s.user.id, channels: [second.channel.id] });
    const sent = await restClient(app, s.host, one.token).post('/messages', { to: c.id, message: 'on second' });
    expect(sent.body.data.message.channelId).toBe(second.channel.id);

    const two = await mintSession(backend, { user: s.user.id, channels: [s.channel.id, second.channel.id] });
    const browser = restClient(app, s.host, two.token);
    expect((await browser.get('/channels')).body.data.map((x: { id: string }) => x.id).sort()).toEqual([s.channel.id, second.channel.id].sort());
    expect((await browser.post('/messages', { to: c.id, message: 'which?' })).status).toBe(400);
    const picked = await restClient(app, s.host, two.token, { 'x-channel-uuid': second.channel.id }).post('/messages', { to: c.id, message: 'picked' });
    expect(picked.body.data.message.channelId).toBe(second.channel.id);
    expect((await restClient(app, s.host, two.token, { 'x-channel-uuid': third.channel.id }).get('/messages')).status).toBe(401);

    // The session loses a channel its minting connection loses.
    await app.db.prisma.connectionChannel.delete({ where: { connectionId_channelId: { connectionId: connection.id, channelId: s.channel.id } } });
    const fresh = await createTestApp({ AUTH_CACHE_MS: '0' }, { ...app.db, close: async () => {} });
    try {
      expect((await restClient(fresh, s.host, two.token).get('/channels')).body.data.map((x: { id: string }) => x.id)).toEqual([second.channel.id]);
    } finally {
      await fresh.close();
    }
  });
});

describe('origins', () => {
  it('a session with origins refuses a request whose Origin names another (403), over REST and GraphQL; none or a listed one pass', async () => {
    const s = await sessionSetup(app, { origins: ['https://app.example.com'] });
    const from = (origin?: string): Record<string, string> => (origin ? { origin } : {});
    for (const origin of [undefined, 'https://app.example.com', 'https://APP.example.com']) {
      expect((await app.fetch(s.host, '/api/connect/channels', { headers: { ...bearer(s.session.token), ...from(origin) } })).status, origin).toBe(200);
    }
    for (const origin of ['https://evil.example.net', 'http://app.example.com', 'https://app.example.com:8443', 'null']) {
      const refused = await app.fetch(s.host, '/api/connect/channels', { headers: { ...bearer(s.session.token), origin } });
      expect(refused.status, origin).toBe(403);
      expect(await refused.json()).toEqual({ status: 'error', message: expect.stringContaining('origin') });
      const gql = await app.fetch(s.host, '/graphql', {
        method: 'POST',
        headers: { ...bearer(s.session.token), origin, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { channel { id } } }' }),
      });
      expect(gql.status).toBe(403);
      expect((await gql.json()).errors[0].extensions.code).toBe('FORBIDDEN');
    }
    // A session without origins, and a backend credential, are not limited.
    const open = await mintSession(s.api, { user: s.user.id });
    expect((await app.fetch(s.host, '/api/connect/channels', { headers: { ...bearer(open.token), origin: 'https://evil.example.net' } })).status).toBe(200);
  });
});

describe('expiry', () => {
  it('an expired session is 401 with code token_expired (GraphQL TOKEN_EXPIRED); a revoked one is a plain 401', async () => {
    const s = await messagingSetup(app);
    const expired = await mintSession(s.api, { user: s.user.id });
    await app.db.prisma.accessToken.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const rest = await restClient(app, s.host, expired.token).get('/channels');
    expect(rest.status).toBe(401);
    expect(rest.body).toEqual({ status: 'error', message: 'Unauthenticated.', code: 'token_expired' });
    expect(rest.headers.get('www-authenticate')).toBe('Bearer');
    const gql = await executeOperation(app, s.host, bearer(expired.token), SessionViewer);
    expect(gql.status).toBe(401);
    expect(gql.errors).toEqual([{ message: 'Unauthenticated.', extensions: { code: 'TOKEN_EXPIRED' } }]);

    const revoked = await mintSession(s.api, { user: s.user.id });
    await s.api.delete(`/sessions/${revoked.id}`);
    expect((await restClient(app, s.host, revoked.token).get('/channels')).body).toEqual({ status: 'error', message: 'Unauthenticated.' });
    expect((await executeOperation(app, s.host, bearer(revoked.token), SessionViewer)).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
  });
});

describe('rate limits', () => {
  it('each session has its own budget, SESSION_RATE_LIMIT_PER_MINUTE, apart from the backend credential’s', async () => {
    const limited = await createTestApp({ RATE_LIMIT_PER_MINUTE: '1000', SESSION_RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const s = await sessionSetup(limited);
      const other = restClient(limited, s.host, (await mintSession(s.api, { user: s.user.id })).token);
      for (let i = 0; i < 3; i++) {
        const answer = await s.browser.get('/channels');
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit-limit')).toBe('3');
      }
      const refused = await s.browser.get('/channels');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ status: 'error', message: 'Too many requests.' });
      const gql = await executeOperation(limited, s.host, bearer(s.session.token), SessionViewer);
      expect(gql.status).toBe(429);
      expect(gql.errors![0]!.extensions!.code).toBe('RATE_LIMITED');
      // Another session, and the backend credential, keep their own budgets.
      expect((await other.get('/channels')).status).toBe(200);
      const backend = await s.api.get('/channels');
      expect(backend.status).toBe(200);
      expect(backend.headers.get('ratelimit-limit')).toBe('1000');
    } finally {
      await limited.close();
    }
    const defaulted = await createTestApp({ RATE_LIMIT_PER_MINUTE: '7' });
    try {
      const s = await sessionSetup(defaulted);
      expect((await s.browser.get('/channels')).headers.get('ratelimit-limit')).toBe('7');
    } finally {
      await defaulted.close();
    }
  });
});

describe('authentication statements', () => {
  it('a session token authenticates in one statement, as a channel key does', async () => {
    let statements: string[] = [];
    const counting = await createTestApp({ AUTH_CACHE_MS: '0' }, await openTestDatabase({ onQuery: (sql) => statements.push(sql) }));
    try {
      const s = await sessionSetup(counting);
      for (const token of [s.apiKey, s.session.token]) {
        statements = [];
        expect((await restClient(counting, s.host, token).get('/channels')).status).toBe(200);
        expect(statements.filter((sql) => /\bFROM\s+"?access_tokens"?/i.test(sql))).toHaveLength(1);
        expect(statements.length).toBeLessThanOrEqual(2);
      }
      // An expired one is told apart by the same statement.
      await counting.db.prisma.accessToken.update({ where: { id: s.session.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
      statements = [];
      expect((await restClient(counting, s.host, s.session.token).get('/channels')).body.code).toBe('token_expired');
      expect(statements).toHaveLength(1);
    } finally {
      await counting.close();
    }
  });
});
