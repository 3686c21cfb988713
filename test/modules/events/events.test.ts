import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorkerOptions } from '../../../src/modules/delivery/delivery.worker.js';
import { importContact } from '../../../src/modules/contacts/contacts.service.js';
import { createWebhook, deleteWebhook } from '../../../src/modules/webhooks/webhooks.service.js';
import { bearer, workspaceWithChannel } from '../../helpers/factories.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { testWorker } from '../../helpers/worker.js';
import { executeOperation } from '../../helpers/graphql.js';
import { startReceiver, type ReceivedRequest } from '../../helpers/receiver.js';
import { restClient } from '../../helpers/rest.js';
import { testSealer } from '../../helpers/secrets.js';

// A database of its own: workers claim every due delivery, so on the shared run
// database they would deliver other test files' events under their feet.
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
/** The SQL of every statement the app's database ran. */
const statements: string[] = [];
beforeAll(async () => {
  app = await appOnOwnDatabase({ onQuery: (sql) => statements.push(sql) });
});
afterAll(() => app.drop());

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean | Promise<boolean>, ms = 8000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

function worker(overrides: Partial<DeliveryWorkerOptions> = {}) {
  const w = testWorker(app.db, overrides);
  cleanups.push(() => w.stop());
  w.start();
  return w;
}

async function receiver(respond?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(respond);
  cleanups.push(r.close);
  return r;
}

/** A workspace with a channel without upstream (accepting a message is sending it) and a REST client. */
async function workspace() {
  const s = await workspaceWithChannel(app.db.prisma);
  const api = restClient(app, s.host, s.apiKey);
  const subscribe = async (url: string, events: string[] = []) => {
    const { endpoint, secret } = await createWebhook(app.db.prisma, { workspaceId: s.workspace.id, url, events }, testSealer);
    return { ...endpoint, secret };
  };
  return { ...s, api, subscribe };
}

interface Event {
  type: string;
  timestamp: string;
  data: Record<string, any>;
}

const events = (r: { received: ReceivedRequest[] }): Event[] => r.received.map((request) => JSON.parse(request.body));
const types = (r: { received: ReceivedRequest[] }) => events(r).map((event) => event.type);
const eventDeliveries = (endpointId: string) => app.db.prisma.delivery.findMany({ where: { endpointId } });
const allDone = async (endpointId: string) => (await eventDeliveries(endpointId)).every((d) => d.status === 'succeeded');

describe('event webhooks', () => {
  it('sends every event type with a Standard Webhooks signature and the REST view as data', async () => {
    const r = await receiver();
    const s = await workspace();
    const endpoint = await s.subscribe(r.url);
    worker();

    const created = await s.api.post('/contacts', { name: 'Ada', email: 'ada@example.com' });
    expect(created.status).toBe(201);
    const contactId = created.body.data.contact.id;
    const renamed = await s.api.patch(`/contacts/${contactId}`, { name: 'Ada Lovelace' });
    expect(renamed.status).toBe(200);
    // The same values again change nothing: no event.
    expect((await s.api.patch(`/contacts/${contactId}`, { name: 'Ada Lovelace', email: 'ada@example.com' })).status).toBe(200);

    const sent = await s.api.post('/messages', { to: contactId, message: 'Hello' });
    expect(sent.status).toBe(202);
    const message = sent.body.data.message;
    // The conversation's view shows its last message: close once that message's status has settled,
    // so that the event's view and the answer's are of the same moment.
    await until(() => types(r).includes('message.status_changed'));
    const closed = await s.api.post(`/conversations/${message.conversationId}/close`);
    expect(closed.status).toBe(200);
    // Closing a closed conversation records no state change and emits nothing.
    expect((await s.api.post(`/conversations/${message.conversationId}/close`)).status).toBe(200);
    const reopened = await s.api.post(`/conversations/${message.conversationId}/reopen`);
    expect(reopened.status).toBe(200);

    const expected = ['contact.created', 'contact.updated', 'message.created', 'message.status_changed', 'conversation.closed', 'conversation.reopened'];
    await until(() => r.received.length >= expected.length);
    await until(() => allDone(endpoint.id));
    await sleep(100);
    expect(types(r).sort()).toEqual([...expected].sort());

    for (const request of r.received) {
      const headers = request.headers as Record<string, string>;
      expect(() => new Webhook(endpoint.secret).verify(request.body, headers)).not.toThrow();
      expect(() => new Webhook(endpoint.secret).verify(request.body.replace('"data"', '"data" '), headers)).toThrow();
      expect(headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      const body = JSON.parse(request.body);
      expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    }
    // webhook-id is the outbox row of this event for this endpoint.
    const ids = (await eventDeliveries(endpoint.id)).map((d) => d.id).sort();
    expect(r.received.map((request) => request.headers['webhook-id']).sort()).toEqual(ids);

    const byType = Object.fromEntries(events(r).map((event) => [event.type, event.data]));
    expect(byType['contact.created']).toEqual(created.body.data.contact);
    expect(byType['contact.updated']).toEqual(renamed.body.data.contact);
    expect(byType['message.created']).toEqual(message);
    expect(byType['message.status_changed']).toEqual({ ...message, status: 'sent' });
    // An event has no caller, so its conversation view has no assignedToMe (docs/inbox.md); the rest is the REST view.
    const withoutCaller = ({ assignedToMe, ...view }: { assignedToMe: boolean }) => (expect(assignedToMe).toBe(false), view);
    expect(byType['conversation.closed']).toEqual(withoutCaller(closed.body.data.conversation));
    expect(byType['conversation.reopened']).toEqual(withoutCaller(reopened.body.data.conversation));
    expect(byType['conversation.closed']).not.toHaveProperty('assignedToMe');
  });

  it('sends the events of a send: the recipient contact created, the conversation reopened, the message created', async () => {
    const r = await receiver();
    const s = await workspace();
    const endpoint = await s.subscribe(r.url);
    const first = await s.api.post('/messages', { to: { phone: '+31611112222', name: 'Grace' }, message: 'one' });
    expect(first.status).toBe(202);
    const { conversationId, contactId } = first.body.data.message;
    expect((await s.api.post(`/conversations/${conversationId}/close`)).status).toBe(200);
    // A silent send keeps the conversation closed; a normal one reopens it.
    expect((await s.api.post('/messages', { to: contactId, message: 'two', silent: true })).status).toBe(202);
    const third = await s.api.post('/messages', { to: contactId, message: 'three' });
    expect(third.status).toBe(202);
    worker();
    await until(async () => (await eventDeliveries(endpoint.id)).length === 9 && (await allDone(endpoint.id)));

    expect(types(r).filter((type) => type.startsWith('contact.'))).toEqual(['contact.created']);
    expect(types(r).filter((type) => type.startsWith('conversation.')).sort()).toEqual(['conversation.closed', 'conversation.reopened']);
    expect(types(r).filter((type) => type === 'message.created')).toHaveLength(3);
    expect(types(r).filter((type) => type === 'message.status_changed')).toHaveLength(3);
    const contact = events(r).find((event) => event.type === 'contact.created')!.data;
    expect(contact).toMatchObject({ id: contactId, name: 'Grace', phoneNumber: '+31611112222' });
    const reopened = events(r).find((event) => event.type === 'conversation.reopened')!.data;
    expect(reopened).toMatchObject({ id: conversationId, status: 'open', closedAt: null });
    expect(reopened.stateChanges.map((change: { type: string }) => change.type)).toEqual(['opened', 'closed', 'reopened']);
  });

  it('never puts an encrypted message’s content in an event', async () => {
    const r = await receiver();
    const s = await workspace();
    const endpoint = await s.subscribe(r.url, ['message.created', 'message.status_changed']);
    const ciphertext = 'U0VBTEVELUNJUEhFUlRFWFQ=';
    const sent = await s.api.post('/messages', { to: { phone: '+31633334444' }, message: ciphertext, is_encrypted: true });
    expect(sent.status).toBe(202);
    worker();
    await until(async () => (await eventDeliveries(endpoint.id)).length === 2 && (await allDone(endpoint.id)));
    expect(types(r).sort()).toEqual(['message.created', 'message.status_changed']);
    for (const event of events(r)) expect(event.data).toMatchObject({ id: sent.body.data.message.id, isEncrypted: true, body: null, placeholder: 'Encrypted message hidden' });
    expect(r.received.map((request) => request.body).join('')).not.toContain(ciphertext);
    const stored = await eventDeliveries(endpoint.id);
    expect(JSON.stringify(stored.map((d) => d.payload))).not.toContain(ciphertext);
  });

  it('sends each endpoint only the events it subscribed to, and none of another workspace', async () => {
    const [contacts, conversations, everything, elsewhere] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    const s = await workspace();
    await s.subscribe(contacts.url, ['contact.created', 'contact.updated']);
    await s.subscribe(conversations.url, ['conversation.closed']);
    await s.subscribe(everything.url);
    const other = await workspace();
    await other.subscribe(elsewhere.url);

    const sent = await s.api.post('/messages', { to: { email: 'lin@example.com' }, message: 'Hi' });
    expect(sent.status).toBe(202);
    expect((await s.api.post(`/conversations/${sent.body.data.message.conversationId}/close`)).status).toBe(200);
    worker();
    await until(() => everything.received.length === 4);
    await until(() => contacts.received.length === 1 && conversations.received.length === 1);
    await sleep(200);
    expect(types(contacts)).toEqual(['contact.created']);
    expect(types(conversations)).toEqual(['conversation.closed']);
    expect(types(everything).sort()).toEqual(['contact.created', 'conversation.closed', 'message.created', 'message.status_changed']);
    expect(elsewhere.received).toEqual([]);
  });

  it('records events of GraphQL mutations and of contacts imported by operators', async () => {
    const r = await receiver();
    const s = await workspace();
    const endpoint = await s.subscribe(r.url, ['contact.created', 'contact.updated']);
    const UpdateContactName = parse(`
      mutation UpdateContactName($id: ID!, $name: String!) {
        updateContact(id: $id, input: { name: $name }) { contact { id name } userErrors { message } }
      }
    `) as TypedDocumentNode<{ updateContact: { contact: { id: string; name: string } | null; userErrors: { message: string }[] } }, { id: string; name: string }>;
    const imported = await importContact(app.db.prisma, { workspaceId: s.workspace.id, name: 'Legacy', phoneRaw: '0031 6 5555 6666', isGroup: false });
    const result = await executeOperation(app, s.host, bearer(s.apiKey), UpdateContactName, { id: imported.id, name: 'Renamed' });
    expect(result.data?.updateContact.contact).toEqual({ id: imported.id, name: 'Renamed' });
    worker();
    await until(async () => (await eventDeliveries(endpoint.id)).length === 2 && (await allDone(endpoint.id)));
    expect(events(r).map((event) => [event.type, event.data.id, event.data.name]).sort()).toEqual([
      ['contact.created', imported.id, 'Legacy'],
      ['contact.updated', imported.id, 'Renamed'],
    ]);
  });

  it('records nothing for a change that was rolled back, and everything for one that committed', async () => {
    // Storing the answer of a send made with Idempotency-Key `refuse` fails: the last
    // statement of its transaction, after its events were written, so all of it is rolled back.
    const local = await appOnOwnDatabase({
      setupSql: `
        CREATE FUNCTION refuse_answer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.key = 'refuse' THEN RAISE EXCEPTION 'answer refused'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_answer BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_answer();`,
    });
    try {
      const s = await workspaceWithChannel(local.db.prisma);
      const api = restClient(local, s.host, s.apiKey);
      const { endpoint } = await createWebhook(local.db.prisma, { workspaceId: s.workspace.id, url: 'http://127.0.0.1:9/unused', events: [] }, testSealer);
      const refused = restClient(local, s.host, s.apiKey, { 'idempotency-key': 'refuse' });
      const failed = await refused.post('/messages', { to: { phone: '+31612340077' }, message: 'lost' });
      expect(failed.status).toBe(500);
      expect(await local.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(0);
      expect(await local.db.prisma.delivery.count({ where: { workspaceId: s.workspace.id } })).toBe(0);

      const sent = await api.post('/messages', { to: { phone: '+31612340077' }, message: 'kept' });
      expect(sent.status).toBe(202);
      const queued = await local.db.prisma.delivery.findMany({ where: { endpointId: endpoint.id }, orderBy: { eventType: 'asc' } });
      expect(queued.map((d) => [d.eventType, d.status])).toEqual([
        ['contact.created', 'pending'],
        ['message.created', 'pending'],
      ]);
      // A rejected write has no events either.
      expect((await api.post('/contacts', { name: 'Twin', phone: '+31612340077' })).status).toBe(422);
      expect(await local.db.prisma.delivery.count({ where: { endpointId: endpoint.id } })).toBe(2);
    } finally {
      await local.drop();
    }
  });

  it('queues the events of one change with one statement, whatever the number of endpoints', async () => {
    const s = await workspace();
    for (let i = 0; i < 3; i++) await s.subscribe(`http://127.0.0.1:9/${i}`, i === 2 ? ['contact.updated'] : []);
    const first = await s.api.post('/messages', { to: { phone: '+31612340099' }, message: 'one' });
    expect((await s.api.post(`/conversations/${first.body.data.message.conversationId}/close`)).status).toBe(200);
    statements.length = 0;
    const sent = await s.api.post('/messages', { to: { phone: '+31612340099' }, message: 'two' });
    expect(sent.status).toBe(202);
    const eventInserts = statements.filter((sql) => /INSERT INTO deliveries/i.test(sql));
    expect(eventInserts).toHaveLength(1);
    // conversation.reopened and message.created, for each of the two endpoints taking every event.
    const queued = await app.db.prisma.delivery.findMany({ where: { workspaceId: s.workspace.id, eventType: { in: ['conversation.reopened', 'message.created'] } } });
    expect(queued.map((d) => d.eventType).sort()).toEqual(['conversation.reopened', 'conversation.reopened', 'message.created', 'message.created', 'message.created', 'message.created']);
  });
});

describe('event delivery', () => {
  it('retries an endpoint answering 5xx with growing delays, under one webhook-id', async () => {
    const r = await receiver((n) => ({ status: n <= 2 ? 503 : 200 }));
    const s = await workspace();
    const endpoint = await s.subscribe(r.url, ['contact.created']);
    expect((await s.api.post('/contacts', { name: 'Retry', phone: '+31612120000' })).status).toBe(201);
    worker({ backoffMs: 100 });
    await until(() => allDone(endpoint.id));
    expect(r.received).toHaveLength(3);
    const [delivery] = await eventDeliveries(endpoint.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3, lastError: null });
    expect(new Set(r.received.map((request) => request.headers['webhook-id']))).toEqual(new Set([delivery!.id]));
    // The same body each time, each attempt signed afresh.
    expect(new Set(r.received.map((request) => request.body)).size).toBe(1);
    for (const request of r.received) expect(() => new Webhook(endpoint.secret).verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    const gaps = [r.received[1]!.at - r.received[0]!.at, r.received[2]!.at - r.received[1]!.at];
    // 100 ms then 200 ms, each with jitter down to half.
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
  });

  it('keeps delivering while one endpoint hangs: a slow receiver holds its own attempt, not the queue', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 1500 }));
    const fast = await receiver();
    const hanging = await workspace();
    await hanging.subscribe(slow.url, ['contact.created']);
    const other = await workspace();
    await other.subscribe(fast.url, ['contact.created']);
    // The test worker's receivers time out after 2 s: the slow one answers within it.
    worker();

    expect((await hanging.api.post('/contacts', { name: 'Slow', email: 'slow@example.com' })).status).toBe(201);
    await until(() => slow.received.length === 1);
    const queuedAt = Date.now();
    expect((await other.api.post('/contacts', { name: 'Fast', email: 'fast@example.com' })).status).toBe(201);
    await until(() => fast.received.length === 1);
    // Delivered while the slow receiver still holds its answer, not after it.
    expect(Date.now() - queuedAt).toBeLessThan(1000);
    expect(slow.received).toHaveLength(1);
  });

  it('gives a receiver that was down every event once it is back, exactly once per event', async () => {
    // Take a free port, then leave nothing listening on it.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const s = await workspace();
    const endpoint = await s.subscribe(`http://127.0.0.1:${port}/hook`);
    const sends = [];
    for (let i = 0; i < 4; i++) sends.push(await s.api.post('/messages', { to: { phone: `+3161234010${i}` }, message: `m${i}` }));
    expect(sends.every((sent) => sent.status === 202)).toBe(true);
    worker({ backoffMs: 100 });
    await until(async () => (await eventDeliveries(endpoint.id)).filter((d) => d.attempts >= 2).length >= 8);
    expect((await eventDeliveries(endpoint.id)).some((d) => d.lastError?.startsWith('webhook unreachable'))).toBe(true);

    const received: string[] = [];
    const back = http.createServer((req, res) => {
      received.push(String(req.headers['webhook-id']));
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => back.listen(port, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => back.close(() => resolve())));
    await until(async () => (await eventDeliveries(endpoint.id)).length === 12 && (await allDone(endpoint.id)), 15_000);
    await sleep(200);
    // Four contacts created, four messages created, four messages sent.
    expect(received).toHaveLength(12);
    expect(new Set(received).size).toBe(12);
    expect(new Set(received)).toEqual(new Set((await eventDeliveries(endpoint.id)).map((d) => d.id)));
  });

  it('drops the events queued for an endpoint when it is deleted', async () => {
    const s = await workspace();
    const endpoint = await s.subscribe('http://127.0.0.1:9/gone');
    expect((await s.api.post('/contacts', { name: 'Gone', email: 'gone@example.com' })).status).toBe(201);
    expect(await eventDeliveries(endpoint.id)).toHaveLength(1);
    await deleteWebhook(app.db.prisma, endpoint.id);
    expect(await eventDeliveries(endpoint.id)).toHaveLength(0);
  });
});
