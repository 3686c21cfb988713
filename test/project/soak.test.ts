import autocannon from 'autocannon';
import { describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/app.js';
import { loadChannel, migratedDatabase, phone, sleep } from '../helpers/load.js';
import { startReceiver } from '../helpers/receiver.js';
import { startServer } from '../helpers/server-process.js';

/** 60 s in the suite; `SOAK_SECONDS` shortens a local run. */
const SECONDS = Number(process.env.SOAK_SECONDS || 60);
/** Credentials (each its own workspace and channel), so no single budget is what is measured. */
const CREDENTIALS = 4;
const CONNECTIONS = 8;
/** Contacts each workspace has before the load: recipients of "existing contact" sends and PATCH targets. */
const KNOWN_CONTACTS = 5;
/** How long the delivery worker may take to drain the outbox once the load stops. */
const DRAIN_MS = 90_000;

type Credential = { host: string; apiKey: string; channelId: string; phones: string[]; contactIds: string[] };
type Context = { credential?: Credential; key?: string; body?: string };

const SEND_MESSAGE = `mutation Send($input: SendMessageInput!) {
  sendMessage(input: $input) { message { id } userErrors { field message code } }
}`;
const CONTACTS = '{ contacts(first: 10) { edges { node { id name } } pageInfo { hasNextPage endCursor } } }';

// A database of its own: the server process runs a delivery worker, which claims every due delivery.
describe.skipIf(!onPostgres)('soak: mixed REST and GraphQL load', () => {
  it(`serves ${SECONDS} s of load without an error, storing each accepted message once and delivering all`, async () => {
    const database = await migratedDatabase('connect_soak');
    const receiver = await startReceiver();
    const credentials: Credential[] = [];
    for (let w = 0; w < CREDENTIALS; w++) {
      const ws = await loadChannel(database.db, receiver.url);
      const phones = Array.from({ length: KNOWN_CONTACTS }, (_, j) => phone(9_000_000 + w * 100 + j));
      const contacts = await Promise.all(
        phones.map((p, j) => database.db.prisma.contact.create({ data: { workspaceId: ws.workspace.id, name: `Known ${j}`, phone: p }, select: { id: true } })),
      );
      credentials.push({ host: ws.host, apiKey: ws.apiKey, channelId: ws.channel.id, phones, contactIds: contacts.map((c) => c.id) });
    }
    const server = startServer({
      DATABASE_URL: database.url,
      DELIVERY_WORKER: '1',
      DELIVERY_POLL_MS: '100',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    try {
      const base = await server.listening;

      let sequence = 0;
      let cycles = 0;
      const accepted = new Map<string, string>(); // message id → body text
      const problems: string[] = [];
      const byRoute = new Map<string, Map<number, number>>();
      const count = (route: string, status: number) => {
        const statuses = byRoute.get(route) ?? new Map<number, number>();
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        byRoute.set(route, statuses);
        if (status < 200 || status >= 300) problems.push(`${route}: HTTP ${status}`);
      };
      const accept = (route: string, id: unknown, text: string) => {
        if (typeof id !== 'string') return void problems.push(`${route}: no message id`);
        if (accepted.has(id)) return void problems.push(`${route}: id ${id} returned for two sends`);
        accepted.set(id, text);
      };
      const parse = (route: string, body: string) => {
        try {
          return JSON.parse(body);
        } catch {
          problems.push(`${route}: unparseable body ${body.slice(0, 200)}`);
          return {};
        }
      };
      const headersOf = (context: Context, json = true) => ({
        host: context.credential!.host,
        authorization: `Bearer ${context.credential!.apiKey}`,
        accept: 'application/json',
        ...(json ? { 'content-type': 'application/json' } : {}),
      });
      const pick = <T>(list: T[]) => list[sequence % list.length]!;

      // Each connection runs this cycle again and again, each cycle as the next credential.
      const requests: autocannon.Request[] = [
        {
          // A text to a new contact, under an Idempotency-Key.
          method: 'POST',
          path: '/api/connect/messages',
          setupRequest: (request, context: Context) => {
            context.credential = credentials[cycles++ % credentials.length];
            const n = ++sequence;
            context.key = `soak-${n}`;
            context.body = JSON.stringify({ to: { phone: phone(n) }, message: `soak new ${n}` });
            return { ...request, headers: { ...headersOf(context), 'idempotency-key': context.key }, body: context.body };
          },
          onResponse: (status, body, context: Context) => {
            count('POST /messages (new contact, keyed)', status);
            if (status !== 202) return;
            const id = parse('POST /messages', body).data?.message?.id;
            accept('POST /messages', id, JSON.parse(context.body!).message);
            (context as Context & { id?: string }).id = id;
          },
        },
        {
          // A text to a contact that exists.
          method: 'POST',
          path: '/api/connect/messages',
          setupRequest: (request, context: Context) => {
            const n = ++sequence;
            const text = `soak known ${n}`;
            (context as Context & { text?: string }).text = text;
            return { ...request, headers: headersOf(context), body: JSON.stringify({ to: { phone: pick(context.credential!.phones) }, message: text }) };
          },
          onResponse: (status, body, context: Context & { text?: string }) => {
            count('POST /messages (known contact)', status);
            if (status === 202) accept('POST /messages', parse('POST /messages', body).data?.message?.id, context.text!);
          },
        },
        {
          method: 'GET',
          path: '/api/connect/contacts?limit=25',
          setupRequest: (request, context: Context) => ({ ...request, headers: headersOf(context, false) }),
          onResponse: (status) => count('GET /contacts', status),
        },
        {
          // The first send of this cycle again, same key and body: the same message, not a new one.
          method: 'POST',
          path: '/api/connect/messages',
          setupRequest: (request, context: Context) => ({ ...request, headers: { ...headersOf(context), 'idempotency-key': context.key! }, body: context.body! }),
          onResponse: (status, body, context: Context & { id?: string }, headers) => {
            count('POST /messages (replay)', status);
            if (status !== 202) return;
            const id = parse('POST /messages (replay)', body).data?.message?.id;
            if (id !== context.id) problems.push(`replay of ${context.key} answered ${id}, first answer was ${context.id}`);
            if (headers?.['idempotent-replayed'] !== 'true') problems.push(`replay of ${context.key} lacks Idempotent-Replayed`);
          },
        },
        {
          method: 'GET',
          path: '/api/connect/messages?limit=25',
          setupRequest: (request, context: Context) => ({ ...request, headers: headersOf(context, false) }),
          onResponse: (status) => count('GET /messages', status),
        },
        {
          method: 'PATCH',
          setupRequest: (request, context: Context) => ({
            ...request,
            path: `/api/connect/contacts/${pick(context.credential!.contactIds)}`,
            headers: headersOf(context),
            body: JSON.stringify({ name: `Renamed ${++sequence}` }),
          }),
          onResponse: (status) => count('PATCH /contacts/{id}', status),
        },
        {
          method: 'POST',
          path: '/graphql',
          setupRequest: (request, context: Context & { text?: string }) => {
            const n = ++sequence;
            context.text = `soak graphql ${n}`;
            const input = { to: { phone: phone(n) }, message: context.text, ...(n % 2 ? { idempotencyKey: `soak-gql-${n}` } : {}) };
            return { ...request, headers: headersOf(context), body: JSON.stringify({ query: SEND_MESSAGE, variables: { input } }) };
          },
          onResponse: (status, body, context: Context & { text?: string }) => {
            count('GraphQL sendMessage', status);
            if (status !== 200) return;
            const result = parse('GraphQL sendMessage', body);
            if (result.errors || result.data?.sendMessage?.userErrors?.length) return void problems.push(`sendMessage: ${body.slice(0, 300)}`);
            accept('GraphQL sendMessage', result.data?.sendMessage?.message?.id, context.text!);
          },
        },
        {
          method: 'POST',
          path: '/graphql',
          setupRequest: (request, context: Context) => ({ ...request, headers: headersOf(context), body: JSON.stringify({ query: CONTACTS }) }),
          onResponse: (status, body) => {
            count('GraphQL contacts', status);
            if (status === 200 && parse('GraphQL contacts', body).errors) problems.push(`contacts: ${body.slice(0, 300)}`);
          },
        },
      ];

      const started = Date.now();
      const result = await autocannon({ url: base, connections: CONNECTIONS, duration: SECONDS, timeout: 10, requests });
      const elapsedS = (Date.now() - started) / 1000;
      // Sends still on the wire when the run ended finish on the server without anyone reading the answer.
      await sleep(1000);

      // No error of any kind: every answer a 2xx, no socket error, no timeout.
      expect(problems.slice(0, 20)).toEqual([]);
      expect({ errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx, resets: result.resets }).toEqual({ errors: 0, timeouts: 0, non2xx: 0, resets: 0 });
      const answered = [...byRoute.values()].flatMap((m) => [...m.values()]).reduce((a, b) => a + b, 0);
      expect(answered).toBeGreaterThan(SECONDS * 10);
      for (const route of byRoute.keys()) expect(byRoute.get(route)!.size, route).toBe(1);
      expect(byRoute.size).toBe(requests.length);

      // Every accepted message is stored, once: one row per send text, under the id the answer gave.
      const channelIds = credentials.map((c) => c.channelId);
      const stored = await database.db.prisma.message.findMany({ where: { channelId: { in: channelIds } }, select: { id: true, body: true } });
      const storedById = new Map(stored.map((m) => [m.id, m.body]));
      const missing = [...accepted].filter(([id, text]) => storedById.get(id) !== text);
      expect(missing.slice(0, 10)).toEqual([]);
      const perText = new Map<string, number>();
      for (const m of stored) perText.set(m.body!, (perText.get(m.body!) ?? 0) + 1);
      expect([...perText].filter(([, n]) => n > 1).slice(0, 10)).toEqual([]);
      // Sends still on the wire when the run ended may be stored without an answer: at most one per connection.
      const unanswered = stored.length - accepted.size;
      expect(unanswered).toBeGreaterThanOrEqual(0);
      expect(unanswered).toBeLessThanOrEqual(CONNECTIONS);

      // The delivery worker drains the outbox: nothing left queued, each message delivered.
      const drainStarted = Date.now();
      const queued = () => database.db.prisma.message.count({ where: { channelId: { in: channelIds }, status: 'queued' } });
      let left = await queued();
      while (left > 0 && Date.now() - drainStarted < DRAIN_MS) {
        await sleep(250);
        left = await queued();
      }
      const drainS = (Date.now() - drainStarted) / 1000;
      expect(left).toBe(0);
      expect(await database.db.prisma.message.count({ where: { channelId: { in: channelIds }, status: { not: 'sent' } } })).toBe(0);
      const deliveredIds = new Set(receiver.received.map((r) => JSON.parse(r.body).message.id as string));
      expect(deliveredIds.size).toBe(stored.length);

      const sends = [...byRoute].filter(([route]) => route.startsWith('POST /messages (') || route === 'GraphQL sendMessage');
      console.log(
        `soak: ${answered} requests in ${elapsedS.toFixed(1)} s over ${CONNECTIONS} connections and ${CREDENTIALS} credentials = ` +
          `${(answered / elapsedS).toFixed(0)} req/s (latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms); ` +
          `${sends.reduce((a, [, m]) => a + [...m.values()].reduce((x, y) => x + y, 0), 0)} sends (${[...(byRoute.get('POST /messages (replay)')?.values() ?? [])][0] ?? 0} idempotent replays), ${accepted.size} messages accepted, ` +
          `${stored.length} stored, all delivered ${drainS.toFixed(1)} s after the load (${receiver.received.length} webhook calls); 0 non-2xx`,
      );
    } finally {
      server.child.kill('SIGTERM');
      await Promise.race([server.exited, sleep(20_000)]);
      server.child.kill('SIGKILL');
      await receiver.close();
      await database.drop();
    }
  }, SECONDS * 1000 + 180_000);
});
