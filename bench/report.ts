import { BROADCAST_TARGETS, seriesLine, type BroadcastResult } from './broadcast.js';
import { IMPORT_REQUEST_ROWS, IMPORT_TARGET_S, type ImportRun } from './import.js';
import { TRANSPORT_NAMES, type CrowdResult } from './crowd.js';
import type { MixedCrowdResult } from './mixed-crowd.js';
import type { ContactSearch, PageLatency, SearchLatency } from './checks.js';
import { median, type EventLoopDelay, type Window } from './measure.js';
import { OPERATIONS, operationById, type Operation } from './operations.js';
import type { ProfileSummary } from './profile.js';
import type { StatementReport } from './statements.js';
import { INBOX_FILTER_LIMIT, type InboxAtScale } from './inbox-scale.js';
import type { DeliveryRound, ProcessingRound } from './whatsapp.js';

/** What a round measured besides its operations: inbound processing, delivery, and the gateway's memory after it. */
export interface RoundExtras {
  round: number;
  processing: ProcessingRound | null;
  delivery: DeliveryRound | null;
  /** The gateway's VmRSS and V8 heap used after the round (MB); heap used includes garbage not yet collected. */
  rssMb: number | null;
  heapUsedMb: number | null;
  /** The V8 heap after the gateway's latest full collection by the round's end (MB, from --trace-gc): what is live. */
  liveHeapMb: number | null;
  /** Full collections the gateway has made since it started, by the round's end. */
  fullCollections: number;
}

/** Medians over rounds of the processing and delivery rows. */
export interface WhatsAppSummary {
  processing: { processedPerS: number; steadyRate: number; steadyPerS: number; lagP50: number; lagP99: number; missing: number; errors: number } | null;
  delivery: {
    gateway: { deliveredPerS: number; acceptedPerS: number; lagP50: number; lagP99: number; errors: number };
    floor: { deliveredPerS: number; acceptedPerS: number; lagP50: number; lagP99: number; errors: number };
    /** Median over rounds of the gateway's delivered/s over the floor's in the same round. */
    ratio: number;
  } | null;
}

export function summariseWhatsApp(rounds: RoundExtras[]): WhatsAppSummary {
  const processing = rounds.map((r) => r.processing).filter((p): p is ProcessingRound => p !== null);
  const delivery = rounds.map((r) => r.delivery).filter((d): d is DeliveryRound => d !== null);
  const side = (name: 'gateway' | 'floor') => ({
    deliveredPerS: median(delivery.map((d) => d[name].deliveredPerS)),
    acceptedPerS: median(delivery.map((d) => d[name].acceptedPerS)),
    lagP50: median(delivery.map((d) => d[name].lag.p50)),
    lagP99: median(delivery.map((d) => d[name].lag.p99)),
    errors: delivery.reduce((sum, d) => sum + d[name].errors, 0),
  });
  return {
    processing: processing.length
      ? {
          processedPerS: median(processing.map((p) => p.processedPerS)),
          steadyRate: median(processing.map((p) => p.steadyRate)),
          steadyPerS: median(processing.map((p) => p.steadyPerS)),
          lagP50: median(processing.map((p) => p.lag.p50)),
          lagP99: median(processing.map((p) => p.lag.p99)),
          missing: processing.reduce((sum, p) => sum + p.missing, 0),
          errors: processing.reduce((sum, p) => sum + p.errors, 0),
        }
      : null,
    delivery: delivery.length
      ? { gateway: side('gateway'), floor: side('floor'), ratio: median(delivery.map((d) => (d.floor.deliveredPerS > 0 ? d.gateway.deliveredPerS / d.floor.deliveredPerS : NaN))) }
      : null,
  };
}

export interface Summary {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpuMs: number | null;
  pgCpuMs: number | null;
  samples: string[];
}

export interface OperationResult {
  id: string;
  title: string;
  transport: 'rest' | 'graphql';
  gateway: Summary;
  floor: Summary;
  /** Median over rounds of the gateway's throughput over the floor's in the same round. */
  ratio: number;
  /** GraphQL operations: median over rounds of their throughput over the same REST operation's on the gateway. */
  restRatio: number | null;
  /**
   * Median over rounds of the floor's CPU per request (Node and PostgreSQL) over the gateway's:
   * the throughput ratio the gateway would reach on an otherwise idle machine, and steadier than req/s.
   */
  cpuRatio: number | null;
  rounds: { gateway: Window; floor: Window; drainS?: { gateway: number; floor: number } }[];
}

export interface Target {
  id: string;
  description: string;
  value: number | boolean | null;
  target: string;
  /** null when this run could not tell (the operation or check did not run). */
  pass: boolean | null;
}

export interface Report {
  version: 1;
  /** The crowd row (--crowd N), when run. */
  crowd?: CrowdResult | null;
  /** The mixed crowd row (--mixed-crowd N), when run. */
  mixedCrowd?: MixedCrowdResult | null;
  commit: string;
  /** Uncommitted changes under src/ or prisma/ when the run started. */
  dirty: boolean;
  startedAt: string;
  durationS: number;
  machine: Record<string, string | number>;
  settings: Record<string, unknown>;
  seed: { contacts: number; messages: number; conversations: number; seconds: number };
  operations: OperationResult[];
  statements: StatementReport | null;
  pages: PageLatency | null;
  search: SearchLatency | null;
  /**
   * --scale: search latency with a tenth of the messages (`before` of them; `search` holds it
   * with all `messages`), and how much the gateway's p50 grew between the two.
   */
  searchAtScale: { messages: number; before: number; latency: SearchLatency; growth: Record<string, number> } | null;
  /** The inbox at scale (--inbox-scale); absent from reports made before it. */
  inboxAtScale?: InboxAtScale | null;
  /** The import row (--import); absent from reports made before it. */
  importRun?: ImportRun | null;
  /** The broadcast row (--broadcast); absent from reports made before it. */
  broadcast?: BroadcastResult | null;
  contactSearch: ContactSearch | null;
  /** Inbound processing and delivery through the workers (medians over rounds); null when not run. */
  whatsapp: WhatsAppSummary | null;
  /** Per round: processing, delivery, and the gateway's memory after it. */
  rounds: RoundExtras[];
  rssMb: number | null;
  /** --profile: where the gateway's CPU time went during the run. */
  profile: ProfileSummary | null;
  /** --profile: the same for the gateway that took the signed webhooks of wa.accept (its worker off). */
  inboundProfile?: ProfileSummary | null;
  targets: Target[];
  passed: boolean;
  logs: string;
}

export function summarise(op: Operation, rounds: OperationResult['rounds'], restRounds?: OperationResult['rounds']): OperationResult {
  const summary = (side: 'gateway' | 'floor'): Summary => ({
    rps: median(rounds.map((r) => r[side].rps)),
    p50: median(rounds.map((r) => r[side].p50)),
    p99: median(rounds.map((r) => r[side].p99)),
    errors: rounds.reduce((sum, r) => sum + r[side].errors, 0),
    cpuMs: nullable(median(rounds.map((r) => r[side].cpuMs))),
    pgCpuMs: nullable(median(rounds.map((r) => r[side].pgCpuMs))),
    samples: rounds.flatMap((r) => r[side].samples).slice(0, 3),
  });
  const restRatio = restRounds?.length
    ? nullable(median(rounds.map((r, i) => (restRounds[i] ? r.gateway.rps / restRounds[i]!.gateway.rps : NaN))))
    : null;
  return {
    id: op.id,
    title: op.title,
    transport: op.transport,
    gateway: summary('gateway'),
    floor: summary('floor'),
    ratio: median(rounds.map((r) => (r.floor.rps > 0 ? r.gateway.rps / r.floor.rps : NaN))),
    restRatio,
    cpuRatio: nullable(median(rounds.map((r) => cpuOf(r.floor) / cpuOf(r.gateway)))),
    rounds,
  };
}

const nullable = (n: number) => (Number.isFinite(n) ? n : null);
const cpuOf = (w: Window) => (w.cpuMs === null || w.pgCpuMs === null ? NaN : w.cpuMs + w.pgCpuMs);

export const RSS_LIMIT_MB = 300;
/** The crowd row's fan-out p99 (a send's 202 to its last subscriber) and memory per idle subscriber (50 KB). */
export const CROWD_FAN_OUT_LIMIT_MS = 250;
export const CROWD_MEMORY_LIMIT_KIB = 50_000 / 1024;
/** The most the gateway's p99 and p50 may be, as multiples of the floor's in the same round (operations with `tail`). */
export const TAIL_LIMITS = { p99: 1.5, p50: 1.2 } as const;

/** Median over rounds of the gateway's latency percentile over the floor's in the same round. */
export function latencyRatio(result: OperationResult, percentile: 'p50' | 'p99'): number | null {
  return nullable(median(result.rounds.map((r) => (r.floor[percentile] > 0 ? r.gateway[percentile] / r.floor[percentile] : NaN))));
}
/** The most the gateway's heap may grow from after the first round to after the last without counting as a leak. */
export const HEAP_GROWTH_LIMIT = 1.25;

/** Every target of the issue this run can judge; the others are listed with pass null. */
export function judge(report: Omit<Report, 'targets' | 'passed' | 'profile' | 'inboundProfile'>): Target[] {
  const targets: Target[] = [];
  const op = (id: string) => report.operations.find((o) => o.id === id);
  for (const definition of OPERATIONS) {
    const result = op(definition.id);
    if (definition.floorTarget !== undefined) {
      targets.push({
        id: `${definition.id}.floor`,
        description: `${definition.title}: gateway/floor throughput`,
        value: result?.ratio ?? null,
        target: `≥ ${definition.floorTarget.toFixed(2)}`,
        pass: result ? result.ratio >= definition.floorTarget : null,
      });
    }
    if (definition.tail) {
      for (const percentile of ['p99', 'p50'] as const) {
        const value = result ? latencyRatio(result, percentile) : null;
        targets.push({
          id: `${definition.id}.${percentile}`,
          description: `${definition.title}: gateway ${percentile} / floor ${percentile}`,
          value,
          target: `≤ ${TAIL_LIMITS[percentile].toFixed(2)}`,
          pass: value === null ? null : value <= TAIL_LIMITS[percentile],
        });
      }
    }
    if (definition.maxStatements !== undefined) {
      const value = result ? (report.statements?.gateway[definition.id]?.perRequest ?? null) : null;
      targets.push({
        id: `${definition.id}.statements`,
        description: `${definition.title}: statements per request (gateway)`,
        value,
        target: `≤ ${definition.maxStatements}`,
        pass: value === null ? null : value <= definition.maxStatements,
      });
    }
    if (definition.rest) {
      const value = result?.restRatio ?? null;
      targets.push({
        id: `${definition.id}.rest`,
        description: `${definition.title}: ${definition.rest.label} throughput (${definition.rest.id})`,
        value,
        target: `≥ ${definition.rest.target.toFixed(2)}`,
        pass: value === null ? null : value >= definition.rest.target,
      });
    }
  }
  targets.push({
    id: 'deep-page',
    description: `GET /contacts ${report.pages ? report.pages.rows.toLocaleString('en-US') : '?'} rows deep / first page (p50, gateway)`,
    value: report.pages?.gateway.ratio ?? null,
    target: '≤ 1.50',
    pass: report.pages ? report.pages.gateway.ratio <= 1.5 : null,
  });
  targets.push({
    id: 'deep-page.messages',
    description: `GET /messages ${report.pages ? report.pages.messages.rows.toLocaleString('en-US') : '?'} rows deep / first page (p50, gateway)`,
    value: report.pages?.messages.gateway.ratio ?? null,
    target: '≤ 2.00',
    pass: report.pages ? report.pages.messages.gateway.ratio <= 2 : null,
  });
  targets.push({
    id: 'backward-page.conversation',
    description: `GraphQL messages(conversationId:) of a ${report.pages?.conversation ? report.pages.conversation.messages.toLocaleString('en-US') : '?'}-message conversation: last page / first page (p50, gateway)`,
    value: report.pages?.conversation?.gateway.ratio ?? null,
    target: '≤ 1.50',
    pass: report.pages?.conversation ? report.pages.conversation.gateway.ratio <= 1.5 : null,
  });
  for (const [kind, growth] of Object.entries(report.searchAtScale?.growth ?? { rare: null, medium: null, common: null })) {
    targets.push({
      id: `search-growth.${kind}`,
      description: `GET /messages?search= (${kind} term): p50 at ${report.searchAtScale ? report.searchAtScale.messages.toLocaleString('en-US') : 'N'} / at a tenth of the messages`,
      value: growth,
      target: '≤ 3.00 (--scale)',
      pass: growth === null ? null : growth <= 3,
    });
  }
  for (const [name, page] of Object.entries(report.inboxAtScale?.pages ?? {})) {
    targets.push({
      id: `inbox-scale.${name}`,
      description: `GET /conversations?${page.query} at ${report.inboxAtScale!.conversations.toLocaleString('en-US')} conversations / unfiltered (p50, gateway)`,
      value: page.ratio,
      target: `≤ ${INBOX_FILTER_LIMIT.toFixed(2)}`,
      pass: page.ratio <= INBOX_FILTER_LIMIT,
    });
  }
  if (report.importRun) {
    const run = report.importRun;
    const per100k = (run.seconds * 100_000) / run.contacts;
    targets.push({
      id: 'import',
      description: `POST /contacts/import: ${run.contacts.toLocaleString('en-US')} contacts in ${run.requests} requests, seconds per 100,000 (${run.rowsPerS.toLocaleString('en-US')} rows/s)`,
      value: Math.round(per100k * 10) / 10,
      target: `< ${IMPORT_TARGET_S}`,
      pass: per100k < IMPORT_TARGET_S,
    });
  }
  if (report.broadcast) targets.push(...broadcastTargets(report.broadcast));
  targets.push({
    id: 'contact-search',
    description: `GET /contacts?search= is index-backed (rows read${report.contactSearch?.rowsExamined != null ? `: ${report.contactSearch.rowsExamined.toLocaleString('en-US')}` : ''})`,
    value: report.contactSearch?.indexBacked ?? null,
    target: '≤ 1 % of contacts read',
    pass: report.contactSearch?.indexBacked ?? null,
  });
  const errors =
    report.operations.reduce((sum, o) => sum + o.gateway.errors + o.floor.errors, 0) +
    report.rounds.reduce(
      (sum, r) => sum + (r.processing ? r.processing.errors + r.processing.missing : 0) + (r.delivery ? r.delivery.gateway.errors + r.delivery.floor.errors : 0),
      0,
    );
  const ran = report.operations.length > 0 || report.rounds.length > 0;
  targets.push({
    id: 'errors',
    description: 'errors during the run (gateway and floor; webhooks never processed)',
    value: ran ? errors : null,
    target: '0',
    pass: ran ? errors === 0 : null,
  });
  // The live heap (after a full collection) is the leak check: heap used at an instant holds garbage too.
  const measured = report.rounds.filter((r) => r.liveHeapMb != null);
  const growth = measured.length >= 2 ? measured[measured.length - 1]!.liveHeapMb! / measured[0]!.liveHeapMb! : null;
  targets.push({
    id: 'heap-growth',
    description: `gateway live heap after the last round / after the first (${measured.map((r) => r.liveHeapMb!.toFixed(0)).join(', ') || '?'} MB)`,
    value: growth,
    target: `≤ ${HEAP_GROWTH_LIMIT.toFixed(2)} (2+ rounds)`,
    pass: growth === null ? null : growth <= HEAP_GROWTH_LIMIT,
  });
  targets.push({
    id: 'rss',
    description: 'gateway RSS at the end (MB)',
    value: report.rssMb,
    target: `≤ ${RSS_LIMIT_MB}`,
    pass: report.rssMb === null ? null : report.rssMb <= RSS_LIMIT_MB,
  });
  if (report.crowd) {
    const c = report.crowd;
    const crowd = `crowd of ${c.subscribers} on ${c.processes ?? 1} process(es)`;
    targets.push({
      id: 'crowd.delivered',
      description: `${crowd}: events delivered / expected, every send accepted (${c.accepted}/${c.sends})`,
      value: c.expected ? c.delivered / c.expected : null,
      target: '= 1, every send 202',
      pass: c.expected > 0 && c.delivered === c.expected && c.accepted === c.sends,
    });
    targets.push({
      id: 'crowd.fan-out',
      description: `${crowd}: fan-out p99, from the 202 to the last subscriber (ms)`,
      value: c.fanOutP99Ms,
      target: `≤ ${CROWD_FAN_OUT_LIMIT_MS}`,
      pass: c.fanOutP99Ms === null ? null : c.fanOutP99Ms <= CROWD_FAN_OUT_LIMIT_MS,
    });
    targets.push({
      id: 'crowd.memory',
      description: `${crowd}: resident memory per idle subscriber (KiB)`,
      value: c.kbPerSubscriber,
      target: `≤ ${CROWD_MEMORY_LIMIT_KIB.toFixed(1)} (50 KB)`,
      pass: c.kbPerSubscriber === null ? null : c.kbPerSubscriber <= CROWD_MEMORY_LIMIT_KIB,
    });
  }
  if (report.mixedCrowd) {
    const m = report.mixedCrowd;
    const crowd = `mixed crowd of ${m.subscribers} (${m.users} users, ${m.channels} channels) on ${m.processes} process(es)`;
    targets.push({
      id: 'mixed.delivered',
      description:
        `${crowd}: events delivered / expected, every send accepted (${m.accepted}/${m.sends}), ` +
        `none missing (${m.missing}), foreign (${m.foreign}) or twice (${m.duplicates}), no errors (${m.errors + m.failed}), no stream ended (${m.ended ?? 0})`,
      value: m.expected ? m.delivered / m.expected : null,
      target: '= 1, every send 202, 0 foreign',
      pass: m.expected > 0 && m.delivered === m.expected && m.accepted === m.sends && m.foreign === 0 && m.duplicates === 0 && m.errors + m.failed === 0 && !m.ended,
    });
    targets.push({
      id: 'mixed.assigned-to-me',
      description: `${crowd}: conversation.assignedToMe not the receiving user's own, of ${m.assignedToMeChecked} received (${m.assigned} conversations assigned)`,
      value: m.wrongAssignedToMe,
      target: '= 0',
      pass: m.assignedToMeChecked > 0 && m.wrongAssignedToMe === 0,
    });
    targets.push({
      id: 'mixed.fan-out',
      description: `${crowd}: fan-out p99, from the 202 to the last subscriber following it (ms)`,
      value: m.fanOutP99Ms,
      target: `≤ ${CROWD_FAN_OUT_LIMIT_MS}`,
      pass: m.fanOutP99Ms === null ? null : m.fanOutP99Ms <= CROWD_FAN_OUT_LIMIT_MS,
    });
    targets.push({
      id: 'mixed.memory',
      description: `${crowd}: resident memory per idle subscriber (KiB)`,
      value: m.kbPerSubscriber,
      target: `≤ ${CROWD_MEMORY_LIMIT_KIB.toFixed(1)} (50 KB)`,
      pass: m.kbPerSubscriber === null ? null : m.kbPerSubscriber <= CROWD_MEMORY_LIMIT_KIB,
    });
    // Without typing reports (--mixed-typing 0) there are no viewers and nothing to judge.
    if (m.viewers) {
      targets.push({
        id: 'mixed.typing-delivered',
        description: `${crowd}: typing reports delivered / expected to the ${m.viewers} viewers of ${m.viewed} conversations, every report 204 (${m.typingAccepted}/${m.typingReports})`,
        value: m.typingExpected ? m.typingDelivered / m.typingExpected : null,
        target: '= 1, every report 204',
        pass: m.typingExpected > 0 && m.typingDelivered === m.typingExpected && m.typingAccepted === m.typingReports,
      });
      targets.push({
        id: 'mixed.typing-fan-out',
        description: `${crowd}: typing fan-out p99, from the report's 204 to the last viewer (ms)`,
        value: m.typingFanOutP99Ms,
        target: `≤ ${CROWD_FAN_OUT_LIMIT_MS}`,
        pass: m.typingFanOutP99Ms === null ? null : m.typingFanOutP99Ms <= CROWD_FAN_OUT_LIMIT_MS,
      });
    }
  }
  return targets;
}

/** The broadcast row's targets (docs/benchmarks.md#the-broadcast-row). */
function broadcastTargets(b: BroadcastResult): Target[] {
  const row = `broadcast of ${b.recipients.toLocaleString('en-US')} at ${b.rate}/s on ${b.processes} process(es)${b.limitSeconds ? `, 429s for ${b.limitSeconds} s` : ''}`;
  const sent = (b.counts.sent ?? 0) + (b.counts.delivered ?? 0) + (b.counts.read ?? 0);
  const exact = b.status === 'finished' && sent === b.recipients && b.taken === b.recipients && b.distinct === b.recipients && b.twice === 0;
  const ratio = b.durationS === null ? null : Math.round((b.durationS / b.expectedS) * 100) / 100;
  const targets: Target[] = [
    {
      id: 'broadcast.counts',
      description:
        `${row}: ${b.status}, sent ${sent}, failed ${b.counts.failed ?? 0}, skipped ${b.counts.skipped ?? 0}; ` +
        `the fake took ${b.taken} for ${b.distinct} recipients, ${b.twice} twice (${b.twiceSameDelivery ?? '?'} of them the same delivery again)`,
      value: b.recipients ? b.distinct / b.recipients : null,
      target: '= 1, sent = N, none twice',
      pass: exact,
    },
    {
      id: 'broadcast.duration',
      description: `${row}: duration (started to finished, ${b.durationS ?? '?'} s) / N ÷ rate (${b.expectedS} s)${b.limitSeconds ? ' — not judged with the rate-limit step' : ''}`,
      value: ratio,
      target: `${(1 - BROADCAST_TARGETS.duration).toFixed(2)}–${(1 + BROADCAST_TARGETS.duration).toFixed(2)}`,
      pass: b.limitSeconds || ratio === null ? null : Math.abs(ratio - 1) <= BROADCAST_TARGETS.duration,
    },
    {
      id: 'broadcast.per-second',
      description: `${row}: the most sends the fake took in one wall-clock second (any 1,000 ms: ${b.maxSliding})`,
      value: b.maxPerSecond,
      target: `≤ ${Math.floor(BROADCAST_TARGETS.perSecond * b.rate)} (${BROADCAST_TARGETS.perSecond} × rate)`,
      pass: b.taken > 0 ? b.maxPerSecond <= BROADCAST_TARGETS.perSecond * b.rate : null,
    },
    {
      id: 'broadcast.memory',
      description: `${row}: the gateways' resident memory growth, after full collections less the young generation (MB; peak VmRSS growth ${b.memory.peakRssGrowthMb ?? '?'})`,
      value: b.memory.grewMb,
      target: `< ${BROADCAST_TARGETS.memoryMb}`,
      pass: b.memory.grewMb === null ? null : b.memory.grewMb < BROADCAST_TARGETS.memoryMb,
    },
    {
      id: 'broadcast.p99',
      description: `${row}: GET /contacts p99 during it (${b.load.during.p99Ms ?? '?'} ms) / on the idle gateways (${b.load.idle.p99Ms ?? '?'} ms), ${b.load.idle.errors + b.load.during.errors} errors`,
      value: b.load.p99Ratio,
      target: `≤ ${BROADCAST_TARGETS.p99.toFixed(2)}, no errors`,
      pass: b.load.p99Ratio === null ? null : b.load.p99Ratio <= BROADCAST_TARGETS.p99 && b.load.idle.errors + b.load.during.errors === 0,
    },
  ];
  if (b.limitSeconds) {
    const l = b.limit;
    // Nothing taken before the window (or nothing left after it): nothing to recover to, or no second to tell.
    const recovered = l && l.bestAfter !== null && l.before > 0 ? l.bestAfter >= BROADCAST_TARGETS.recovered * l.before : null;
    targets.push({
      id: 'broadcast.recovered',
      description:
        `${row}: sends a second after the 429s (first ${l?.firstAfter ?? '?'}, most ${l?.bestAfter ?? '?'}) / before them (mean ${l?.before ?? '?'}), ` +
        `${b.refused} answered 429`,
      value: l && l.bestAfter !== null && l.before > 0 ? Math.round((l.bestAfter / l.before) * 100) / 100 : null,
      target: `≥ ${BROADCAST_TARGETS.recovered.toFixed(2)}`,
      pass: recovered,
    });
  }
  return targets;
}

const fixed = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(digits));
const pair = (a: number | null | undefined, b: number | null | undefined, digits = 0) => `${fixed(a, digits)} / ${fixed(b, digits)}`;

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The fan-out p99 over each transport the crowd used (reports written before it was kept have none). */
function byTransport(c: CrowdResult): string {
  const { websocket, sse } = c.fanOutP99ByTransportMs ?? { websocket: null, sse: null };
  if (websocket === null || sse === null) return '';
  return `; over WebSocket ${websocket.toFixed(0)} ms, over SSE ${sse.toFixed(0)} ms`;
}

/** The human report: throughput, costs, latency checks and targets. */
export function render(report: Report): string {
  const out: string[] = [];
  const s = report.settings as { rounds: number; duration: number; connections: number; floorPrepared?: boolean };
  out.push(
    `Connect gateway vs floor — commit ${report.commit.slice(0, 12)}${report.dirty ? ' (with uncommitted changes)' : ''}, ` +
      `${report.seed.contacts.toLocaleString('en-US')} contacts, ${report.seed.messages.toLocaleString('en-US')} messages` +
      (report.operations.length ? `, ${s.rounds} rounds × ${s.duration} s, ${s.connections} connections` : '') +
      (s.floorPrepared ? ', the floor with prepared statements' : ''),
  );
  out.push(`${report.machine.cpus} × ${report.machine.cpu}, ${report.machine.memoryGb} GB, Node ${report.machine.node}, ${report.machine.postgres}\n`);
  if (report.crowd) {
    const c = report.crowd;
    out.push(
      `Crowd: ${c.subscribers} subscribers (${TRANSPORT_NAMES[c.transport ?? 'both']}) on ${c.processes ?? 1} gateway process(es)` +
        `, ${c.accepted}/${c.sends} sends accepted` +
        `${Object.keys(c.refused ?? {}).length ? ` (refused: ${Object.entries(c.refused).map(([why, n]) => `${n} × ${why}`).join(', ')})` : ''} — ` +
        `${c.kbPerSubscriber ?? '?'} KiB per idle subscriber, events ${c.delivered}/${c.expected}, ` +
        `fan-out p99 ${c.fanOutP99Ms?.toFixed(0) ?? '?'} ms (202 to the last subscriber${byTransport(c)}), send p99 ${c.sendP99Ms?.toFixed(0) ?? '?'} ms\n`,
    );
    // Reports written before the series was kept have none.
    if (c.fanOutBySecondMs?.length) out.push(`Crowd: slowest fan-out of each second of sends (ms): ${c.fanOutBySecondMs.join(' ')}\n`);
  }
  if (report.mixedCrowd) {
    const m = report.mixedCrowd;
    const refusals = (refused: Record<string, number>) =>
      Object.keys(refused).length ? ` (refused: ${Object.entries(refused).map(([why, n]) => `${n} × ${why}`).join(', ')})` : '';
    out.push(
      `Mixed crowd: ${m.subscribers} subscribers (${m.users} users × 10 sessions, ${m.channelSets} channel sets of ${m.channels} channels, WebSocket and SSE) ` +
        `on ${m.processes} gateway process(es), ${m.accepted}/${m.sends} sends accepted${refusals(m.refused)} — ` +
        `${m.kbPerSubscriber ?? '?'} KiB per idle subscriber, events ${m.delivered}/${m.expected} (missing ${m.missing}, foreign ${m.foreign}, ` +
        `twice ${m.duplicates}, errors ${m.errors + m.failed}, streams ended ${m.ended ?? 0}), assignedToMe wrong ${m.wrongAssignedToMe} of ${m.assignedToMeChecked}, ` +
        `fan-out p99 ${m.fanOutP99Ms?.toFixed(0) ?? '?'} ms (over WebSocket ${fixed(m.fanOutP99ByTransportMs.websocket)} ms, over SSE ` +
        `${fixed(m.fanOutP99ByTransportMs.sse)} ms), send p99 ${fixed(m.sendP99Ms)} ms\n`,
    );
    if (m.viewers) out.push(
      `Mixed crowd typing: ${m.viewers} viewers of ${m.viewed} conversations, ${m.typingAccepted}/${m.typingReports} reports answered 204${refusals(m.typingRefused)} — ` +
        `delivered ${m.typingDelivered}/${m.typingExpected}, fan-out p99 ${fixed(m.typingFanOutP99Ms)} ms (204 to the last viewer), report p99 ${fixed(m.typingReportP99Ms)} ms\n`,
    );
    if (m.fanOutBySecondMs.length) out.push(`Mixed crowd: slowest fan-out of each second of sends (ms): ${m.fanOutBySecondMs.join(' ')}\n`);
  }
  if (report.broadcast) {
    const b = report.broadcast;
    out.push(
      `Broadcast: ${b.recipients.toLocaleString('en-US')} recipients at ${b.rate}/s on ${b.processes} gateway process(es) to a webhook fake` +
        `${b.limitSeconds ? ` answering 429 for ${b.limitSeconds} s (seconds ${b.limit?.fromSecond ?? '?'}–${b.limit?.untilSecond ?? '?'} below)` : ''} — ` +
        `${b.status}${b.stalled ? ' (stalled: the row gave up)' : ''} in ${b.durationS ?? '?'} s against ${b.expectedS} s, the fake's first to last ${b.spanS ?? '?'} s ` +
        `(${b.spanS ? Math.round(b.taken / b.spanS) : '?'}/s); most in one second ${b.maxPerSecond} (any 1,000 ms ${b.maxSliding}); ` +
        `202 in ${b.createMs} ms; memory +${b.memory.grewMb ?? '?'} MB (peak VmRSS +${b.memory.peakRssGrowthMb ?? '?'} MB); ` +
        `GET /contacts p99 ${b.load.during.p99Ms ?? '?'} ms during, ${b.load.idle.p99Ms ?? '?'} ms idle (on the connection: ${b.load.during.serviceP99Ms ?? '?'} / ${b.load.idle.serviceP99Ms ?? '?'} ms); gateway CPU ${b.gatewayCpuMs ?? '?'} ms; ` +
        `${b.lateRounds} late rounds, ${b.failedAttempts ?? 0} delivery attempts failed (logged)` +
        `${Object.keys(b.pollErrors ?? {}).length ? `, progress reads refused: ${Object.entries(b.pollErrors).map(([status, n]) => `${n} × ${status}`).join(', ')}` : ''}; ` +
        `load average ${b.loadAverage.atStart}–${b.loadAverage.atEnd}\n`,
    );
    out.push(`Broadcast: sends the fake took each second: ${seriesLine(b)}\n`);
    if (b.eventLoopMaxMs?.length) {
      out.push(
        `Broadcast: the gateways' longest event-loop delay each second (ms): ${b.eventLoopMaxMs.join(' ')}; ` +
          `longest full collection ${b.longestFullGcMs ?? '?'} ms of ${b.fullGcs}\n`,
      );
    }
  }
  if (report.operations.length) {
    out.push(
      table(
        ['operation', 'gateway req/s', 'floor req/s', 'ratio', 'vs paired op', 'p50 ms gw / fl', 'p99 ms gw / fl', 'errors'],
        report.operations.map((o) => [
          o.title,
          fixed(o.gateway.rps),
          fixed(o.floor.rps),
          fixed(o.ratio, 2),
          fixed(o.restRatio, 2),
          pair(o.gateway.p50, o.floor.p50),
          pair(o.gateway.p99, o.floor.p99),
          `${o.gateway.errors + o.floor.errors}`,
        ]),
      ),
    );
    out.push('');
    out.push(
      table(
        ['cost per request', 'statements gw / fl', 'worker per msg gw / fl', 'Node CPU ms gw / fl', 'PG CPU ms gw / fl', 'CPU ratio'],
        report.operations.map((o) => {
          const st = report.statements;
          const isSend = o.id === 'rest.send' || o.id === 'gql.sendMessage';
          const isInbound = o.id === 'wa.accept';
          return [
            o.title,
            st ? pair(st.gateway[o.id]?.perRequest, st.floor[o.id]?.perRequest) : '—',
            st && isSend
              ? pair(st.workerPerMessage.gateway, st.workerPerMessage.floor, 1)
              : st && isInbound && st.workerPerInbound != null
                ? `${fixed(st.workerPerInbound, 1)} / —`
                : '',
            pair(o.gateway.cpuMs, o.floor.cpuMs, 2),
            pair(o.gateway.pgCpuMs, o.floor.pgCpuMs, 2),
            fixed(o.cpuRatio, 2),
          ];
        }),
      ),
    );
    out.push('');
    for (const o of report.operations) {
      for (const sample of [...o.gateway.samples.map((x) => `gateway: ${x}`), ...o.floor.samples.map((x) => `floor: ${x}`)]) out.push(`  ${o.id} ${sample}`);
    }
  }
  if (report.operations.length) {
    const loop = (e: EventLoopDelay | null) => (e ? `${fixed(e.p50, 1)} / ${fixed(e.p99, 1)} / ${fixed(e.max, 0)}` : '—');
    const rows: string[][] = [];
    for (const o of report.operations) {
      o.rounds.forEach((r, i) => {
        for (const [name, w] of [['gateway', r.gateway], ['floor', r.floor]] as const) {
          rows.push([i === 0 && name === 'gateway' ? o.id : '', `${i + 1}`, name, fixed(w.rps), fixed(w.p50), fixed(w.p90), fixed(w.p99), fixed(w.max), name === 'gateway' ? loop(w.eventLoop) : '']);
        }
      });
    }
    out.push(table(['per round', 'round', 'server', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'gw event loop p50 / p99 / max ms'], rows));
    out.push('');
  }
  if (report.whatsapp) {
    const rows: string[][] = [];
    const lag = (l: { p50: number; p90: number; p99: number; max: number }) => `${fixed(l.p50)} / ${fixed(l.p90)} / ${fixed(l.p99)} / ${fixed(l.max)}`;
    const loop = (e: EventLoopDelay | null) => (e ? `${fixed(e.p50, 1)} / ${fixed(e.p99, 1)} / ${fixed(e.max, 0)}` : '—');
    for (const r of report.rounds) {
      if (r.processing) {
        const p = r.processing;
        rows.push([`inbound → message (gateway worker), round ${r.round}`, `${fixed(p.processedPerS)} events/s`, `${p.steadyRate}/s steady → ${fixed(p.steadyPerS)}/s`, lag(p.lag), loop(p.eventLoop), `${p.errors + p.missing}`]);
      }
      if (r.delivery) {
        for (const name of ['gateway', 'floor'] as const) {
          const d = r.delivery[name];
          rows.push([`POST /messages → WhatsApp stand-in (${name}), round ${r.round}`, `${fixed(d.deliveredPerS)} msg/s`, `${fixed(d.acceptedPerS)} req/s accepted`, lag(d.lag), name === 'gateway' ? loop(d.eventLoop) : '', `${d.errors}`]);
        }
      }
    }
    out.push(table(['WhatsApp through the workers', 'throughput', 'load', 'lag p50 / p90 / p99 / max ms', 'gw event loop p50 / p99 / max ms', 'errors'], rows));
    const w = report.whatsapp;
    if (w.processing) {
      out.push(
        `inbound processing (median of rounds): ${fixed(w.processing.processedPerS)} events/s processed into messages; under ${fixed(w.processing.steadyRate)} webhooks/s ` +
          `the lag from the 200 to messageAdded (GraphQL SSE) is p50 ${fixed(w.processing.lagP50)} ms, p99 ${fixed(w.processing.lagP99)} ms`,
      );
    }
    if (w.delivery) {
      out.push(
        `delivery (median of rounds): gateway ${fixed(w.delivery.gateway.deliveredPerS)} / floor ${fixed(w.delivery.floor.deliveredPerS)} msg/s = ${fixed(w.delivery.ratio, 2)}; ` +
          `lag p99 gateway ${fixed(w.delivery.gateway.lagP99)} ms / floor ${fixed(w.delivery.floor.lagP99)} ms`,
      );
    }
    out.push('');
  }
  if (report.rounds?.length) {
    out.push(
      table(
        ['gateway memory after round', 'RSS MB', 'heap used MB', 'live heap MB (latest full GC)', 'full GCs so far'],
        report.rounds.map((r) => [`${r.round}`, fixed(r.rssMb), fixed(r.heapUsedMb), fixed(r.liveHeapMb), `${r.fullCollections ?? '—'}`]),
      ),
    );
    out.push('');
  }
  if (report.statements && Object.keys(report.statements.shapeMismatches).length) {
    out.push(`answer shapes differing between gateway and floor: ${JSON.stringify(report.statements.shapeMismatches)}`);
  }
  const latency: string[][] = [];
  if (report.pages) {
    const p = report.pages;
    latency.push(['GET /contacts first page', pair(p.gateway.first.p50, p.floor.first.p50, 1), pair(p.gateway.first.p95, p.floor.first.p95, 1)]);
    latency.push([`GET /contacts ${p.rows.toLocaleString('en-US')} rows deep`, pair(p.gateway.deep.p50, p.floor.deep.p50, 1), pair(p.gateway.deep.p95, p.floor.deep.p95, 1)]);
    const m = p.messages;
    latency.push(['GET /messages first page', pair(m.gateway.first.p50, m.floor.first.p50, 1), pair(m.gateway.first.p95, m.floor.first.p95, 1)]);
    latency.push([`GET /messages ${m.rows.toLocaleString('en-US')} rows deep`, pair(m.gateway.deep.p50, m.floor.deep.p50, 1), pair(m.gateway.deep.p95, m.floor.deep.p95, 1)]);
    if (p.conversation) {
      const c = p.conversation;
      latency.push([`GraphQL conversation messages, first page (${c.messages.toLocaleString('en-US')})`, `${fixed(c.gateway.first.p50, 1)} / —`, `${fixed(c.gateway.first.p95, 1)} / —`]);
      latency.push([`GraphQL conversation messages, last page (${c.messages.toLocaleString('en-US')})`, `${fixed(c.gateway.deep.p50, 1)} / —`, `${fixed(c.gateway.deep.p95, 1)} / —`]);
    }
  }
  const searchRows = (label: string, search: SearchLatency) => {
    for (const [kind, r] of Object.entries(search)) {
      latency.push([`GET /messages?search=${r.term} (${kind}, ${r.matches.toLocaleString('en-US')} matches)${label}`, pair(r.gateway.p50, r.floor.p50, 1), pair(r.gateway.p95, r.floor.p95, 1)]);
    }
  };
  if (report.searchAtScale) searchRows(` at ${report.searchAtScale.before.toLocaleString('en-US')}`, report.searchAtScale.latency);
  if (report.search) searchRows(report.searchAtScale ? ` at ${report.searchAtScale.messages.toLocaleString('en-US')}` : '', report.search);
  if (report.inboxAtScale) {
    const inbox = report.inboxAtScale;
    const at = `${inbox.conversations.toLocaleString('en-US')} conversations`;
    latency.push([`GET /conversations (unfiltered, ${at})`, `${fixed(inbox.unfiltered.p50, 1)} / —`, `${fixed(inbox.unfiltered.p95, 1)} / —`]);
    for (const page of Object.values(inbox.pages)) latency.push([`GET /conversations?${page.query} (${at})`, `${fixed(page.latency.p50, 1)} / —`, `${fixed(page.latency.p95, 1)} / —`]);
  }
  if (report.importRun) {
    const run = report.importRun;
    latency.push([`POST /contacts/import, ${IMPORT_REQUEST_ROWS.toLocaleString('en-US')} rows (${run.requests} requests: ${run.seconds} s, ${run.rowsPerS.toLocaleString('en-US')} rows/s)`, `${fixed(run.medianRequestS * 1000, 0)} / —`, `${fixed(run.slowestRequestS * 1000, 0)} (slowest) / —`]);
  }
  if (report.contactSearch?.gateway) latency.push([`GET /contacts?search=${report.contactSearch.term}`, `${fixed(report.contactSearch.gateway.p50, 1)} / —`, `${fixed(report.contactSearch.gateway.p95, 1)} / —`]);
  if (latency.length) {
    out.push(table(['one request at a time', 'p50 ms gw / fl', 'p95 ms gw / fl'], latency));
    if (report.contactSearch?.scans.length) out.push(`contact search plan: ${report.contactSearch.scans.join('; ')}`);
    out.push('');
  }
  out.push(
    table(
      ['target', 'value', 'target', 'result'],
      report.targets.map((t) => [
        t.description,
        typeof t.value === 'boolean' ? (t.value ? 'yes' : 'no') : fixed(t.value, Number.isInteger(t.value) ? 0 : 2),
        t.target,
        t.pass === null ? 'not run' : t.pass ? 'pass' : 'FAIL',
      ]),
    ),
  );
  for (const [label, profile] of [['gateway', report.profile], ['inbound acceptance gateway (wa.accept)', report.inboundProfile]] as const) {
    if (!profile) continue;
    out.push(`\n${label} CPU profile (${profile.busyMs} ms sampled, self time; ${profile.file})`);
    out.push(table(['where', '%'], profile.byPlace.map((p) => [p.place, p.percent.toFixed(1)])));
    out.push('');
    out.push(table(['function', '%'], profile.byFunction.map((f) => [f.fn, f.percent.toFixed(1)])));
  }
  const failed = report.targets.filter((t) => t.pass === false).length;
  out.push(`\n${failed ? `${failed} target(s) missed` : 'every target this run could judge is met'} — ${Math.round(report.durationS)} s; server logs in ${report.logs}`);
  return out.join('\n');
}
