import type { CrowdTransport } from './crowd-client.js';
import { TRANSPORT_NAMES } from './crowd.js';
import { OPERATIONS } from './operations.js';

/** Rows measured once per round through the delivery workers, not as a request rate; --only names them too. */
export const WORKER_ROWS = ['wa.process', 'wa.deliver'] as const;
const KNOWN = [...OPERATIONS.map((o) => o.id), ...WORKER_ROWS];

export interface Settings {
  contacts: number;
  messages: number;
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
  pool: number;
  only: string[];
  json: boolean;
  scale: boolean;
  build: boolean;
  worker: boolean;
  statements: boolean;
  showSql: boolean;
  profile: boolean;
  keep: boolean;
  ref: string | null;
  render: string | null;
  server: string;
  floorPrepared: boolean;
  /** Subscribers of the crowd row (0: no crowd row). */
  crowd: number;
  /** Gateway processes of the crowd row, sharing Redis when more than one. */
  crowdProcesses: number;
  /** Client processes holding the crowd's subscribers (0: one per 500). */
  crowdClients: number;
  /** Seconds of unmeasured sends before the crowd's measured ones. */
  crowdWarmup: number;
  /** What the crowd's subscribers use (`--crowd-transport`). */
  crowdTransport: CrowdTransport;
  /** Settings given to the crowd row's gateways besides the bench's (`--crowd-env`). */
  crowdEnv: Record<string, string>;
  /** Seconds of measured sends of the crowd rows (`--crowd-seconds`, default 10). */
  crowdSeconds: number;
  /** Subscribers of the mixed crowd row (0: no such row). */
  mixedCrowd: number;
  /** Channels the mixed crowd's users are spread over. */
  mixedChannels: number;
  /** Typing reports a second of the mixed crowd (0: none). */
  mixedTyping: number;
  /** The Redis the crowd row's processes share. */
  redis: string;
  /** Conversations added for the inbox-at-scale check (0: no check). */
  inboxScale: number;
  /** Contacts imported through POST /contacts/import for the import row (0: no row). */
  import: number;
  /** Recipients of the broadcast row (0: no row). */
  broadcast: number;
  /** The broadcast channel's max rate, per second (`--broadcast-rate`, default 500). */
  broadcastRate: number;
  /** Gateway processes of the broadcast row, on the same database (`--broadcast-processes`, default 1). */
  broadcastProcesses: number;
  /** Seconds the broadcast row's fake provider answers 429 mid-run (0: never). */
  broadcastLimitSeconds: number;
}

export const HELP = `npm run bench -- [options]

Measures the Connect gateway (compiled, NODE_ENV=production) against the floor
(bench/floor/server.ts: node:http + pg issuing the same SQL by hand) on a fresh
PostgreSQL database, in alternating rounds of autocannon load, and checks the
throughput ratios, latencies and limits the performance targets set.
Prints the results table (or one JSON object) and exits 1 when a target is missed.

Data
  --contacts N        contacts to seed (default 100000; 1000000 with --scale)
  --messages N        messages to seed (default 200000; 2000000 with --scale)
Load
  --rounds N          rounds; each runs every operation on both servers, in alternating order (default 3)
  --duration S        measured seconds per operation, server and round (default 6)
  --warmup S          unmeasured seconds before each measured window (default 2)
  --connections N     autocannon connections (default 16)
  --pool N            database connections of each server (default 10, the gateway's default)
  --only OP,OP        run only these operations: ${KNOWN.join(', ')}
                      (wa.process: signed webhooks processed into messages, and the lag from the
                      200 to messageAdded at half that rate; wa.deliver: POST /messages to the
                      WhatsApp stand-in through each server's worker — after a wa.process pass)
Modes
  --scale             the scale checks instead of the load: deep keyset page against the first
                      page, search latency at a tenth of --messages and again at --messages,
                      contact search plan (about 15 min at the defaults of this mode)
  --no-worker         run neither server's delivery worker (and so neither wa.process nor wa.deliver)
  --no-statements     skip counting each operation's SQL statements
  --no-build          use the dist/ already built instead of running npm run build
  --floor-prepared    the floor keeps its parameterised statements prepared per connection, as the
                      gateway does on PostgreSQL (by default it sends each one unnamed: parsed and
                      planned afresh)
  --ref REF           measure the gateway of commit REF, built apart from the working tree
                      (the floor, seeder and harness stay the working tree's)
Output
  --json              print exactly one JSON object on stdout (progress stays on stderr)
  --show-sql          print the statements of one request of each operation on stderr
  --profile           run the gateway under node --cpu-prof and summarise where its CPU time went
  --keep              keep the database afterwards (its URL is printed)
  --render FILE       print the report of an earlier --json run (FILE) as tables, and run nothing
  --database URL      PostgreSQL server to create the database on
                      (default $BENCH_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/postgres)
  --crowd N           the crowd row: N messageAdded subscribers on the gateway (half WebSocket, half
                      SSE; 2000 is the target's size) while REST sends arrive at 50/s for 10 s —
                      memory per idle subscriber, events delivered / expected, fan-out p99 from the
                      202 to the last subscriber, send p99 (default 0: no crowd row); on gateway
                      processes of its own, the subscribers held by client processes (one per 500)
  --crowd-processes P the crowd's gateway processes (default 1); more than one share Redis, hold an
                      even share of the subscribers each, and take the sends in turn
  --crowd-clients K   client processes holding the crowd's subscribers (default one per 500)
  --crowd-warmup S    seconds of sends at the same rate before the measured 10 s, their deliveries
                      left to finish (default 5; 0: the first seconds of a fresh process measured)
  --crowd-transport T both (default: WebSocket and SSE in turn), websocket or sse: what the
                      crowd's subscribers use; the report gives the fan-out p99 over each either way
  --crowd-env LIST    settings for the crowd's gateways, NAME=VALUE,NAME=VALUE (for instance
                      STREAM_FLUSH_MS=0: every write at once)
  --crowd-seconds S   seconds of measured sends of the crowd rows (default 10)
  --mixed-crowd N     the mixed crowd row: N subscribers, ten sessions per user, each user's over 2-3
                      of --mixed-channels channels, half WebSocket, half SSE, channel-wide and
                      channelId- or conversationId-narrowed messageAdded with conversation
                      { assignedToMe }, while REST sends arrive at 50/s over the channels; and one
                      conversationActivity viewer per user while 200 typing reports/s arrive — each
                      subscriber's own events (none foreign, none missing) and assignedToMe, fan-out
                      p99s, memory per idle subscriber (default 0: no such row; 2000 is the target's
                      size); --crowd-processes, --crowd-clients, --crowd-warmup, --crowd-seconds and
                      --crowd-env apply to it too
  --mixed-channels C  the mixed crowd's channels (default 20)
  --mixed-typing R    the mixed crowd's typing reports a second (default 200; 0: none, no viewers)
  --redis URL         the Redis of --crowd-processes 2+ (default $BENCH_REDIS_URL or
                      redis://127.0.0.1:6379)
  --inbox-scale N     the inbox at scale: N more conversations on the channel (made by PostgreSQL,
                      not through the API), then the first inbox page unfiltered against its
                      filtered, searched and sort=last_message pages, p50 one request at a time on
                      the gateway, each judged ≤ 1.5 × the unfiltered page's (default 0: no check)
  --import N          the import row: N generated contacts (100000 is the target's size) imported
                      through POST /contacts/import in requests of 10 000, one at a time, after the
                      other rows; total seconds and rows/s, judged < 60 s per 100 000 (default 0: no row)
  --broadcast N       the broadcast row, last: a webhook channel to a local fake provider, its max rate
                      set by channel:configure --max-rate, N contacts imported, one text broadcast to
                      all of them (POST /broadcasts) while GET /contacts runs at 50/s over 4
                      connections — its duration against N / rate, the most sends the fake took in one
                      second, the gateways' memory growth, that load's p99 against the idle gateways',
                      every recipient sent once (default 0: no row; 10000 is the target's size); on
                      gateway processes of its own, the bench's gateway and floor stopped first
  --broadcast-rate R  the broadcast channel's max rate (default 500)
  --broadcast-processes P  the broadcast row's gateway processes on the one database (default 1)
  --broadcast-limit-seconds S  the fake answers 429 (Retry-After: 1) for S seconds once a third of the
                      recipients are taken (default 0: never)
  --help              this text
`;

export class UsageError extends Error {}

export function parseArgs(argv: string[]): Settings | 'help' {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const valued = new Set(['contacts', 'messages', 'rounds', 'duration', 'warmup', 'connections', 'pool', 'only', 'database', 'ref', 'render', 'crowd', 'crowd-processes', 'crowd-clients', 'crowd-warmup', 'crowd-env', 'crowd-transport', 'crowd-seconds', 'mixed-crowd', 'mixed-channels', 'mixed-typing', 'redis', 'inbox-scale', 'import', 'broadcast', 'broadcast-rate', 'broadcast-processes', 'broadcast-limit-seconds']);
  const bare = new Set(['json', 'scale', 'no-build', 'no-worker', 'no-statements', 'show-sql', 'profile', 'keep', 'help', 'floor-prepared']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new UsageError(`unexpected argument ${arg}`);
    const [, name, inline] = match as unknown as [string, string, string | undefined];
    if (bare.has(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags.add(name);
    } else if (valued.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      values.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name} (see --help)`);
    }
  }
  if (flags.has('help')) return 'help';
  const scale = flags.has('scale');
  const number = (name: string, fallback: number, min: number, integer = true) => {
    const raw = values.get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) throw new UsageError(`--${name} must be ${integer ? 'a whole number' : 'a number'} of at least ${min}`);
    return n;
  };
  const only = values.get('only')?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  for (const id of only) if (!KNOWN.includes(id)) throw new UsageError(`unknown operation ${id}; known: ${KNOWN.join(', ')}`);
  // What channel:configure --max-rate and POST /broadcasts take (docs/broadcasts.md).
  if (number('broadcast-rate', 500, 1) > 10_000) throw new UsageError('--broadcast-rate must be at most 10000 (channel:configure --max-rate)');
  if (number('broadcast', 0, 0) > 100_000) throw new UsageError('--broadcast must be at most 100000 (the recipients of one broadcast)');
  return {
    contacts: number('contacts', scale ? 1_000_000 : 100_000, 100),
    messages: number('messages', scale ? 2_000_000 : 200_000, 100),
    rounds: number('rounds', 3, 1),
    duration: number('duration', 6, 0.5, false),
    warmup: number('warmup', 2, 0, false),
    connections: number('connections', 16, 1),
    pool: number('pool', 10, 1),
    only,
    json: flags.has('json'),
    scale,
    build: !flags.has('no-build'),
    worker: !flags.has('no-worker'),
    statements: !flags.has('no-statements'),
    showSql: flags.has('show-sql'),
    profile: flags.has('profile'),
    keep: flags.has('keep'),
    ref: values.get('ref') ?? null,
    render: values.get('render') ?? null,
    floorPrepared: flags.has('floor-prepared'),
    crowd: number('crowd', 0, 0),
    crowdProcesses: number('crowd-processes', 1, 1),
    crowdClients: number('crowd-clients', 0, 0),
    crowdWarmup: number('crowd-warmup', 5, 0, false),
    crowdTransport: crowdTransport(values.get('crowd-transport')),
    crowdEnv: crowdEnv(values.get('crowd-env')),
    crowdSeconds: number('crowd-seconds', 10, 1),
    mixedCrowd: number('mixed-crowd', 0, 0),
    mixedChannels: number('mixed-channels', 20, 1),
    mixedTyping: number('mixed-typing', 200, 0),
    redis: values.get('redis') ?? process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    inboxScale: number('inbox-scale', 0, 0),
    import: number('import', 0, 0),
    broadcast: number('broadcast', 0, 0),
    broadcastRate: number('broadcast-rate', 500, 1),
    broadcastProcesses: number('broadcast-processes', 1, 1),
    broadcastLimitSeconds: number('broadcast-limit-seconds', 0, 0),
    server: values.get('database') ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}

function crowdTransport(value: string | undefined): CrowdTransport {
  if (value === undefined) return 'both';
  const known = Object.keys(TRANSPORT_NAMES);
  if (!known.includes(value)) throw new UsageError(`--crowd-transport must be one of ${known.join(', ')}, got "${value}"`);
  return value as CrowdTransport;
}

/** `NAME=VALUE,NAME=VALUE` as settings; a malformed pair stops the run. */
function crowdEnv(list: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (list ?? '').split(',').filter(Boolean)) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair.trim());
    if (!match) throw new UsageError(`--crowd-env: expected NAME=VALUE, got "${pair}"`);
    env[match[1]!] = match[2]!;
  }
  return env;
}
