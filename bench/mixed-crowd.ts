import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type pg from 'pg';
import type { Arrival, CrowdArrivals, MixedChecks, MixedSubscriber, OpenMixed } from './crowd-client.js';
import { answer, closeClients, cpuOf, crowdTotals, fanOutOver, forkClient, idleMemory, metric, now, p99, sleep, sum } from './crowd.js';
import { adminCommand } from './seed.js';
import type { ServerProcess } from './servers.js';

/**
 * The mixed crowd row: an inbox team's subscribers rather than one backend's. `subscribers`
 * session-held subscriptions, ten sessions per workspace user, each user's sessions over a set of
 * two or three of `channels` channels (sets that differ from user to user), minted by one
 * connection token over all of them (POST /sessions). Half over WebSocket, half over SSE. Of each
 * user's ten: six `messageAdded` over all the session's channels, two narrowed to one of them
 * (`channelId`), two to one conversation (`conversationId`); every selection reaches
 * `conversation { assignedToMe }`, which depends on the user (docs/graphql.md, "What a field reads
 * of the caller"), after some conversations were assigned to some users. REST sends at `rate` a
 * second over all the channels for `seconds`; each subscriber is checked to receive exactly its
 * channels' (or conversation's) messages, each once, with its own user's `assignedToMe`.
 *
 * Beside them, one `conversationActivity` subscriber a user, viewing a conversation of its first
 * channel, and `typingRate` typing reports a second (POST /conversations/{id}/activity) by users
 * who can read those conversations and do not view them: each report's fan-out from its `204` to
 * the last viewer.
 *
 * The machinery is the crowd row's (bench/crowd.ts): gateway processes of the row's own, the
 * subscribers held by client processes (bench/crowd-client.ts), one clock shared by all processes,
 * memory per idle subscriber measured the same way.
 */
export interface MixedCrowdResult {
  subscribers: number;
  users: number;
  channels: number;
  /** The channel sets the users' sessions were minted over, and the cohorts the subscriptions make (document, variables, channels, user). */
  channelSets: number;
  processes: number;
  clients: number;
  sends: number;
  accepted: number;
  refused: Record<string, number>;
  /** Messages delivered against those expected (each accepted send to each subscriber following its channel or conversation). */
  delivered: number;
  expected: number;
  missing: number;
  /** Messages of a channel or conversation the subscriber does not follow, and messages received twice. */
  foreign: number;
  duplicates: number;
  /** Results with errors or without the field, and streams refused or ended. */
  errors: number;
  failed: number;
  /** Streams the gateway ended before the row was done (a credential check that failed ends them without an error). */
  ended: number;
  /** Messages whose `conversation.assignedToMe` was checked, and those not the receiving user's own value. */
  assignedToMeChecked: number;
  wrongAssignedToMe: number;
  /** Conversations assigned (to users of their channel) before the crowd opened. */
  assigned: number;
  fanOutP99Ms: number | null;
  fanOutP99ByTransportMs: { websocket: number | null; sse: number | null };
  fanOutBySecondMs: number[];
  sendP99Ms: number | null;
  kbPerSubscriber: number | null;
  rssMb: { tenth: (number | null)[]; all: (number | null)[] };
  /** The typing half: activity subscribers (viewers), the conversations they view, the reports and their answers. */
  viewers: number;
  viewed: number;
  typingReports: number;
  typingAccepted: number;
  typingRefused: Record<string, number>;
  typingDelivered: number;
  typingExpected: number;
  typingFanOutP99Ms: number | null;
  typingReportP99Ms: number | null;
  executions: number | null;
  results: number | null;
  gatewayCpuMs: number | null;
  clientCpuMs: number | null;
}

export interface MixedCrowdOptions {
  subscribers: number;
  /** Channels the users' sets are drawn from (default 20). */
  channels?: number;
  processes?: number;
  clients?: number;
  redisUrl: string;
  env?: Record<string, string>;
  rate?: number;
  typingRate?: number;
  seconds?: number;
  warmup?: number;
}

/** Sessions a user holds (tabs, devices), each its own subscriber. */
const SESSIONS_PER_USER = 10;
/** Conversations on each channel the sends go to, and of those, the first ones assigned. */
const CONVERSATIONS_PER_CHANNEL = 5;
const ASSIGNED_PER_CHANNEL = 3;

const SELECTION = '{ id channelId conversationId conversation { id assignedToMe } }';
const DOCUMENTS = {
  all: `subscription BenchMixedAll { messageAdded ${SELECTION} }`,
  channel: `subscription BenchMixedChannel($channelId: ID) { messageAdded(channelId: $channelId) ${SELECTION} }`,
  conversation: `subscription BenchMixedConversation($conversationId: ID) { messageAdded(conversationId: $conversationId) ${SELECTION} }`,
  activity:
    'subscription BenchMixedActivity($conversationId: ID!) ' +
    '{ conversationActivity(conversationId: $conversationId) { conversationId user { id } typing viewing at } }',
};

/** The channels (indexes) of user `u`'s sessions: its first, then one or two more, the sets differing from user to user. */
export function channelSet(u: number, channels: number): number[] {
  const set = new Set([u % channels]);
  const offset = 1 + Math.floor(u / channels);
  set.add((u + offset) % channels);
  if (u % 2 === 0) set.add((u + offset + 1) % channels);
  return [...set];
}

interface Answer {
  status: number;
  text: string;
  /** When the answer ended, on the shared clock. */
  at: number;
}

export async function mixedCrowdRound(
  startGateway: (index: number, env: Record<string, string>) => Promise<ServerProcess>,
  ctx: { host: string; sendContacts: string[]; workspaceId: string },
  tools: { db: pg.ClientBase; databaseUrl: string; dist: string; secretsKey?: string | undefined },
  options: MixedCrowdOptions,
): Promise<MixedCrowdResult> {
  const { subscribers } = options;
  const channelCount = options.channels ?? 20;
  const rate = options.rate ?? 50;
  const typingRate = options.typingRate ?? 200;
  const seconds = options.seconds ?? 10;
  const warmup = options.warmup ?? 0;
  const processes = options.processes ?? 1;
  const users = Math.ceil(subscribers / SESSIONS_PER_USER);
  const clientCount = Math.max(1, Math.min(options.clients ?? Math.ceil(subscribers / 500), subscribers));
  const tag = randomBytes(3).toString('hex');

  // The channels and the connection token over all of them, by the measured version's own admin commands.
  const admin = (args: string[]) => adminCommand(tools.databaseUrl, tools.dist, args, tools.secretsKey ? { SECRETS_KEY: tools.secretsKey } : {});
  const channelIds: string[] = [];
  for (let from = 0; from < channelCount; from += 4) {
    const made = await Promise.all(
      Array.from({ length: Math.min(4, channelCount - from) }, (_, k) =>
        admin(['channel:create', '--hostname', ctx.host, '--name', `Mixed ${tag} ${from + k + 1}`, '--type', 'whatsapp']),
      ),
    );
    channelIds.push(...made.map((channel) => channel.id!));
  }
  const connection = await admin(['connection:create', '--hostname', ctx.host, '--name', `Mixed crowd ${tag}`, '--channels', channelIds.join(',')]);
  const connectionToken = connection.token!;
  // The workspace's users, as `user:create` makes them.
  const { rows: userRows } = await tools.db.query<{ id: string }>(
    `INSERT INTO users (id, workspace_id, name, email, email_normalized)
     SELECT gen_random_uuid(), $1, 'Agent ' || u, 'mixed.' || $2 || '.' || u || '@example.com', 'mixed.' || $2 || '.' || u || '@example.com'
       FROM generate_series(1, $3::int) AS u ORDER BY u RETURNING id`,
    [ctx.workspaceId, tag, users],
  );
  const userIds = userRows.map((row) => row.id);
  const sets = userIds.map((_, u) => channelSet(u, channelCount));

  const env: Record<string, string> = { ...options.env };
  if (processes > 1) Object.assign(env, { REDIS_URL: options.redisUrl, REDIS_PREFIX: `bench-mixed-${tag}:` });
  const gateways: ServerProcess[] = [];
  const clients: ChildProcess[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  try {
    for (let index = 0; index < processes; index++) gateways.push(await startGateway(index, env));
    const ports = gateways.map((gateway) => Number(new URL(gateway.base).port));
    const request = (port: number, method: string, route: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
      new Promise<Answer>((resolve) => {
        const sent = http.request(
          {
            host: '127.0.0.1',
            port,
            path: `/api/connect${route}`,
            method,
            agent,
            headers: { host: ctx.host, authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
          },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text, at: now() }));
          },
        );
        sent.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, text: error.code ?? error.message, at: now() }));
        sent.end(JSON.stringify(body));
      });
    const must = async (what: string, pending: Promise<Answer>, status: number) => {
      const done = await pending;
      if (done.status !== status) throw new Error(`mixed crowd: ${what} answered ${done.status}: ${done.text.slice(0, 300)}`);
      return JSON.parse(done.text || 'null') as { data: Record<string, Record<string, unknown>> } | null;
    };
    /** At most `width` at a time, in order. */
    const inTurn = async <T>(count: number, width: number, each: (n: number) => Promise<T>) => {
      const out: T[] = [];
      for (let from = 0; from < count; from += width) {
        out.push(...(await Promise.all(Array.from({ length: Math.min(width, count - from) }, (_, k) => each(from + k)))));
      }
      return out;
    };

    // The conversations the sends go to: one send each makes them; then some assigned.
    const contactOf = (channel: number, k: number) => ctx.sendContacts[(channel * CONVERSATIONS_PER_CHANNEL + k) % ctx.sendContacts.length]!;
    const conversations: string[][] = [];
    for (let channel = 0; channel < channelCount; channel++) {
      conversations.push(
        await Promise.all(
          Array.from({ length: CONVERSATIONS_PER_CHANNEL }, async (_, k) => {
            const body = { to: contactOf(channel, k), message: 'mixed crowd' };
            const sent = await must('a send', request(ports[0]!, 'POST', '/messages', connectionToken, body, { 'x-channel-uuid': channelIds[channel]! }), 202);
            return String(sent!.data.message!.conversationId);
          }),
        ),
      );
    }
    const usersOf = (channel: number) => userIds.filter((_, u) => sets[u]!.includes(channel));
    const assignees: Record<string, string> = {};
    for (let channel = 0; channel < channelCount; channel++) {
      const team = usersOf(channel);
      for (let k = 0; k < Math.min(ASSIGNED_PER_CHANNEL, team.length); k++) {
        const id = conversations[channel]![k]!;
        await must('an assignment', request(ports[0]!, 'POST', `/conversations/${id}/assign`, connectionToken, { user: team[k] }), 200);
        assignees[id] = team[k]!;
      }
    }

    // Each user's sessions over its channels, minted by the connection token.
    const tokens = await inTurn(users * SESSIONS_PER_USER, 16, async (n) => {
      const u = Math.floor(n / SESSIONS_PER_USER);
      const body = { user: userIds[u], channels: sets[u]!.map((channel) => channelIds[channel]), scopes: ['read', 'send'], ttl_seconds: 3600 };
      const minted = await must('minting a session', request(ports[n % processes]!, 'POST', '/sessions', connectionToken, body), 201);
      return String(minted!.data.session!.token);
    });

    const specs: MixedSubscriber[] = [];
    for (let index = 0; index < subscribers; index++) {
      const u = Math.floor(index / SESSIONS_PER_USER);
      const s = index % SESSIONS_PER_USER;
      const set = sets[u]!;
      const base = { index, port: ports[index % processes]!, token: tokens[index]!, websocket: index % 2 === 0, kind: 'messages' as const, user: userIds[u]! };
      if (s < 6) specs.push({ ...base, query: DOCUMENTS.all, variables: {}, channels: set.map((channel) => channelIds[channel]!) });
      else if (s < 8) {
        const channel = set[s % set.length]!;
        specs.push({ ...base, query: DOCUMENTS.channel, variables: { channelId: channelIds[channel]! }, channels: [channelIds[channel]!] });
      } else {
        const channel = set[s % set.length]!;
        const conversation = conversations[channel]![u % CONVERSATIONS_PER_CHANNEL]!;
        specs.push({ ...base, query: DOCUMENTS.conversation, variables: { conversationId: conversation }, channels: [channelIds[channel]!], conversation });
      }
    }
    // Each user views a conversation of its first channel, on its first session.
    const viewedOf = (u: number) => conversations[sets[u]![0]!]![0]!;
    const viewers: MixedSubscriber[] = (typingRate ? userIds : []).map((user, u) => ({
      index: subscribers + u,
      port: ports[u % processes]!,
      token: tokens[u * SESSIONS_PER_USER]!,
      websocket: u % 2 === 0,
      kind: 'activity',
      user,
      query: DOCUMENTS.activity,
      variables: { conversationId: viewedOf(u) },
      channels: [],
    }));
    const viewersOf = new Map<string, number[]>();
    for (const viewer of viewers) viewersOf.set(viewer.variables.conversationId!, [...(viewersOf.get(viewer.variables.conversationId!) ?? []), viewer.index]);
    // Who reports typing where: a user on a viewed conversation of a channel it has but does not view.
    const reporters: { user: string; token: string; conversation: string }[] = [];
    userIds.forEach((user, u) =>
      sets[u]!.slice(1).forEach((channel) => {
        const conversation = conversations[channel]![0]!;
        if (viewersOf.has(conversation)) reporters.push({ user, token: tokens[u * SESSIONS_PER_USER + 1] ?? tokens[u * SESSIONS_PER_USER]!, conversation });
      }),
    );

    const perClient = Math.ceil(subscribers / clientCount);
    const shares: { child: ChildProcess; specs: MixedSubscriber[] }[] = [];
    for (let index = 0; index < clientCount; index++) {
      const share = specs.slice(index * perClient, (index + 1) * perClient);
      if (!share.length) break;
      const child = forkClient();
      clients.push(child);
      shares.push({ child, specs: share });
    }
    const openEach = (pick: (share: MixedSubscriber[], index: number) => MixedSubscriber[]) =>
      Promise.all(
        shares.map(({ child, specs: share }, index) => {
          const open: OpenMixed = { type: 'open-mixed', host: ctx.host, subscribers: pick(share, index), assignees };
          const done = answer(child, 'opened');
          child.send(open);
          return done;
        }),
      );
    // A tenth first, as in the crowd row: memory per idle subscriber is what the rest adds.
    await openEach((share) => share.slice(0, Math.floor(share.length * 0.1)));
    const warm = shares.reduce((total, { specs: share }) => total + Math.floor(share.length * 0.1), 0);
    await sleep(2000);
    const before = await idleMemory(gateways);
    await openEach((share) => share.slice(Math.floor(share.length * 0.1)));
    await sleep(2000);
    const after = await idleMemory(gateways);
    await openEach((_, index) => viewers.filter((_, u) => u % shares.length === index));
    await sleep(1000);

    /** Each send's channel and conversation (warm-up ones too), and when an accepted one's 202 arrived. */
    const sentTo = new Map<string, { channel: number; conversation: string }>();
    const accepted = new Map<string, number>();
    const sendTimes: number[] = [];
    const refused: Record<string, number> = {};
    let sends = 0;
    const send = async (n: number, counted: boolean) => {
      const channel = n % channelCount;
      const k = Math.floor(n / channelCount) % CONVERSATIONS_PER_CHANNEL;
      const started = performance.now();
      const body = { to: contactOf(channel, k), message: `mixed ${n}` };
      const done = await request(ports[n % processes]!, 'POST', '/messages', connectionToken, body, { 'x-channel-uuid': channelIds[channel]! });
      if (done.status !== 202) {
        if (counted) refused[String(done.status || done.text)] = (refused[String(done.status || done.text)] ?? 0) + 1;
        return;
      }
      const message = (JSON.parse(done.text) as { data: { message: { id: string; conversationId: string } } }).data.message;
      sentTo.set(message.id, { channel, conversation: message.conversationId });
      if (!counted) return;
      sendTimes.push(performance.now() - started);
      accepted.set(message.id, done.at);
    };
    /** Each pair's measured reports in the order made: when each was answered 204 (0: not). */
    const reports = new Map<string, number[]>();
    const reportTimes: number[] = [];
    const typingRefused: Record<string, number> = {};
    let typingReports = 0;
    const report = async (n: number, counted: boolean) => {
      const reporter = reporters[n % reporters.length]!;
      const key = `${reporter.conversation} ${reporter.user}`;
      let slot = -1;
      if (counted) {
        typingReports++;
        const list = reports.get(key) ?? [];
        reports.set(key, list);
        slot = list.push(0) - 1;
      }
      const started = performance.now();
      const done = await request(ports[n % processes]!, 'POST', `/conversations/${reporter.conversation}/activity`, reporter.token, { typing: true });
      if (!counted) return;
      if (done.status === 204) {
        reports.get(key)![slot] = done.at;
        reportTimes.push(performance.now() - started);
      } else typingRefused[String(done.status || done.text)] = (typingRefused[String(done.status || done.text)] ?? 0) + 1;
    };
    /** `perSecond` calls of `each` a second for `duration` seconds, numbered from `first`. */
    const paced = async (perSecond: number, duration: number, first: number, each: (n: number) => Promise<void>) => {
      const inFlight: Promise<void>[] = [];
      const start = performance.now();
      for (let n = 0; n < perSecond * duration; n++) {
        const wait = start + (n * 1000) / perSecond - performance.now();
        if (wait > 0) await sleep(wait);
        inFlight.push(each(first + n));
      }
      await Promise.all(inFlight);
    };
    const load = (duration: number, counted: boolean, first: number) =>
      Promise.all([
        paced(rate, duration, first * rate, (n) => {
          if (counted) sends++;
          return send(n, counted);
        }),
        reporters.length ? paced(typingRate, duration, first * typingRate, (n) => report(n, counted)) : Promise.resolve(),
      ]);
    if (warmup > 0) {
      await load(warmup, false, 0);
      await sleep(3000);
    }
    // What activity subscribers heard so far (the warm-up's reports) is forgotten.
    await Promise.all(
      clients.map((child) => {
        const marked = answer(child, 'marked');
        child.send({ type: 'mark' });
        return marked;
      }),
    );
    const cpuBefore = [cpuOf(gateways), cpuOf(clients)];
    await load(seconds, true, warmup);

    // What each message is expected to reach: the subscribers following its channel or its conversation.
    const expectedOf = (id: string) => {
      const to = sentTo.get(id)!;
      const channel = channelIds[to.channel]!;
      const follows = (spec: MixedSubscriber) => spec.channels.includes(channel) && (!spec.conversation || spec.conversation === to.conversation);
      return specs.reduce((count, spec) => count + (follows(spec) ? 1 : 0), 0);
    };
    const expectedById = new Map([...accepted.keys()].map((id) => [id, expectedOf(id)]));
    const expected = [...expectedById.values()].reduce((total, n) => total + n, 0);
    const typingExpected = [...reports].reduce((total, [key, list]) => total + list.filter(Boolean).length * viewersOf.get(key.split(' ')[0]!)!.length, 0);

    const arrivals = new Map<string, Arrival>();
    type Checks = Omit<MixedChecks, 'typing'> & { failed: number; ended: number };
    let checks: Checks = { foreign: 0, duplicates: 0, errors: 0, assignedToMe: 0, wrongAssignedToMe: 0, failed: 0, ended: 0 };
    const typing = new Map<number, Record<string, number[]>>();
    const gather = async () => {
      arrivals.clear();
      typing.clear();
      checks = { foreign: 0, duplicates: 0, errors: 0, assignedToMe: 0, wrongAssignedToMe: 0, failed: 0, ended: 0 };
      const answers = await Promise.all(
        clients.map((child) => {
          const reported = answer<CrowdArrivals>(child, 'report');
          child.send({ type: 'report' });
          return reported;
        }),
      );
      for (const { arrivals: heard, failed, ended, mixed } of answers) {
        for (const [id, [count, webSocket, sse]] of Object.entries(heard)) {
          const entry = arrivals.get(id);
          if (entry) {
            entry[0] += count;
            entry[1] = Math.max(entry[1], webSocket);
            entry[2] = Math.max(entry[2], sse);
          } else arrivals.set(id, [count, webSocket, sse]);
        }
        checks.failed += failed;
        checks.ended += ended;
        for (const name of ['foreign', 'duplicates', 'errors', 'assignedToMe', 'wrongAssignedToMe'] as const) checks[name] += mixed[name];
        for (const [index, pairs] of Object.entries(mixed.typing)) typing.set(Number(index), pairs);
      }
    };
    const delivered = () => [...expectedById].reduce((total, [id, n]) => total + Math.min(n, arrivals.get(id)?.[0] ?? 0), 0);
    /** Each viewer's k-th `typing: true` of a pair answers that pair's k-th report. */
    const typingArrivals = () => {
      let count = 0;
      const last: number[] = [];
      for (const [key, list] of reports) {
        const lastOf = list.map(() => 0);
        for (const viewer of viewersOf.get(key.split(' ')[0]!)!) {
          const heard = typing.get(viewer)?.[key] ?? [];
          const answered = list.filter(Boolean);
          for (let k = 0; k < Math.min(heard.length, answered.length); k++) {
            count++;
            lastOf[k] = Math.max(lastOf[k]!, heard[k]!);
          }
        }
        list.filter(Boolean).forEach((at, k) => {
          if (lastOf[k]) last.push(lastOf[k]! - at);
        });
      }
      return { count, fanOut: last };
    };
    const deadline = performance.now() + 30_000;
    await gather();
    while ((delivered() < expected || typingArrivals().count < typingExpected) && performance.now() < deadline) {
      await sleep(500);
      await gather();
    }
    const fanOut = fanOutOver(accepted, arrivals, 0);
    const { spent, grew } = crowdTotals(cpuBefore, [cpuOf(gateways), cpuOf(clients)], before, after);
    const typed = typingArrivals();
    return {
      subscribers,
      users,
      channels: channelCount,
      channelSets: new Set(sets.map((set) => [...set].sort((a, b) => a - b).join(','))).size,
      processes,
      clients: clients.length,
      sends,
      accepted: accepted.size,
      refused,
      delivered: delivered(),
      expected,
      missing: expected - delivered(),
      foreign: checks.foreign,
      duplicates: checks.duplicates,
      errors: checks.errors,
      failed: checks.failed,
      ended: checks.ended,
      assignedToMeChecked: checks.assignedToMe,
      wrongAssignedToMe: checks.wrongAssignedToMe,
      assigned: Object.keys(assignees).length,
      fanOutP99Ms: p99(fanOut),
      fanOutP99ByTransportMs: { websocket: p99(fanOutOver(accepted, arrivals, 1)), sse: p99(fanOutOver(accepted, arrivals, 2)) },
      fanOutBySecondMs: Array.from({ length: Math.ceil(fanOut.length / rate) }, (_, second) =>
        Math.round(Math.max(...fanOut.slice(second * rate, (second + 1) * rate))),
      ),
      sendP99Ms: p99(sendTimes),
      kbPerSubscriber: grew === null ? null : Math.round((grew * 10240) / (subscribers - warm)) / 10,
      rssMb: { tenth: before, all: after },
      viewers: viewers.length,
      viewed: viewersOf.size,
      typingReports,
      typingAccepted: reportTimes.length,
      typingRefused,
      typingDelivered: typed.count,
      typingExpected,
      typingFanOutP99Ms: p99(typed.fanOut),
      typingReportP99Ms: p99(reportTimes),
      executions: sum(await Promise.all(gateways.map((gateway) => metric(gateway.base, 'connect_subscription_executions_total')))),
      results: sum(await Promise.all(gateways.map((gateway) => metric(gateway.base, 'connect_subscription_results_total')))),
      gatewayCpuMs: spent(0),
      clientCpuMs: spent(1),
    };
  } finally {
    agent.destroy();
    await closeClients(clients);
    for (const gateway of gateways) await gateway.stop();
  }
}
