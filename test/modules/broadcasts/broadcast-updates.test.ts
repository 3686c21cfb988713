import { randomUUID } from 'node:crypto';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { BroadcastRunner } from '../../../src/modules/broadcasts/broadcasts.runner.js';
import { createChannel } from '../../../src/modules/channels/channels.service.js';
import { createWorkspace } from '../../../src/modules/workspaces/workspaces.service.js';
import { uuid7 } from '../../../src/lib/uuid.js';
import { appOnOwnDatabase, appPerFile } from '../../helpers/fresh-database.js';
import { createTestApp } from '../../helpers/app.js';
import { bearer, uniqueHost } from '../../helpers/factories.js';
import { startReceiver } from '../../helpers/receiver.js';
import { restClient } from '../../helpers/rest.js';
import { testSealer } from '../../helpers/secrets.js';
import { observeSse } from '../../helpers/sse.js';
import { fetchAs, serveOnPort } from '../../helpers/real-port.js';
import { socketClient } from '../../helpers/websocket.js';
import { appWorker } from '../../helpers/worker.js';

/**
 * `broadcastUpdated(id:)` (docs/broadcasts.md#following-and-steering-it): the broadcast's view now,
 * then at most once a second while it changes, a last one when it finishes or is canceled, and
 * the stream completes; another workspace's or channel's broadcast is refused.
 */

const perFile = appPerFile();
const { cleanups } = perFile;

const UPDATED = parse('subscription ($id: ID!) { broadcastUpdated(id: $id) { id name status ratePerSecond counts { total pending sent failed skipped } finishedAt } }');

interface View {
  id: string;
  name: string;
  status: string;
  counts: { total: number; pending: number; sent: number; failed: number; skipped: number };
  finishedAt: string | null;
}

/** A workspace with a channel posting to a receiver, `n` contacts, and a client acting as the channel. */
async function setup(n: number) {
  const receiver = await startReceiver();
  cleanups.push(receiver.close);
  const workspace = await createWorkspace(perFile.app.db.prisma, { hostname: uniqueHost('bu'), name: 'Updates' });
  const { channel, apiKey } = await createChannel(perFile.app.db.prisma, { workspaceId: workspace.id, name: 'Hooked', type: 'whatsapp', webhookUrl: receiver.url }, testSealer);
  const contacts = Array.from({ length: n }, (_, i) => ({ id: uuid7(), workspaceId: workspace.id, name: `Person ${i}`, email: `u${i}-${workspace.id}@example.com` }));
  await perFile.app.db.prisma.contact.createMany({ data: contacts });
  const api = restClient(perFile.app, workspace.hostname, apiKey);
  const broadcast = (body: Record<string, unknown>) => api.post('/broadcasts', { audience: { contacts: contacts.map((c) => c.id) }, message: { message: 'Hello' }, ...body });
  return { workspace, channel, apiKey, api, broadcast };
}

/** The delivery worker and the broadcast runner of one process, started. */
function startProcess() {
  const worker = appWorker(perFile.app);
  const runner = new BroadcastRunner({ prisma: perFile.app.db.prisma, sql: perFile.app.db.query, logger: perFile.app.logger, events: perFile.app.events, onMessagesMade: () => worker.nudge(), idleMs: 50 });
  worker.start();
  runner.start();
  cleanups.push(async () => {
    await runner.stop();
    await worker.stop();
  });
}

async function watch(host: string, apiKey: string, id: string) {
  const stream = await observeSse((path, init) => perFile.app.fetch(host, path, init), bearer(apiKey), UPDATED as never, { id } as never);
  cleanups.push(() => stream.close());
  return stream;
}

const views = (received: { data?: unknown }[]) => received.map((result) => (result.data as { broadcastUpdated: View }).broadcastUpdated);

describe('broadcastUpdated', () => {
  it('gives the view now, then at most once a second while the counts change, a last one when it finishes, then completes', async () => {
    const s = await setup(30);
    const created = await s.broadcast({ name: 'Watched', rate_per_second: 10 });
    expect(created.status).toBe(202);
    const id = created.body.data.broadcast.id as string;
    const stream = await watch(s.workspace.hostname, s.apiKey, id);
    startProcess();
    const end = await stream.endsWithin(30_000);
    expect(end.completed).toBe(true);
    expect(stream.received.every((result) => !('errors' in result))).toBe(true);
    const seen = views(stream.received);
    expect(seen[0]).toMatchObject({ id, name: 'Watched', counts: { total: 30, sent: 0 } });
    expect(seen.at(-1)).toMatchObject({ id, status: 'finished', counts: { total: 30, pending: 0, sent: 30, failed: 0, skipped: 0 }, finishedAt: expect.any(String) });
    // Three seconds of sending: the counts went by on the way, never going back.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.some((view) => view.counts.sent > 0 && view.counts.sent < 30)).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.counts.sent).toBeGreaterThanOrEqual(seen[i - 1]!.counts.sent);
    // At most once a second, but the last, which comes when it finishes: given a second apart, each
    // arriving once its view is read (which takes its own time on a busy machine).
    const arrivals = stream.arrivals.slice(0, -1);
    expect(arrivals.length).toBeLessThanOrEqual(Math.ceil((arrivals.at(-1)! - arrivals[0]!) / 1000) + 1);
    for (let i = 1; i < arrivals.length; i++) expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThanOrEqual(500);
    expect(seen.filter((view) => view.status === 'finished')).toHaveLength(1);
  }, 60_000);

  it('gives a last view at once when the broadcast is canceled; an ended broadcast gives its view alone', async () => {
    const s = await setup(10);
    const created = await s.broadcast({ name: 'Slow', rate_per_second: 1 });
    const id = created.body.data.broadcast.id as string;
    const stream = await watch(s.workspace.hostname, s.apiKey, id);
    startProcess();
    await stream.waitFor(2, 10_000);
    const canceledAt = Date.now();
    expect((await s.api.post(`/broadcasts/${id}/cancel`)).body.data.broadcast.status).toBe('canceled');
    const end = await stream.endsWithin(5000);
    expect(end.completed).toBe(true);
    const last = views(stream.received).at(-1)!;
    // Canceled: the recipients whose message was not made are skipped; those made already may still be leaving.
    expect(last).toMatchObject({ status: 'canceled', counts: { total: 10 } });
    expect(last.counts.skipped).toBeGreaterThan(0);
    expect(last.counts.pending + last.counts.sent + last.counts.skipped).toBe(10);
    // Told with the cancel, not at the next second's view (loosely bounded: a loaded machine answers late).
    expect(stream.arrivals.at(-1)! - canceledAt).toBeLessThan(3000);

    // Subscribing once it has ended: its view, once, and the stream completes.
    const again = await watch(s.workspace.hostname, s.apiKey, id);
    expect((await again.endsWithin(5000)).completed).toBe(true);
    expect(views(again.received)).toEqual([last]);
  }, 60_000);

  it('streams the same over a WebSocket and an event stream on a real port, each completing after the last view', async () => {
    const served = await serveOnPort(perFile.app.db, perFile.app.env, { events: perFile.app.events });
    cleanups.push(() => served.close());
    const s = await setup(8);
    const id = (await s.broadcast({ name: 'Served', rate_per_second: 8 })).body.data.broadcast.id as string;
    const socket = socketClient(served.port, s.workspace.hostname, bearer(s.apiKey));
    cleanups.push(() => socket.dispose());
    const ws = socket.subscribe(UPDATED as never, { id } as never);
    const fetchHere = fetchAs(s.workspace.hostname);
    const sse = await observeSse((path, init) => fetchHere(`http://127.0.0.1:${served.port}${path}`, init), bearer(s.apiKey), UPDATED as never, { id } as never);
    cleanups.push(() => sse.close());
    startProcess();
    await ws.done;
    expect((await sse.endsWithin(30_000)).completed).toBe(true);
    expect(ws.errors).toEqual([]);
    for (const received of [ws.received, sse.received]) {
      expect(views(received)[0]).toMatchObject({ id, counts: { total: 8 } });
      expect(views(received).at(-1)).toMatchObject({ id, status: 'finished', counts: { sent: 8, pending: 0 } });
    }
  }, 60_000);

  it("refuses another workspace's or another channel's broadcast as not found, telling it nothing", async () => {
    const home = await setup(2);
    const created = await home.broadcast({ name: 'Secret plan', start_at: '2099-01-01T00:00:00Z' });
    const id = created.body.data.broadcast.id as string;
    const other = await setup(1);
    const { apiKey: siblingKey } = await createChannel(perFile.app.db.prisma, { workspaceId: home.workspace.id, name: 'Sibling', type: 'whatsapp' }, testSealer);
    for (const [host, key] of [
      [other.workspace.hostname, other.apiKey],
      [home.workspace.hostname, siblingKey],
    ] as const) {
      for (const asked of [id, id.toUpperCase(), uuid7(), 'not-an-id']) {
        const stream = await watch(host, key, asked);
        expect((await stream.endsWithin(5000)).completed).toBe(true);
        expect(stream.received).toHaveLength(1);
        const [result] = stream.received as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }[];
        expect(result!.data ?? null).toBeNull();
        expect(result!.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([['Broadcast not found.', 'NOT_FOUND']]);
        expect(JSON.stringify(result)).not.toContain('Secret plan');
      }
    }
    // Its own channel's key is given it.
    const own = await watch(home.workspace.hostname, home.apiKey, id);
    await own.waitFor(1);
    expect(views(own.received)).toEqual([expect.objectContaining({ id, name: 'Secret plan', status: 'scheduled' })]);
  }, 60_000);

  it("reaches a subscriber of another server instance over Redis, from the other's runner and worker", async () => {
    const redis = { REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_PREFIX: `broadcasts-${randomUUID()}:` };
    const one = await appOnOwnDatabase({ env: redis });
    // Another instance on the same database; the database is closed with the first.
    const two = await createTestApp(redis, { ...one.db, close: async () => {} });
    try {
      const receiver = await startReceiver();
      cleanups.push(receiver.close);
      const workspace = await createWorkspace(one.db.prisma, { hostname: uniqueHost('bx'), name: 'Two servers' });
      const { apiKey } = await createChannel(one.db.prisma, { workspaceId: workspace.id, name: 'Hooked', type: 'whatsapp', webhookUrl: receiver.url }, testSealer);
      const contacts = Array.from({ length: 12 }, (_, i) => ({ id: uuid7(), workspaceId: workspace.id, name: `Far ${i}`, email: `far${i}-${workspace.id}@example.com` }));
      await one.db.prisma.contact.createMany({ data: contacts });
      const created = await restClient(one, workspace.hostname, apiKey).post('/broadcasts', {
        name: 'Far away',
        audience: { contacts: contacts.map((c) => c.id) },
        message: { message: 'Hi' },
        rate_per_second: 6,
      });
      const id = created.body.data.broadcast.id as string;
      const stream = await observeSse((path, init) => two.fetch(workspace.hostname, path, init), bearer(apiKey), UPDATED as never, { id } as never);
      cleanups.push(() => stream.close());
      // Sending happens in the first instance only.
      const worker = appWorker(one);
      const runner = new BroadcastRunner({ prisma: one.db.prisma, sql: one.db.query, logger: one.logger, events: one.events, onMessagesMade: () => worker.nudge(), idleMs: 50 });
      worker.start();
      runner.start();
      try {
        expect((await stream.endsWithin(30_000)).completed).toBe(true);
      } finally {
        await runner.stop();
        await worker.stop();
      }
      const seen = views(stream.received);
      expect(seen.some((view) => view.counts.sent > 0 && view.counts.sent < 12)).toBe(true);
      expect(seen.at(-1)).toMatchObject({ id, status: 'finished', counts: { sent: 12, pending: 0 } });
    } finally {
      await two.close();
      await one.drop();
    }
  }, 60_000);
});
