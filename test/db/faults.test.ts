import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
import { phone, sleep } from '../helpers/load.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';
import { appThroughProxy } from '../helpers/proxied-app.js';

/** Concurrent send loops. */
const SENDERS = 4;
/** How long each fault lasts. */
const CUT_MS = 3000;
/** docs/conventions.md: 503 within 2 s; the margin covers a loaded test machine. */
const LONGEST_ANSWER_MS = 2500;
/** How soon sends must succeed again once the database is back. */
const RECOVERY_MS = 5000;

interface Send {
  key: string;
  text: string;
  phone: string;
  started: number;
  ms: number;
  status?: number;
  body?: any;
  error?: string;
}

// The embedded database lives in the process and cannot become unreachable.
describe.skipIf(!onPostgres)('PostgreSQL cut mid-load', () => {
  let setup: Awaited<ReturnType<typeof appThroughProxy>>;
  let proxy: TcpProxy;
  let app: TestApp;
  let ws: Awaited<ReturnType<typeof workspaceWithChannel>>;

  beforeAll(async () => {
    setup = await appThroughProxy();
    ({ proxy, app, ws } = setup);
  });
  afterAll(() => setup.close());

  async function send(key: string, text: string, to: string): Promise<Omit<Send, 'key' | 'text' | 'phone'>> {
    const started = Date.now();
    try {
      const response = await app.fetch(ws.host, '/api/connect/messages', {
        method: 'POST',
        headers: { ...bearer(ws.apiKey), 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ to: { phone: to }, message: text }),
      });
      const body = await response.json();
      return { started, ms: Date.now() - started, status: response.status, body, ...(response.headers.get('idempotent-replayed') ? { replayed: true } : {}) };
    } catch (error) {
      return { started, ms: Date.now() - started, error: (error as Error).message };
    }
  }

  it('answers 503 fast while cut, recovers by itself, and loses or duplicates no message', async () => {
    const sends: Send[] = [];
    let n = 0;
    let running = true;
    const loop = async () => {
      const deadline = Date.now() + 60_000;
      while (running && Date.now() < deadline) {
        const i = ++n;
        const entry = { key: `fault-${i}`, text: `fault load ${i}`, phone: phone(i) };
        sends.push({ ...entry, ...(await send(entry.key, entry.text, entry.phone)) });
        // A refused send comes back at once during an outage; pace the loop so it does not spin.
        if (sends.at(-1)!.status !== 202) await sleep(100);
      }
    };
    const loops = Array.from({ length: SENDERS }, loop);

    /** Waits until a send started at or after `since` succeeds; returns how long that took. */
    const recovered = async (since: number) => {
      const deadline = since + 15_000;
      while (Date.now() < deadline) {
        const ok = sends.find((s) => s.started >= since && s.status === 202);
        if (ok) return ok.started + ok.ms - since;
        await sleep(20);
      }
      return Infinity;
    };

    const faults: { kind: string; from: number; to: number; recoveryMs: number }[] = [];
    const stage = async (kind: 'refuse' | 'silence') => {
      await sleep(1500);
      const from = Date.now();
      if (kind === 'refuse') await proxy.refuse();
      else proxy.silence();
      await sleep(CUT_MS);
      await proxy.restore();
      const to = Date.now();
      faults.push({ kind, from, to, recoveryMs: await recovered(to) });
    };
    try {
      // Connections refused (PostgreSQL down), then a silent network (a partition).
      await stage('refuse');
      await stage('silence');
      await sleep(1000);
    } finally {
      running = false;
      await Promise.all(loops);
      await proxy.restore();
    }

    // No request hangs, none fails with a 500: each is 202 or the outage's 503.
    const slowest = Math.max(...sends.map((s) => s.ms));
    expect(sends.filter((s) => s.ms > LONGEST_ANSWER_MS).map((s) => [s.key, s.ms, s.status])).toEqual([]);
    expect(sends.filter((s) => s.error !== undefined || (s.status !== 202 && s.status !== 503)).map((s) => [s.key, s.status, s.error, s.body])).toEqual([]);
    for (const s of sends.filter((s) => s.status === 503)) expect(s.body).toEqual({ status: 'error', message: 'Service unavailable' });
    // Each fault was felt (answered 503), and service resumed on its own within the bound.
    for (const fault of faults) {
      const during = sends.filter((s) => s.started >= fault.from && s.started < fault.to);
      expect(during.filter((s) => s.status === 503).length, fault.kind).toBeGreaterThan(0);
      expect(fault.recoveryMs, fault.kind).toBeLessThan(RECOVERY_MS);
    }

    // Every refused send is retried with its key until it is accepted, as a careful client would.
    const accepted = new Map<string, string>(sends.filter((s) => s.status === 202).map((s) => [s.key, s.body.data.message.id]));
    const retried = sends.filter((s) => s.status !== 202);
    let replays = 0;
    const queue = [...retried];
    const retrier = async () => {
      for (let s = queue.shift(); s; s = queue.shift()) {
        const deadline = Date.now() + 10_000;
        let last: Awaited<ReturnType<typeof send>> & { replayed?: boolean };
        do last = await send(s.key, s.text, s.phone);
        while (last.status !== 202 && Date.now() < deadline && (await sleep(100), true));
        expect(last.status, `${s.key}: ${JSON.stringify(last.body)}`).toBe(202);
        if (last.replayed) replays++;
        accepted.set(s.key, last.body.data.message.id);
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, retrier));
    // A retry of an accepted send replays it rather than storing it again.
    const sample = sends.find((s) => s.status === 202)!;
    const replay = await send(sample.key, sample.text, sample.phone);
    expect(replay).toMatchObject({ status: 202, replayed: true, body: { data: { message: { id: accepted.get(sample.key) } } } });

    // Exactly one stored message per send, the one its answer named.
    const stored = await app.db.prisma.message.findMany({ where: { channelId: ws.channel.id }, select: { id: true, body: true } });
    const byText = new Map<string, string[]>();
    for (const m of stored) byText.set(m.body!, [...(byText.get(m.body!) ?? []), m.id]);
    expect(stored).toHaveLength(sends.length);
    for (const s of sends) expect(byText.get(s.text), s.key).toEqual([accepted.get(s.key)]);

    const unavailable = sends.filter((s) => s.status === 503);
    const worst503 = Math.max(...unavailable.map((s) => s.ms));
    console.log(
      `db faults: ${sends.length} sends, ${sends.length - retried.length} accepted at once, ${unavailable.length} answered 503 ` +
        `(slowest 503 ${worst503} ms, slowest answer ${slowest} ms); ` +
        faults.map((f) => `${f.kind} ${f.to - f.from} ms, recovered ${f.recoveryMs} ms after restore`).join('; ') +
        `; ${retried.length} retried with their key (${replays} replayed a send that had committed), ${stored.length} messages stored, one per send`,
    );
  }, 60_000);
});
