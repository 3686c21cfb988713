import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addChannel, bearer, createConnection } from '../helpers/factories.js';
import { messagingSetup } from '../helpers/messaging.js';
import { restClient } from '../helpers/rest.js';
import { mintSession } from '../helpers/sessions.js';
import { observeSse } from '../helpers/sse.js';
import { recordingSocket, type RecordingSocket } from '../helpers/websocket.js';
import { graphql } from '../gql/index.js';
import { servedAppPerFile } from '../helpers/served-app.js';

// docs/inbox.md ("Following every channel"): a credential of several channels holds one socket (or
// one event stream) for all of them. messageAdded, messageUpdated and conversationUpdated without
// a channel deliver the events of every channel it can act as (X-Channel-Uuid, optional, narrows to
// one), `channelId` narrows to one of them, and a channelId it cannot act as is an error.

const WideMessageAdded = graphql(`
  subscription WideMessageAdded {
    messageAdded { id body channelId }
  }
`);

const port = servedAppPerFile();

/** A workspace with channels A and B (and C, which no session below may act as), their keys, a contact, and sessions over A+B and over A. */
async function twoChannels() {
  const s = await messagingSetup(port.app);
  const b = await addChannel(port.app.db.prisma, s.workspace.id, 'Channel B');
  const c = await addChannel(port.app.db.prisma, s.workspace.id, 'Channel C');
  const both = await createConnection(port.app.db.prisma, { workspaceId: s.workspace.id, name: 'A and B', channelIds: [s.channel.id, b.channel.id] });
  const sessionAB = await mintSession(restClient(port.app, s.host, both.token), { user: s.user.email });
  expect(sessionAB.channels.sort()).toEqual([s.channel.id, b.channel.id].sort());
  const sessionA = await mintSession(s.api, { user: s.user.email });
  expect(sessionA.channels).toEqual([s.channel.id]);
  const contact = await s.contact({ email: `wide-${randomUUID()}@example.com` });
  const keys = { A: s.apiKey, B: b.apiKey, C: c.apiKey };
  const channels = { A: s.channel.id, B: b.channel.id, C: c.channel.id };
  /** Sends `message` to the contact on a channel, with that channel's key. */
  const sendOn = async (channel: keyof typeof keys, message: string) => {
    const sent = await restClient(port.app, s.host, keys[channel]).post('/messages', { to: contact.id, message });
    expect(sent.status).toBe(202);
    return sent.body.data.message as { id: string; conversationId: string };
  };
  return { ...s, channels, sessionAB, sessionA, sendOn };
}

/** Starts each subscription on the socket, and resolves once the server has subscribed them. */
async function live(socket: RecordingSocket, subscriptions: Record<string, readonly [string, Record<string, unknown>?]>) {
  for (const [id, [query, variables]] of Object.entries(subscriptions)) socket.subscribe(id, query, variables);
  socket.subscribe('ready', '{ viewer { workspace { name } } }');
  await socket.until((messages) => messages.some((message) => message.id === 'ready' && message.type === 'complete'));
  await new Promise((r) => setTimeout(r, 150));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The data each `next` of operation `id` carried. */
const dataOf = (socket: RecordingSocket, id: string) => socket.of(id).filter((message) => message.type === 'next').map((message) => message.payload.data);

describe('subscriptions of a credential over several channels', () => {
  it('one socket over channels A and B receives both channels’ events, without X-Channel-Uuid; a session over A alone receives only A’s', async () => {
    const s = await twoChannels();
    const wide = await recordingSocket(port.served.port, s.host, { Authorization: `Bearer ${s.sessionAB.token}` });
    const narrow = await recordingSocket(port.served.port, s.host, { Authorization: `Bearer ${s.sessionA.token}` });
    try {
      const subscriptions = {
        added: ['subscription { messageAdded { body channelId } }'],
        conversations: ['subscription { conversationUpdated { channelId } }'],
        updated: ['subscription { messageUpdated { id channelId } }'],
      } as const;
      await live(wide, subscriptions);
      await live(narrow, subscriptions);
      await s.sendOn('A', 'on A');
      await s.sendOn('B', 'on B');
      await s.sendOn('C', 'on C');
      await wide.until(() => dataOf(wide, 'added').length >= 2 && dataOf(wide, 'conversations').length >= 2);
      await narrow.until(() => dataOf(narrow, 'added').length >= 1 && dataOf(narrow, 'conversations').length >= 1);
      await sleep(300);

      const { A, B } = s.channels;
      expect(dataOf(wide, 'added')).toEqual([{ messageAdded: { body: 'on A', channelId: A } }, { messageAdded: { body: 'on B', channelId: B } }]);
      expect(dataOf(wide, 'conversations')).toEqual([{ conversationUpdated: { channelId: A } }, { conversationUpdated: { channelId: B } }]);
      expect(dataOf(narrow, 'added')).toEqual([{ messageAdded: { body: 'on A', channelId: A } }]);
      expect(dataOf(narrow, 'conversations')).toEqual([{ conversationUpdated: { channelId: A } }]);
      // Whatever status changes arrived, each is of the subscriber's own channels.
      for (const data of dataOf(wide, 'updated')) expect([A, B]).toContain(data.messageUpdated.channelId);
      for (const data of dataOf(narrow, 'updated')) expect(data.messageUpdated.channelId).toBe(A);
      expect(JSON.stringify([wide.messages, narrow.messages])).not.toContain('errors');
    } finally {
      wide.close();
      narrow.close();
    }
  });

  it('narrows to one of its channels by channelId, or by X-Channel-Uuid in connection_init', async () => {
    const s = await twoChannels();
    const { A, B } = s.channels;
    const socket = await recordingSocket(port.served.port, s.host, { Authorization: `Bearer ${s.sessionAB.token}` });
    const headed = await recordingSocket(port.served.port, s.host, { Authorization: `Bearer ${s.sessionAB.token}`, 'X-Channel-Uuid': B });
    try {
      await live(socket, {
        onB: ['subscription ($channelId: ID) { messageAdded(channelId: $channelId) { body } }', { channelId: B }],
        // Upper case: ids are compared as UUIDs.
        conversationsOnA: ['subscription ($channelId: ID) { conversationUpdated(channelId: $channelId) { channelId } }', { channelId: A.toUpperCase() }],
        updatedOnB: ['subscription ($channelId: ID) { messageUpdated(channelId: $channelId) { channelId } }', { channelId: B }],
      });
      await live(headed, { all: ['subscription { messageAdded { body } }'] });
      await s.sendOn('A', 'on A');
      await s.sendOn('B', 'on B');
      await socket.until(() => dataOf(socket, 'onB').length >= 1 && dataOf(socket, 'conversationsOnA').length >= 1);
      await headed.until(() => dataOf(headed, 'all').length >= 1);
      await sleep(300);
      expect(dataOf(socket, 'onB')).toEqual([{ messageAdded: { body: 'on B' } }]);
      expect(dataOf(socket, 'conversationsOnA')).toEqual([{ conversationUpdated: { channelId: A } }]);
      for (const data of dataOf(socket, 'updatedOnB')) expect(data.messageUpdated.channelId).toBe(B);
      expect(dataOf(headed, 'all')).toEqual([{ messageAdded: { body: 'on B' } }]);
    } finally {
      socket.close();
      headed.close();
    }
  });

  it('answers a channelId the credential cannot act as with an error, not a silent stream', async () => {
    const s = await twoChannels();
    const { B, C } = s.channels;
    const wide = await recordingSocket(port.served.port, s.host, { Authorization: `Bearer ${s.sessionAB.token}` });
    const narrow = await recordingSocket(port.served.port, s.host, { Authorization: `Bearer ${s.sessionA.token}` });
    const headed = await recordingSocket(port.served.port, s.host, { Authorization: `Bearer ${s.sessionAB.token}`, 'X-Channel-Uuid': s.channels.A });
    try {
      const refused = [
        [wide, 'subscription ($channelId: ID) { messageAdded(channelId: $channelId) { id } }', C],
        [wide, 'subscription ($channelId: ID) { conversationUpdated(channelId: $channelId) { id } }', randomUUID()],
        [narrow, 'subscription ($channelId: ID) { messageUpdated(channelId: $channelId) { id } }', B],
        // The header names the channel it acts as: another of its channels is refused too.
        [headed, 'subscription ($channelId: ID) { messageAdded(channelId: $channelId) { id } }', B],
      ] as const;
      for (const [index, [socket, query, channelId]] of refused.entries()) socket.subscribe(`refused-${index}`, query, { channelId });
      for (const [index, [socket]] of refused.entries()) {
        const id = `refused-${index}`;
        await socket.until(() => socket.of(id).some((message) => message.type === 'complete'));
        expect(socket.of(id), id).toEqual([
          { id, type: 'next', payload: { errors: [expect.objectContaining({ message: 'The channelId must be a channel this credential can act as.', extensions: { code: 'BAD_USER_INPUT' } })] } },
          { id, type: 'complete' },
        ]);
      }
    } finally {
      wide.close();
      narrow.close();
      headed.close();
    }
  });

  it('follows every channel over one SSE stream too', async () => {
    const s = await twoChannels();
    const fetchOn = (path: string, init: RequestInit) => port.app.fetch(s.host, path, init);
    const stream = await observeSse(fetchOn, bearer(s.sessionAB.token), WideMessageAdded);
    try {
      await s.sendOn('B', 'on B');
      await s.sendOn('A', 'on A');
      await stream.waitFor(2);
      await sleep(200);
      expect(stream.received.map((event) => event.data?.messageAdded && { body: event.data.messageAdded.body, channelId: event.data.messageAdded.channelId })).toEqual([
        { body: 'on B', channelId: s.channels.B },
        { body: 'on A', channelId: s.channels.A },
      ]);
    } finally {
      await stream.close();
    }
  });
});
