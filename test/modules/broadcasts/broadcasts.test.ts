import { describe, expect, it } from 'vitest';
import { createChannel } from '../../../src/modules/channels/channels.service.js';
import { createWorkspace } from '../../../src/modules/workspaces/workspaces.service.js';
import { BroadcastRunner } from '../../../src/modules/broadcasts/broadcasts.runner.js';
import { uuid7 } from '../../../src/lib/uuid.js';
import { Prisma } from '../../../src/generated/prisma/client.js';
import { appOnOwnDatabase, appPerFile } from '../../helpers/fresh-database.js';
import { onPostgres } from '../../helpers/app.js';
import { bearer, uniqueHost } from '../../helpers/factories.js';
import { postOperation } from '../../helpers/graphql.js';
import { restClient } from '../../helpers/rest.js';
import { startReceiver } from '../../helpers/receiver.js';
import { appWorker } from '../../helpers/worker.js';
import { testSealer } from '../../helpers/secrets.js';
import { recordingTerminal, runAdminOn } from '../../helpers/admin.js';
import { busiestSecond } from '../../helpers/until.js';

// A database of its own: the runner and the worker take every due broadcast and delivery.
const perFile = appPerFile();
const { cleanups } = perFile;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      const debug = await perFile.app.db.query(Prisma.sql`SELECT r.state, m.status, d.status AS d_status, d.run_at, d.attempts, d.locked_by, d.last_error, now() FROM broadcast_recipients r LEFT JOIN messages m ON m.id = r.message_id LEFT JOIN deliveries d ON d.message_id = m.id WHERE m.status IS DISTINCT FROM 'sent'`);
      console.log(JSON.stringify(debug, null, 1));
      throw new Error(`condition not reached in time: ${JSON.stringify(value)}`);
    }
    await sleep(50);
  }
}

/** A workspace with a webhook channel posting to `url`, `n` contacts, and a client acting as the channel. */
async function setup(n: number, url?: string, maxRate?: number) {
  const workspace = await createWorkspace(perFile.app.db.prisma, { hostname: uniqueHost('bc'), name: 'Broadcasts' });
  const { channel, apiKey } = await createChannel(perFile.app.db.prisma, { workspaceId: workspace.id, name: 'Hooked', type: 'whatsapp', webhookUrl: url }, testSealer);
  if (maxRate) await perFile.app.db.prisma.channel.update({ where: { id: channel.id }, data: { maxRatePerSecond: maxRate } });
  const contacts = Array.from({ length: n }, (_, i) => ({ id: uuid7(), workspaceId: workspace.id, name: `Person ${i}`, email: `p${i}-${workspace.id}@example.com` }));
  await perFile.app.db.prisma.contact.createMany({ data: contacts });
  return { workspace, channel, apiKey, api: restClient(perFile.app, workspace.hostname, apiKey), contactIds: contacts.map((c) => c.id) };
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
  return { worker, runner };
}

describe('broadcasts over REST', () => {
  it('skips a contact who opted out of the channel: no message, counted skipped', async () => {
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const { api, contactIds, channel } = await setup(4, receiver.url);
    const [optedOut] = contactIds;
    await perFile.app.db.prisma.contactOptOut.create({ data: { contactId: optedOut!, channelId: channel.id, at: new Date(), source: 'keyword' } });
    startProcess();
    const created = await api.post('/broadcasts', { name: 'Opt-outs', audience: { contacts: contactIds }, message: { type: 'text', message: 'Hello' }, rate_per_second: 10 });
    expect(created.status).toBe(202);
    const id = created.body.data.broadcast.id;
    const done = await until(
      async () => (await api.get(`/broadcasts/${id}`)).body.data.broadcast,
      (view) => view.status === 'finished',
      30_000,
    );
    expect(done.counts).toEqual({ total: 4, pending: 0, sent: 3, delivered: 0, read: 0, failed: 0, skipped: 1 });
    const messages = await api.get('/messages?limit=100');
    expect(messages.body.data.map((m: { contactId: string }) => m.contactId).sort()).toEqual(contactIds.slice(1).sort());
    const skipped = await perFile.app.db.query<{ contact_id: string; message_id: string | null }>(
      Prisma.sql`SELECT contact_id, message_id FROM broadcast_recipients WHERE broadcast_id = ${id}::uuid AND state = 'skipped'`,
    );
    expect(skipped).toEqual([{ contact_id: optedOut, message_id: null }]);
  });

  it('sends one ordinary message per recipient at the rate asked, counts following the messages', async () => {
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const { api, contactIds, channel } = await setup(30, receiver.url);
    startProcess();
    const created = await api.post('/broadcasts', { name: 'Launch', audience: { contacts: contactIds }, message: { type: 'text', message: 'Hello all' }, rate_per_second: 10 });
    expect(created.status).toBe(202);
    const broadcast = created.body.data.broadcast;
    expect(broadcast).toMatchObject({ name: 'Launch', channelId: channel.id, ratePerSecond: 10, counts: { total: 30, pending: 30, sent: 0, skipped: 0 } });
    expect(['scheduled', 'running']).toContain(broadcast.status);

    const done = await until(
      async () => (await api.get(`/broadcasts/${broadcast.id}`)).body.data.broadcast,
      (view) => view.status === 'finished',
      30_000,
    );
    expect(done.counts).toEqual({ total: 30, pending: 0, sent: 30, delivered: 0, read: 0, failed: 0, skipped: 0 });
        expect(receiver.received.length).toBeGreaterThanOrEqual(30);
    // The turns the runner handed out (a delivery's first due time; a retry would move it): one every
    // 1/rate s, so that the broadcast takes total / rate and no second holds more than 1.1 × the rate.
    const turns = (await perFile.app.db.query<{ run_at: Date }>(Prisma.sql`
      SELECT d.run_at FROM deliveries d JOIN messages m ON m.id = d.message_id
       WHERE m.broadcast_id = ${broadcast.id}::uuid AND d.attempts = 1 ORDER BY d.run_at`)).map((row) => new Date(row.run_at).getTime());
    expect(busiestSecond(turns)).toBeLessThanOrEqual(11);
    if (turns.length === 30) {
      const planned = (turns[turns.length - 1]! - turns[0]!) / 1000;
      expect(planned).toBeGreaterThan(2.9 * 0.9);
      expect(planned).toBeLessThan(2.9 * 1.1);
    }
    const recipients = new Set(receiver.received.map((request) => JSON.parse(request.body).contact.id));
    expect(recipients.size).toBe(30);

    const messages = await api.get('/messages?limit=100');
    expect(messages.body.data).toHaveLength(30);
    for (const message of messages.body.data) expect(message).toMatchObject({ broadcastId: broadcast.id, status: 'sent', direction: 'outbound', body: 'Hello all' });

    const page = await api.get(`/broadcasts/${broadcast.id}/recipients?limit=15&status=sent`);
    expect(page.body.data).toHaveLength(15);
    expect(page.body.meta.has_more).toBe(true);
    const rest = await api.get(`/broadcasts/${broadcast.id}/recipients?limit=15&status=sent&cursor=${page.body.meta.next_cursor}`);
    expect(rest.body.data).toHaveLength(15);
    expect(new Set([...page.body.data, ...rest.body.data].map((r: { contactId: string }) => r.contactId))).toEqual(new Set(contactIds));
    expect(rest.body.data[0]).toMatchObject({ status: 'sent', failureReason: null, messageId: expect.any(String) });

    const list = await api.get('/broadcasts');
    expect(list.body.data.map((b: { id: string }) => b.id)).toEqual([broadcast.id]);
  });

  it('personalises template parameters and refuses unknown contacts, storing nothing', async () => {
    const { api, contactIds, channel, workspace } = await setup(3);
    await perFile.app.db.prisma.channelTemplate.create({
      data: { workspaceId: workspace.id, channelId: channel.id, name: 'greeting', language: 'en', category: 'marketing', status: 'approved', body: 'Hi {{1}}, mail {{2}}', parameterCount: 2 },
    });
    const unknown = uuid7();
    const refused = await api.post('/broadcasts', { name: 'Bad', audience: { contacts: [...contactIds, unknown] }, message: { type: 'text', message: 'x' } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors['audience.contacts'][0]).toContain(unknown);
    expect(await perFile.app.db.prisma.broadcast.count({ where: { workspaceId: workspace.id } })).toBe(0);

    const badRate = await api.post('/broadcasts', { name: 'Fast', audience: { contacts: contactIds }, message: { type: 'text', message: 'x' }, rate_per_second: 101 });
    expect(badRate.status).toBe(422);
    expect(Object.keys(badRate.body.errors)).toEqual(['rate_per_second']);
    const badPlaceholder = await api.post('/broadcasts', {
      name: 'T',
      audience: { contacts: contactIds },
      message: { type: 'template', template: { name: 'greeting', parameters: ['{{contact.secret}}', 'x'] } },
    });
    expect(badPlaceholder.status).toBe(422);
    expect(Object.keys(badPlaceholder.body.errors)).toEqual(['message.template.parameters.0']);

    startProcess();
    const created = await api.post('/broadcasts', {
      name: 'Templated',
      audience: { contacts: contactIds },
      message: { type: 'template', template: { name: 'greeting', language: 'en', parameters: ['{{contact.name}}', '{{ contact.email }}'] } },
    });
    expect(created.status).toBe(202);
    const id = created.body.data.broadcast.id;
    await until(async () => (await api.get(`/broadcasts/${id}`)).body.data.broadcast.status, (status) => status === 'finished');
    const messages = (await api.get('/messages')).body.data as { body: string; contactId: string; type: string }[];
    expect(messages).toHaveLength(3);
    const contacts = await perFile.app.db.prisma.contact.findMany({ where: { id: { in: contactIds } } });
    for (const message of messages) {
      const contact = contacts.find((c) => c.id === message.contactId)!;
      expect(message).toMatchObject({ type: 'template', body: `Hi ${contact.name}, mail ${contact.email}` });
    }
  });

  it('replays an idempotent create, and pause, resume and cancel steer it', async () => {
    const { api, apiKey, workspace, contactIds } = await setup(40, undefined, 5);
    const keyed = restClient(perFile.app, workspace.hostname, apiKey, { 'idempotency-key': 'bc-1' });
    const body = { name: 'Slow', audience: { contacts: contactIds }, message: { type: 'text', message: 'Tick' } };
    const first = await keyed.post('/broadcasts', body);
    const again = await keyed.post('/broadcasts', body);
    expect(first.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.broadcast.id).toBe(first.body.data.broadcast.id);
    expect(first.body.data.broadcast.ratePerSecond).toBe(5);
    const id = first.body.data.broadcast.id;
    startProcess();
    await until(async () => (await api.get(`/broadcasts/${id}`)).body.data.broadcast.counts.sent, (sent) => sent >= 3);
    const paused = await api.post(`/broadcasts/${id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.data.broadcast.status).toBe('paused');
    // Messages already made (up to a few seconds ahead of their turns) still leave; then none.
    await sleep(4000);
    const held = (await api.get(`/broadcasts/${id}`)).body.data.broadcast.counts;
    await sleep(700);
    expect((await api.get(`/broadcasts/${id}`)).body.data.broadcast.counts.sent).toBe(held.sent);
    expect((await api.post(`/broadcasts/${id}/resume`)).body.data.broadcast.status).toBe('running');
    await until(async () => (await api.get(`/broadcasts/${id}`)).body.data.broadcast.counts.sent, (sent) => sent > held.sent);
    const canceled = await api.post(`/broadcasts/${id}/cancel`);
    expect(canceled.body.data.broadcast.status).toBe('canceled');
    const counts = await until(
      async () => (await api.get(`/broadcasts/${id}`)).body.data.broadcast.counts,
      (c) => c.pending === 0,
    );
    expect(counts.sent + counts.skipped).toBe(40);
    expect(counts.skipped).toBeGreaterThan(0);
    const skipped = await api.get(`/broadcasts/${id}/recipients?status=skipped&limit=100`);
    expect(skipped.body.data).toHaveLength(counts.skipped);
    expect(skipped.body.data[0]).toMatchObject({ messageId: null, status: 'skipped' });
    expect((await api.post(`/broadcasts/${id}/resume`)).status).toBe(422);
  });
});

describe("a channel's max rate (channel:configure --max-rate)", () => {
  const admin = (...argv: string[]) => runAdminOn(perFile.app.db, argv);

  it("bounds the broadcasts' rates, lowers those not ended, and goes back to the provider's default", async () => {
    const { api, channel, contactIds } = await setup(3);
    const later = { audience: { contacts: contactIds }, message: { message: 'Hi' }, start_at: '2099-01-01T00:00:00Z' };
    const fast = await api.post('/broadcasts', { name: 'Fast', rate_per_second: 50, ...later });
    expect(fast.body.data.broadcast.ratePerSecond).toBe(50);

    const set = await admin('channel:configure', '--id', channel.id, '--max-rate', '5');
    expect(set.stderr).toBe('');
    expect(set.json).toEqual({ id: channel.id, provider: 'webhook', maxRatePerSecond: 5, maxRateIsDefault: false });
    expect((await perFile.app.db.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } })).maxRatePerSecond).toBe(5);
    // A broadcast not yet ended is lowered to its channel's rate; a new one is refused above it and takes it by default.
    expect((await api.get(`/broadcasts/${fast.body.data.broadcast.id}`)).body.data.broadcast.ratePerSecond).toBe(5);
    const over = await api.post('/broadcasts', { name: 'Over', rate_per_second: 6, ...later });
    expect(over.status).toBe(422);
    expect(over.body.errors.rate_per_second).toEqual(["The rate_per_second must not be greater than the channel's 5 messages a second."]);
    expect((await api.post('/broadcasts', { name: 'Default', ...later })).body.data.broadcast.ratePerSecond).toBe(5);

    const reset = await admin('channel:configure', '--channel', channel.id, '--max-rate', 'default');
    expect(reset.json).toEqual({ id: channel.id, provider: 'webhook', maxRatePerSecond: 100, maxRateIsDefault: true });
    expect((await perFile.app.db.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } })).maxRatePerSecond).toBeNull();
    expect((await api.post('/broadcasts', { name: 'Webhook pace', ...later })).body.data.broadcast.ratePerSecond).toBe(100);
    expect((await api.post('/broadcasts', { name: 'Too fast', rate_per_second: 101, ...later })).status).toBe(422);
    expect((await admin('channel:configure', '--id', channel.id, '--max-rate', 'null')).json.maxRateIsDefault).toBe(true);
  });

  it('refuses a rate that is not a whole number from 1 to 10000, and a channel named twice or not at all', async () => {
    const { channel } = await setup(1);
    for (const bad of ['0', '1.5', '2e3', 'fast', '10001']) {
      const refused = await admin('channel:configure', '--id', channel.id, '--max-rate', bad);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr).toBe('error: --max-rate must be a whole number of messages a second from 1 to 10000, or default');
    }
    expect((await admin('channel:configure', '--id', channel.id, '--channel', channel.id, '--max-rate', '3')).stderr).toBe('error: give the channel once: --channel or --id, not both');
    expect((await admin('channel:configure', '--max-rate', '3')).stderr).toBe('error: --channel is required');
    expect((await admin('channel:configure', '--id', channel.id)).stderr).toMatch(/^error: nothing to change: give --max-rate/);
    expect((await perFile.app.db.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } })).maxRatePerSecond).toBeNull();
  });
});

describe('broadcast:watch', () => {
  const LINE = /^\d{4}-\d\d-\d\dT[\d:.]+Z (scheduled|running|paused|finished|canceled) (\d+)\/(\d+) \(\d+%\) sent=(\d+) delivered=\d+ read=\d+ failed=\d+ skipped=\d+$/;

  it('prints one line a second until the broadcast finishes, then its view, exit 0', async () => {
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const { api, contactIds } = await setup(25, receiver.url);
    const id = (await api.post('/broadcasts', { name: 'Watched', audience: { contacts: contactIds }, message: { message: 'Hi' }, rate_per_second: 10 })).body.data.broadcast.id;
    startProcess();
    const began = Date.now();
    const watched = await runAdminOn(perFile.app.db, ['broadcast:watch', '--id', id]);
    const took = Date.now() - began;
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.json).toMatchObject({ id, name: 'Watched', status: 'finished', counts: { total: 25, pending: 0, sent: 25 } });
    const lines = watched.stderr.split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.length).toBeLessThanOrEqual(Math.ceil(took / 1000) + 1);
    for (const line of lines) expect(line).toMatch(LINE);
    const done = lines.map((line) => Number(LINE.exec(line)![2]));
    for (let i = 1; i < done.length; i++) expect(done[i]).toBeGreaterThanOrEqual(done[i - 1]!);
    expect(lines.at(-1)).toMatch(/ finished 25\/25 \(100%\) sent=25 /);
    // One a second.
    for (let i = 1; i < watched.stderrTimes.length; i++) expect(watched.stderrTimes[i]! - watched.stderrTimes[i - 1]!).toBeGreaterThanOrEqual(950);
  });

  it('draws a progress bar on a terminal, and refuses an unknown broadcast', async () => {
    const { api, contactIds } = await setup(6);
    const id = (await api.post('/broadcasts', { name: 'Barred', audience: { contacts: contactIds }, message: { message: 'Hi' }, rate_per_second: 5 })).body.data.broadcast.id;
    startProcess();
    const { terminal, drawn: drawnSoFar } = recordingTerminal();
    const watched = await runAdminOn(perFile.app.db, ['broadcast:watch', '--id', id], {}, { terminal });
    expect(watched.code, watched.stderr).toBe(0);
    // The bar is drawn on the terminal, no lines besides it.
    expect(watched.stderr).toBe('');
    expect(watched.json).toMatchObject({ id, status: 'finished', counts: { total: 6, sent: 6 } });
    const frames = drawnSoFar().split(/\r|\x1B\[\d*[GKJ]/).filter((frame) => frame.includes('Barred ['));
    expect(frames.length).toBeGreaterThanOrEqual(1);
    expect(frames.at(-1)).toMatch(/^Barred \[\u2588{40}\] 100% \| 6\/6 \| sent 6 delivered 0 read 0 failed 0 skipped 0 \| finished/);

    const unknown = uuid7();
    expect(await runAdminOn(perFile.app.db, ['broadcast:watch', '--id', unknown])).toMatchObject({ code: 1, stdout: '', stderr: `error: No broadcast has id ${unknown}.` });
    expect((await runAdminOn(perFile.app.db, ['broadcast:watch'])).stderr).toBe('error: --id is required');
  });
});

describe('broadcasts over GraphQL', () => {
  const CREATE = `mutation($input: CreateBroadcastInput!) {
    createBroadcast(input: $input) { broadcast { id name status ratePerSecond counts { total pending skipped } } userErrors { field message code } } }`;

  it('creates, reads and cancels a broadcast, refusals as userErrors on the input path', async () => {
    const { apiKey, workspace, contactIds } = await setup(4, undefined, 2);
    const headers = bearer(apiKey);
    const unknown = uuid7();
    const refused = await postOperation(perFile.app, workspace.hostname, headers, {
      query: CREATE,
      variables: { input: { name: 'Bad', audience: { contacts: [unknown] }, message: { message: 'Hi' } } },
    });
    expect(refused.data.createBroadcast.broadcast).toBeNull();
    expect(refused.data.createBroadcast.userErrors[0].field).toEqual(['input', 'audience', 'contacts']);
    expect(refused.data.createBroadcast.userErrors[0].message).toContain(unknown);
    const tooFast = await postOperation(perFile.app, workspace.hostname, headers, {
      query: CREATE,
      variables: { input: { name: 'Fast', audience: { contacts: contactIds }, message: { message: 'Hi' }, ratePerSecond: 3 } },
    });
    expect(tooFast.data.createBroadcast.userErrors[0].field).toEqual(['input', 'ratePerSecond']);

    const created = await postOperation(perFile.app, workspace.hostname, headers, {
      query: CREATE,
      variables: { input: { name: 'Later', audience: { contacts: contactIds }, message: { message: 'Hi' }, startAt: '2099-01-01T00:00:00Z' } },
    });
    const broadcast = created.data.createBroadcast.broadcast;
    expect(broadcast).toMatchObject({ name: 'Later', status: 'scheduled', ratePerSecond: 2, counts: { total: 4, pending: 4, skipped: 0 } });
    const read = await postOperation(perFile.app, workspace.hostname, headers, {
      query: `query($id: ID!) { broadcast(id: $id) { id status } broadcasts(first: 5) { edges { node { id } } } }`,
      variables: { id: broadcast.id },
    });
    expect(read.data.broadcast).toEqual({ id: broadcast.id, status: 'scheduled' });
    expect(read.data.broadcasts.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual([broadcast.id]);
    const canceled = await postOperation(perFile.app, workspace.hostname, headers, {
      query: `mutation($id: ID!) { cancelBroadcast(id: $id) { broadcast { status counts { pending skipped } } userErrors { field message } } }`,
      variables: { id: broadcast.id },
    });
    expect(canceled.data.cancelBroadcast).toEqual({ broadcast: { status: 'canceled', counts: { pending: 0, skipped: 4 } }, userErrors: [] });
  });
});

describe('broadcasts are seen by their channel only', () => {
  it("answers 404 for another workspace's or another channel's broadcast, changing nothing", async () => {
    const home = await setup(2);
    const other = await setup(1);
    const { apiKey: siblingKey } = await createChannel(perFile.app.db.prisma, { workspaceId: home.workspace.id, name: 'Sibling', type: 'whatsapp' }, testSealer);
    const sibling = restClient(perFile.app, home.workspace.hostname, siblingKey);
    const created = await home.api.post('/broadcasts', { name: 'Mine', audience: { contacts: home.contactIds }, message: { message: 'Hi' }, start_at: '2099-01-01T00:00:00Z' });
    const id = created.body.data.broadcast.id;
    for (const client of [other.api, sibling]) {
      for (const path of [`/broadcasts/${id}`, `/broadcasts/${id}/recipients`]) {
        expect(await client.get(path)).toMatchObject({ status: 404, body: { message: 'Broadcast not found.' } });
      }
      for (const action of ['pause', 'resume', 'cancel']) expect((await client.post(`/broadcasts/${id}/${action}`)).status).toBe(404);
      expect((await client.get('/broadcasts')).body.data).toEqual([]);
    }
    expect((await other.api.post('/broadcasts', { name: 'Theirs', audience: { contacts: home.contactIds }, message: { message: 'Hi' } })).status).toBe(422);
    expect((await home.api.get(`/broadcasts/${id}`)).body.data.broadcast.status).toBe('scheduled');
    expect((await home.api.get('/broadcasts/not-a-uuid')).status).toBe(404);
  });
});

describe('a slow round', () => {
  it("moves its turns on to just after it ends: none falls in the past, so none goes out in a burst on commit", async () => {
    // The first round's deliveries take 0.8 s to store (a process's first round, a busy database):
    // far longer than the lead a round's first turn is given.
    const slow = await appOnOwnDatabase({
      setupSql: `
        CREATE FUNCTION slow_first_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM deliveries) THEN PERFORM pg_sleep(0.8); END IF;
          RETURN NULL;
        END $$;
        CREATE TRIGGER slow_first_deliveries BEFORE INSERT ON deliveries FOR EACH STATEMENT EXECUTE FUNCTION slow_first_deliveries();`,
    });
    const receiver = await startReceiver();
    const worker = appWorker(slow);
    const runner = new BroadcastRunner({ prisma: slow.db.prisma, sql: slow.db.query, logger: slow.logger, events: slow.events, onMessagesMade: () => worker.nudge(), idleMs: 50 });
    try {
      const workspace = await createWorkspace(slow.db.prisma, { hostname: uniqueHost('bc'), name: 'Slow' });
      const { apiKey } = await createChannel(slow.db.prisma, { workspaceId: workspace.id, name: 'Hooked', type: 'whatsapp', webhookUrl: receiver.url }, testSealer);
      const contacts = Array.from({ length: 20 }, (_, i) => ({ id: uuid7(), workspaceId: workspace.id, name: `Person ${i}` }));
      await slow.db.prisma.contact.createMany({ data: contacts });
      const api = restClient(slow, workspace.hostname, apiKey);
      worker.start();
      runner.start();
      const created = await api.post('/broadcasts', { name: 'Slow start', audience: { contacts: contacts.map((c) => c.id) }, message: { type: 'text', message: 'Hi' }, rate_per_second: 10 });
      expect(created.status).toBe(202);
      const id = created.body.data.broadcast.id;
      const deadline = Date.now() + 30_000;
      while ((await api.get(`/broadcasts/${id}`)).body.data.broadcast.status !== 'finished') {
        if (Date.now() > deadline) throw new Error('the broadcast did not finish');
        await sleep(100);
      }
      // Each turn comes after the round that handed it out had stored its deliveries (0.8 s after the
      // messages were made), one every 1 / rate s.
      const rows = await slow.db.query<{ run_at: Date; created_at: Date }>(Prisma.sql`
        SELECT d.run_at, m.created_at FROM deliveries AS d JOIN messages AS m ON m.id = d.message_id WHERE m.broadcast_id = ${id}::uuid ORDER BY d.run_at`);
      expect(rows).toHaveLength(20);
      const made = Math.min(...rows.map((row) => new Date(row.created_at).getTime()));
      const turns = rows.map((row) => new Date(row.run_at).getTime());
      expect(turns[0]! - made).toBeGreaterThanOrEqual(800);
      expect(busiestSecond(turns)).toBeLessThanOrEqual(11);
      expect(receiver.received).toHaveLength(20);
    } finally {
      await runner.stop();
      await worker.stop();
      await receiver.close();
      await slow.drop();
    }
  }, 120_000);
});
