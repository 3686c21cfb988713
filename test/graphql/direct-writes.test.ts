import net from 'node:net';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';
import { requestOnPort, serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { sessionSetup } from '../helpers/sessions.js';
import { socketClient } from '../helpers/websocket.js';

/**
 * Subscription results written to subscribers' connections directly (src/realtime/delivery.ts)
 * and their writes gathered per connection (src/realtime/coalesce.ts, STREAM_FLUSH_MS), on a real port:
 * what a client reads is what the transports' own pipelines write, and a client that does not read
 * is cut off.
 */

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const DOCUMENT = 'subscription { messageAdded { id body } }';

/** An SSE subscription on a raw socket: what arrives, as text, and the socket. */
async function rawSse(port: number, host: string, apiKey: string, document = DOCUMENT) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const body = JSON.stringify({ query: document });
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${apiKey}\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { socket, chunks, text: () => Buffer.concat(chunks).toString('latin1') };
}

const until = async (check: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return check();
};

/** The `data:` lines of an event stream's `next` events, parsed. */
const nextEvents = (text: string) => [...text.matchAll(/event: next\r?\n(?:[0-9a-f]+\r\n)?data: (.*)\n/g)].map((match) => JSON.parse(match[1]!) as { data: { messageAdded: { id: string; body: string } } });

/** The most `next` events one chunk of a chunked answer carries. */
const mostEventsInOneChunk = (text: string) => Math.max(0, ...text.split(/\r\n[0-9a-f]+\r\n/).map((chunk) => (chunk.match(/event: next\n/g) ?? []).length));

/** How many chunks of a chunked answer begin with an event. */
const chunksStartingAnEvent = (text: string) => [...text.matchAll(/\r\n[0-9a-f]+\r\nevent: next\n/g)].length;

describe('direct writes', () => {
  let served: ServedApp;
  afterAll(() => served?.close());

  it('gathers a burst of events into few writes per connection, in order, each event whole', { timeout: 60_000 }, async () => {
    served = await serveOnPort(app.db, { ...app.env, STREAM_FLUSH_MS: 300 }, { providers: app.providers });
    const setup = await messagingSetup(app);
    const sse = await rawSse(served.port, setup.host, setup.apiKey);
    const ws = await socketClient(served.port, setup.host, { Authorization: `Bearer ${setup.apiKey}` });
    const subscription = ws.subscribe(parse(DOCUMENT) as TypedDocumentNode<{ messageAdded: { id: string; body: string } }, Record<string, never>>);
    const overWs = () => subscription.received.map((result) => result.data!.messageAdded.body);
    expect(await until(() => sse.text().includes('\r\n\r\n'), 5000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const contact = await setup.contact({ email: 'burst@example.com' });
    const readsBefore = sse.chunks.length;
    const headers = { authorization: `Bearer ${setup.apiKey}`, 'content-type': 'application/json' };
    const sent = await Promise.all(
      Array.from({ length: 12 }, (_, i) => requestOnPort(served.port, setup.host, 'POST', '/api/connect/messages', headers, JSON.stringify({ to: contact.id, message: `burst ${i}` }))),
    );
    expect(sent.map((answer) => answer.status)).toEqual(Array(12).fill(202));
    expect(await until(() => nextEvents(sse.text()).length === 12 && overWs().length === 12, 10_000)).toBe(true);
    // Every event, each once, in the order the messages were stored, as yoga frames it.
    const ids = sent.map((answer) => (JSON.parse(answer.body) as { data: { message: { id: string } } }).data.message.id);
    const received = nextEvents(sse.text()).map((event) => event.data.messageAdded);
    expect(new Set(received.map((message) => message.id))).toEqual(new Set(ids));
    expect(received.map((message) => message.body)).toEqual(overWs());
    expect(subscription.errors).toEqual([]);
    // Twelve events within one interval arrive in far fewer reads than twelve, and as few chunks of
    // the chunked answer: those of one interval are joined into one.
    expect(sse.chunks.length - readsBefore).toBeLessThan(6);
    expect(chunksStartingAnEvent(sse.text())).toBeGreaterThanOrEqual(1);
    expect(chunksStartingAnEvent(sse.text())).toBeLessThan(4);
    subscription.stop();
    await ws.dispose();
    sse.socket.destroy();
  });

  it('sends a burst within one interval together to a client that reads, and never cuts it off', { timeout: 60_000 }, async () => {
    // A burst within one interval (far below the connection's limit).
    const paced = await serveOnPort(app.db, { ...app.env, STREAM_FLUSH_MS: 1000 }, { providers: app.providers });
    try {
      const setup = await messagingSetup(app);
      const sse = await rawSse(paced.port, setup.host, setup.apiKey);
      const ws = await socketClient(paced.port, setup.host, { Authorization: `Bearer ${setup.apiKey}` });
      const subscription = ws.subscribe(parse(DOCUMENT) as TypedDocumentNode<{ messageAdded: { id: string; body: string } }, Record<string, never>>);
      const contact = await setup.contact({ email: 'paced-burst@example.com' });
      const headers = { authorization: `Bearer ${setup.apiKey}`, 'content-type': 'application/json' };
      const send = (message: string) => requestOnPort(paced.port, setup.host, 'POST', '/api/connect/messages', headers, JSON.stringify({ to: contact.id, message }));
      // Both streams are open once an event reaches both (probes until one does); then each connection waits its interval.
      const both = () => nextEvents(sse.text()).length > 0 && subscription.received.length > 0;
      for (let probe = 0; probe < 10 && !both(); probe++) {
        expect((await send(`probe ${probe}`)).status).toBe(202);
        await until(both, 1000);
      }
      expect(both()).toBe(true);
      const sent = await Promise.all(Array.from({ length: 12 }, (_, i) => send(`paced ${i}`)));
      expect(sent.map((answer) => answer.status)).toEqual(Array(12).fill(202));
      const ofBurst = (bodies: string[]) => bodies.filter((body) => body.startsWith('paced ')).length;
      const overSse = () => ofBurst(nextEvents(sse.text()).map((event) => event.data.messageAdded.body));
      const overWs = () => ofBurst(subscription.received.map((result) => result.data!.messageAdded.body));
      expect(await until(() => overSse() === 12 && overWs() === 12, 10_000)).toBe(true);
      // More than four of them reached the SSE client in one chunk: gathered for one flush.
      expect(mostEventsInOneChunk(sse.text())).toBeGreaterThan(4);
      expect(paced.logs.filter((line) => line.includes('the client does not read'))).toEqual([]);
      expect(sse.text()).not.toContain('event: complete');
      expect(subscription.errors).toEqual([]);
      subscription.stop();
      await ws.dispose();
      sse.socket.destroy();
    } finally {
      await paced.close();
    }
  });

  it('what was gathered for the next flush leaves before the end of a stream whose session is revoked: its events, then the error, then complete', { timeout: 60_000 }, async () => {
    const setup = await sessionSetup(app);
    const sse = await rawSse(served.port, setup.host, setup.session.token);
    expect(await until(() => sse.text().includes('\r\n\r\n'), 5000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const contact = await setup.contact({ email: 'revoked-burst@example.com' });
    const headers = { authorization: `Bearer ${setup.apiKey}`, 'content-type': 'application/json' };
    const bodies = Array.from({ length: 5 }, (_, i) => `before ${i}`);
    for (const message of bodies) expect((await requestOnPort(served.port, setup.host, 'POST', '/api/connect/messages', headers, JSON.stringify({ to: contact.id, message }))).status).toBe(202);
    // Revoked within the interval (300 ms) the last events wait in for their flush.
    expect((await requestOnPort(served.port, setup.host, 'DELETE', `/api/connect/sessions/${setup.session.id}`, { authorization: `Bearer ${setup.apiKey}` })).status).toBe(204);
    expect(await until(() => sse.text().includes('event: complete'), 10_000)).toBe(true);
    const text = sse.text();
    const error = text.indexOf('UNAUTHENTICATED');
    // Events still on their way when the session lapsed may be dropped; what was written arrives
    // whole, in order, before the error, which is the last `next`, and complete follows it.
    const delivered = nextEvents(text.slice(0, error)).map((event) => event.data.messageAdded.body);
    expect(delivered.length).toBeGreaterThanOrEqual(1);
    expect(delivered).toEqual(bodies.filter((body) => delivered.includes(body)));
    expect(error).toBeGreaterThan(text.lastIndexOf('event: next'));
    expect(text.indexOf('event: complete')).toBeGreaterThan(error);
    sse.socket.destroy();
  });

  it('cuts off an SSE client that does not read: its connection is dropped, the server and the subscribers sharing its source go on', { timeout: 60_000 }, async () => {
    const small = await serveOnPort(app.db, { ...app.env, STREAM_MAX_BUFFERED_BYTES: 2 * 1024 * 1024 }, { providers: app.providers });
    try {
      const setup = await messagingSetup(app);
      // Each event 16 times the body: the kernel's buffers fill within a few dozen sends.
      const wide = `subscription { messageAdded { id body ${Array.from({ length: 15 }, (_, i) => `b${i}: body`).join(' ')} } }`;
      // As printed, the text a graphql-ws client sends: the reader below shares its source.
      const printed = print(parse(wide));
      const sse = await rawSse(small.port, setup.host, setup.apiKey, printed);
      const ws = await socketClient(small.port, setup.host, { Authorization: `Bearer ${setup.apiKey}` });
      const reader = ws.subscribe(parse(printed) as TypedDocumentNode<{ messageAdded: { id: string; body: string } }, Record<string, never>>);
      expect(await until(() => sse.text().includes('\r\n\r\n'), 5000)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      sse.socket.pause();
      const cutOff = () => small.logs.filter((line) => line.includes('the client does not read')).length;
      const contact = await setup.contact({ email: 'never-reads-sse@example.com' });
      const long = 'x'.repeat(4000);
      const headers = { authorization: `Bearer ${setup.apiKey}`, 'content-type': 'application/json' };
      let sends = 0;
      for (; sends < 2000 && cutOff() === 0; sends++) {
        expect((await requestOnPort(small.port, setup.host, 'POST', '/api/connect/messages', headers, JSON.stringify({ to: contact.id, message: `${sends} ${long}` }))).status).toBe(202);
      }
      expect(await until(() => cutOff() === 1, 10_000)).toBe(true);
      // Cut off once 2 MiB waited for it beyond what the kernel took (each event 64 KB), not after every send;
      // the reader's socket, which reads, is never cut off.
      expect(sends).toBeLessThan(500);
      expect(small.logs.filter((line) => line.includes('event stream cut off: the client does not read'))).toHaveLength(1);
      // The server answers others meanwhile; once the client reads, its connection has been closed, without `complete`.
      expect((await requestOnPort(small.port, setup.host, 'GET', '/api/connect/contacts?limit=1', { authorization: `Bearer ${setup.apiKey}` })).status).toBe(200);
      const closed = new Promise<boolean>((resolve) => {
        sse.socket.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 15_000).unref();
      });
      sse.socket.resume();
      expect(await closed).toBe(true);
      expect(sse.text()).not.toContain('event: complete');
      // What it read is whole events, each of them a send's.
      expect(nextEvents(sse.text()).length).toBeGreaterThan(0);
      expect(nextEvents(sse.text()).every((event) => event.data.messageAdded.body.endsWith(long))).toBe(true);
      // The subscriber that reads received every event, and its stream goes on.
      expect(await until(() => reader.received.length === sends, 15_000)).toBe(true);
      expect(reader.received.map((result) => result.data!.messageAdded.body)).toEqual(Array.from({ length: sends }, (_, i) => `${i} ${long}`));
      expect(reader.errors).toEqual([]);
      expect((await requestOnPort(small.port, setup.host, 'POST', '/api/connect/messages', headers, JSON.stringify({ to: contact.id, message: 'after' }))).status).toBe(202);
      expect(await until(() => reader.received.length === sends + 1, 10_000)).toBe(true);
      reader.stop();
      await ws.dispose();
      sse.socket.destroy();
    } finally {
      await small.close();
    }
  });
});
