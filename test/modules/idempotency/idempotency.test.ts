import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { pino } from 'pino';
import { purgeExpiredIdempotencyKeys, schedulePurge } from '../../../src/modules/idempotency/idempotency.service.js';
import { createTestApp, onPostgres, type TestApp } from '../../helpers/app.js';
import { appWithFailingInsert } from '../../helpers/fresh-database.js';
import { addChannel, bearer, createConnection, issueChannelKey } from '../../helpers/factories.js';
import { graphql } from '../../gql/index.js';
import { executeOperation } from '../../helpers/graphql.js';
import { messagingSetup } from '../../helpers/messaging.js';
import { restClient } from '../../helpers/rest.js';
import { holdIdempotencyKey } from '../../helpers/idempotency.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

async function setup(on: TestApp = app) {
  const s = await messagingSetup(on);
  const withKey = (key: string, token = s.apiKey) => restClient(on, s.host, token, { 'idempotency-key': key });
  const messages = () => on.db.prisma.message.count({ where: { workspaceId: s.workspace.id } });
  const contacts = () => on.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } });
  return { ...s, withKey, messages, contacts };
}

const send = { to: { phone: '+31612347001' }, message: 'Your order shipped' };

describe('Idempotency-Key on POST /messages and POST /contacts', () => {
  it('replays the first answer: same status, same body, Idempotent-Replayed: true, one message', async () => {
    const s = await setup();
    const first = await s.withKey('order-1001').post('/messages', send);
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await s.withKey('order-1001').post('/messages', { message: 'Your order shipped', to: { phone: '+31612347001' } });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    // Byte for byte, key order included: integrators may compare the text.
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await s.messages()).toBe(1);

    const created = await s.withKey('crm-42').post('/contacts', { name: 'Ann', email: 'ann@example.com' });
    const replayed = await s.withKey('crm-42').post('/contacts', { name: 'Ann', email: 'ann@example.com' });
    expect([created.status, replayed.status]).toEqual([201, 201]);
    expect(replayed.body).toEqual(created.body);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses the same key with a different body: 422 on Idempotency-Key, nothing sent', async () => {
    const s = await setup();
    await s.withKey('k-1').post('/messages', send);
    const other = await s.withKey('k-1').post('/messages', { ...send, message: 'Something else' });
    expect(other.status).toBe(422);
    expect(other.body.errors).toEqual({ 'Idempotency-Key': ['The Idempotency-Key was already used with a different request body.'] });
    expect(await s.messages()).toBe(1);
  });

  it('refuses a key that is not 1 to 255 printable ASCII characters', async () => {
    const s = await setup();
    for (const key of ['', 'k'.repeat(256), 'clé']) {
      const result = await s.withKey(key).post('/messages', send);
      expect(result.status, JSON.stringify(key)).toBe(422);
      expect(result.body.errors).toEqual({ 'Idempotency-Key': ['The Idempotency-Key must be 1 to 255 printable ASCII characters.'] });
    }
    expect((await s.withKey('k'.repeat(255)).post('/messages', send)).status).toBe(202);
    expect(await s.messages()).toBe(1);
  });

  it('is scoped to the credential and to the route', async () => {
    const s = await setup();
    const { token } = await issueChannelKey(app.db.prisma, s.channel);
    expect((await s.withKey('shared').post('/messages', send)).status).toBe(202);
    const otherCredential = await s.withKey('shared', token).post('/messages', send);
    expect(otherCredential.status).toBe(202);
    expect(otherCredential.headers.get('idempotent-replayed')).toBeNull();
    expect(await s.messages()).toBe(2);
    const otherRoute = await s.withKey('shared').post('/contacts', { name: 'Bea', phone: '+31612347002' });
    expect(otherRoute.status).toBe(201);
  });

  it('is scoped to the acting channel: a connection token reusing a key on another channel sends there', async () => {
    const s = await setup();
    const other = await addChannel(app.db.prisma, s.workspace.id, 'Other');
    const connection = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'CRM', channelIds: [s.channel.id, other.channel.id] });
    const as = (channelId: string) => restClient(app, s.host, connection.token, { 'idempotency-key': 'both', 'x-channel-uuid': channelId });
    const first = await as(s.channel.id).post('/messages', send);
    const second = await as(other.channel.id).post('/messages', send);
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data.message.channelId).toBe(other.channel.id);
    const replay = await as(other.channel.id).post('/messages', send);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(second.body);
  });

  it('stores a refusal below 500, so a retry gets the same answer', async () => {
    const s = await setup();
    const body = { to: '00000000-0000-4000-8000-000000000000', message: 'hi' };
    const first = await s.withKey('refused').post('/messages', body);
    expect(first.status).toBe(422);
    const again = await s.withKey('refused').post('/messages', body);
    expect(again.status).toBe(422);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('stores nothing for a 500: the write rolled back with its key, and a retry runs again', async () => {
    const failing = await appWithFailingInsert('messages', "EXISTS (SELECT 1 FROM workspaces WHERE id = NEW.workspace_id AND name = 'fail sends')", 'injected failure');
    try {
      const s = await setup(failing);
      await failing.db.prisma.workspace.update({ where: { id: s.workspace.id }, data: { name: 'fail sends' } });
      const first = await s.withKey('retry-me').post('/messages', send);
      expect(first.status).toBe(500);
      expect(await failing.db.prisma.idempotencyKey.count()).toBe(0);
      await failing.db.prisma.workspace.update({ where: { id: s.workspace.id }, data: { name: 'works again' } });
      const retry = await s.withKey('retry-me').post('/messages', send);
      expect(retry.status).toBe(202);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(await s.messages()).toBe(1);
    } finally {
      await failing.drop();
    }
  });

  it('forgets keys after 24 hours: a purged or expired key runs again', async () => {
    const s = await setup();
    await s.withKey('old').post('/messages', send);
    await app.db.prisma.idempotencyKey.updateMany({ where: { key: 'old' }, data: { createdAt: new Date(Date.now() - 25 * 3600_000) } });
    const reused = await s.withKey('old').post('/messages', { ...send, message: 'A new day' });
    expect(reused.status).toBe(202);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
    expect(await s.messages()).toBe(2);
    await app.db.prisma.idempotencyKey.updateMany({ where: { key: 'old' }, data: { createdAt: new Date(Date.now() - 25 * 3600_000) } });
    expect(await purgeExpiredIdempotencyKeys(app.db.prisma)).toBeGreaterThanOrEqual(1);
    expect(await app.db.prisma.idempotencyKey.count({ where: { key: 'old' } })).toBe(0);
  });

  it('the server purges expired keys as it starts (and hourly after)', async () => {
    const s = await setup();
    await s.withKey('stale').post('/messages', send);
    await s.withKey('current').post('/messages', { ...send, message: 'Still fresh' });
    await app.db.prisma.idempotencyKey.updateMany({ where: { key: 'stale' }, data: { createdAt: new Date(Date.now() - 25 * 3600_000) } });
    schedulePurge(app.db.prisma, pino({ level: 'silent' }));
    await expect.poll(() => app.db.prisma.idempotencyKey.count({ where: { key: 'stale' } }), { timeout: 5000 }).toBe(0);
    expect(await app.db.prisma.idempotencyKey.count({ where: { key: 'current' } })).toBe(1);
  });
});

/**
 * Sends `request` while another transaction holds the claim of `key` on POST /messages, as a
 * request still running would: it must be refused with 409 at once. The claim is let go after.
 */
async function whileKeyHeld(s: Awaited<ReturnType<typeof setup>>, key: string, request: () => ReturnType<ReturnType<typeof restClient>['post']>) {
  const held = await holdIdempotencyKey(app.db.prisma, inject('databaseUrl'), { apiKey: s.apiKey, route: `POST /messages ${s.channel.id}`, key });
  try {
    const started = Date.now();
    const during = await request();
    expect(during.status).toBe(409);
    expect(Date.now() - started).toBeLessThan(2000);
    return during;
  } finally {
    await held.release();
  }
}

describe.skipIf(!onPostgres)('Idempotency-Key under concurrency (PostgreSQL)', () => {
  it('20 concurrent identical sends with one key make exactly one message', async () => {
    const s = await setup();
    const results = await Promise.all(Array.from({ length: 20 }, () => s.withKey('burst').post('/messages', send)));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((status) => status === 202 || status === 409), statuses.join(',')).toBe(true);
    const originals = results.filter((r) => r.status === 202 && r.headers.get('idempotent-replayed') === null);
    expect(originals).toHaveLength(1);
    for (const replay of results.filter((r) => r.headers.get('idempotent-replayed') === 'true')) expect(replay.body).toEqual(originals[0]!.body);
    expect(await s.messages()).toBe(1);
    expect(await app.db.prisma.idempotencyKey.count({ where: { key: 'burst' } })).toBe(1);
  });

  it('answers 409 while the first request with the key is still in flight, and runs once it is gone', async () => {
    const s = await setup();
    const during = await whileKeyHeld(s, 'slow', () => s.withKey('slow').post('/messages', send));
    expect(during.body).toEqual({ status: 'error', message: 'A request with this Idempotency-Key is still in progress; retry once it has completed.' });
    const after = await s.withKey('slow').post('/messages', send);
    expect(after.status).toBe(202);
    expect(await s.messages()).toBe(1);
  });

  it('replays an answered key even while a concurrent retry holds its row', async () => {
    const s = await setup();
    const first = await s.withKey('answered').post('/messages', send);
    expect(first.status).toBe(202);
    // A concurrent retry's claim locks the answered row until its transaction ends.
    const holder = new pg.Client({ connectionString: inject('databaseUrl') });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM idempotency_keys WHERE key = 'answered' FOR UPDATE`);
      const retry = await s.withKey('answered').post('/messages', send);
      expect(retry.status).toBe(202);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toEqual(first.body);
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
    expect(await s.messages()).toBe(1);
  });
});

describe('idempotencyKey on GraphQL createContact and sendMessage', () => {
  const SEND = graphql(`
    mutation IdempotentSend($input: SendMessageInput!) {
      sendMessage(input: $input) { message { id body conversation { id } } userErrors { field message code } }
    }
  `);
  const CREATE = graphql(`
    mutation IdempotentCreateContact($input: CreateContactInput!) {
      createContact(input: $input) { contact { id email } userErrors { field message } }
    }
  `);

  async function gqlSetup() {
    const s = await setup();
    const gql = <TData, TVariables>(document: TypedDocumentNode<TData, TVariables>, variables: TVariables) =>
      executeOperation(app, s.host, bearer(s.apiKey), document, variables);
    return { ...s, gql };
  }

  it('replays the same object for the same key and input, one message', async () => {
    const s = await gqlSetup();
    const input = { to: { phone: '+31612347101' }, message: 'Once only', idempotencyKey: 'gql-1' };
    const first = await s.gql(SEND, { input });
    const again = await s.gql(SEND, { input: { ...input } });
    expect(first.data?.sendMessage?.message?.id).toEqual(expect.any(String));
    expect(again.data).toEqual(first.data);
    expect(await s.messages()).toBe(1);
    const created = await s.gql(CREATE, { input: { name: 'Gql', email: 'gql-idem@example.com', idempotencyKey: 'c-1' } });
    const createdAgain = await s.gql(CREATE, { input: { name: 'Gql', email: 'gql-idem@example.com', idempotencyKey: 'c-1' } });
    expect(createdAgain.data).toEqual(created.data);
    expect(created.data?.createContact?.userErrors).toEqual([]);
  });

  it('another input with the key, or a malformed key, is a userError on idempotencyKey', async () => {
    const s = await gqlSetup();
    await s.gql(SEND, { input: { to: { phone: '+31612347102' }, message: 'First', idempotencyKey: 'gql-2' } });
    const other = await s.gql(SEND, { input: { to: { phone: '+31612347102' }, message: 'Second', idempotencyKey: 'gql-2' } });
    expect(other.data?.sendMessage).toEqual({
      message: null,
      userErrors: [{ field: ['input', 'idempotencyKey'], message: 'The Idempotency-Key was already used with a different request body.', code: 'INVALID' }],
    });
    const malformed = await s.gql(SEND, { input: { to: { phone: '+31612347102' }, message: 'Third', idempotencyKey: '' } });
    expect(malformed.data?.sendMessage?.userErrors).toEqual([
      { field: ['input', 'idempotencyKey'], message: 'The Idempotency-Key must be 1 to 255 printable ASCII characters.', code: 'INVALID' },
    ]);
    expect(await s.messages()).toBe(1);
  });

  it('a refused input is replayed as the same userErrors; REST and GraphQL keys do not mix', async () => {
    const s = await gqlSetup();
    const refused = { to: { contactId: '00000000-0000-4000-8000-000000000000' }, message: 'hi', idempotencyKey: 'gql-3' };
    const first = await s.gql(SEND, { input: refused });
    expect(first.data?.sendMessage?.userErrors).toHaveLength(1);
    expect((await s.gql(SEND, { input: refused })).data).toEqual(first.data);
    const rest = await s.withKey('gql-3').post('/messages', { to: { phone: '+31612347103' }, message: 'REST' });
    expect(rest.status).toBe(202);
  });
});

describe('Idempotency-Key on the one-statement send (a contact id with an open conversation)', () => {
  /** A contact whose conversation on the channel is open, and a body that sends to it by id. */
  async function openConversation(s: Awaited<ReturnType<typeof setup>>) {
    const contact = await s.contact({ email: `open-${Math.random().toString(36).slice(2)}@example.com` });
    const opened = await s.send({ to: contact.id, message: 'opens the conversation' });
    return { body: { to: contact.id, message: 'Keyed by id' }, conversationId: opened.body.data.message.conversationId as string };
  }

  it('stores the answer with the conversation the statement chose, and replays it byte for byte', async () => {
    const s = await setup();
    const { body, conversationId } = await openConversation(s);
    const first = await s.withKey('direct-1').post('/messages', body);
    expect(first.status).toBe(202);
    expect(first.body.data.message.conversationId).toBe(conversationId);
    const row = await app.db.prisma.idempotencyKey.findFirstOrThrow({ where: { key: 'direct-1' } });
    expect(row.responseStatus).toBe(202);
    expect(row.responseBody).toEqual(first.body);
    const again = await s.withKey('direct-1').post('/messages', body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    expect(await s.messages()).toBe(2);
  });

  it('refuses the key with another body (422, nothing sent) and takes over an expired key', async () => {
    const s = await setup();
    const { body } = await openConversation(s);
    expect((await s.withKey('direct-2').post('/messages', body)).status).toBe(202);
    const other = await s.withKey('direct-2').post('/messages', { ...body, message: 'Something else' });
    expect(other.status).toBe(422);
    expect(other.body.errors).toEqual({ 'Idempotency-Key': ['The Idempotency-Key was already used with a different request body.'] });
    expect(await s.messages()).toBe(2);
    await app.db.prisma.idempotencyKey.updateMany({ where: { key: 'direct-2' }, data: { createdAt: new Date(Date.now() - 25 * 3600_000) } });
    const later = await s.withKey('direct-2').post('/messages', { ...body, message: 'A new day' });
    expect(later.status).toBe(202);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect((await app.db.prisma.idempotencyKey.findFirstOrThrow({ where: { key: 'direct-2' } })).responseBody).toEqual(later.body);
    expect(await s.messages()).toBe(3);
  });

  it('on GraphQL too: the replay names the message the first call sent', async () => {
    const s = await setup();
    const { body } = await openConversation(s);
    const SEND = graphql(`
      mutation IdempotentSendReplay($input: SendMessageInput!) {
        sendMessage(input: $input) { message { id body } userErrors { field message } }
      }
    `);
    const input = { to: { contactId: body.to }, message: 'Keyed on GraphQL', idempotencyKey: 'gql-direct' };
    const gql = () => executeOperation(app, s.host, bearer(s.apiKey), SEND, { input });
    const first = await gql();
    const again = await gql();
    expect(first.data?.sendMessage?.message?.id).toEqual(expect.any(String));
    expect(first.data?.sendMessage?.userErrors).toEqual([]);
    expect(again.data).toEqual(first.data);
    expect(await s.messages()).toBe(2);
  });

  it.skipIf(!onPostgres)('20 concurrent identical sends make one message; the others replay it or are told it is in flight', async () => {
    const s = await setup();
    const { body } = await openConversation(s);
    const results = await Promise.all(Array.from({ length: 20 }, () => s.withKey('direct-burst').post('/messages', body)));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((status) => status === 202 || status === 409), statuses.join(',')).toBe(true);
    const originals = results.filter((r) => r.status === 202 && r.headers.get('idempotent-replayed') === null);
    expect(originals).toHaveLength(1);
    for (const replay of results.filter((r) => r.headers.get('idempotent-replayed') === 'true')) expect(replay.body).toEqual(originals[0]!.body);
    expect(await s.messages()).toBe(2);
  });

  it.skipIf(!onPostgres)('answers 409 at once while another request holds the key, and sends once it is gone', async () => {
    const s = await setup();
    const { body } = await openConversation(s);
    await whileKeyHeld(s, 'direct-slow', () => s.withKey('direct-slow').post('/messages', body));
    expect((await s.withKey('direct-slow').post('/messages', body)).status).toBe(202);
    expect(await s.messages()).toBe(2);
  });

  it.skipIf(!onPostgres)('a failure late in the statement keeps neither the key nor the message; a retry sends', async () => {
    const s = await setup();
    const { body } = await openConversation(s);
    const marker = `explode-${Math.random().toString(36).slice(2)}`;
    const admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await admin.connect();
    try {
      // The delivery insert, the statement's last write but the events, fails for this message only.
      await admin.query(`CREATE OR REPLACE FUNCTION test_refuse_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF (SELECT body FROM messages WHERE id = NEW.message_id) = '${marker}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
          RETURN NEW;
        END $$`);
      await admin.query('CREATE TRIGGER test_refuse_delivery BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION test_refuse_delivery()');
      const failed = await s.withKey('direct-fails').post('/messages', { ...body, message: marker });
      expect(failed.status).toBe(500);
      expect(await app.db.prisma.idempotencyKey.count({ where: { key: 'direct-fails' } })).toBe(0);
      expect(await s.messages()).toBe(1);
    } finally {
      await admin.query('DROP TRIGGER IF EXISTS test_refuse_delivery ON deliveries; DROP FUNCTION IF EXISTS test_refuse_delivery()').catch(() => {});
      await admin.end();
    }
    const retry = await s.withKey('direct-fails').post('/messages', { ...body, message: marker });
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await s.messages()).toBe(2);
  });

  it.skipIf(!onPostgres)('waits for a busy conversation instead of refusing the send', async () => {
    const s = await setup();
    const { body, conversationId } = await openConversation(s);
    const holder = new pg.Client({ connectionString: inject('databaseUrl') });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM conversations WHERE id = $1 FOR UPDATE', [conversationId]);
      const pending = s.withKey('direct-busy').post('/messages', body);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await holder.query('COMMIT');
      const answer = await pending;
      expect(answer.status).toBe(202);
      expect(answer.body.data.message.conversationId).toBe(conversationId);
    } finally {
      await holder.end();
    }
    expect(await s.messages()).toBe(2);
  });
});
