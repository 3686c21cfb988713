import { z } from 'zod';
import { parseKey } from './lib/sealed.js';
import { DEFAULT_REDIS_PREFIX } from './lib/redis.js';

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], { error: 'expected 1 or 0 (true/false, yes/no, on/off)' })
  .transform((v) => v === '1' || v === 'true' || v === 'yes' || v === 'on');

/**
 * A whole number within bounds; the one message states the rule whatever is wrong
 * (not a number, a fraction, out of range). Millisecond settings stay below
 * 2^31 ms because Node's timers treat anything larger as 1 ms.
 */
function wholeNumber(min: number, max: number, what = 'a whole number') {
  const rule = `expected ${what} from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, rule)
    .transform(Number)
    .refine((n) => n >= min && n <= max, rule);
}

const DAY_MS = 86_400_000;

/** An http(s) URL an operator sets (a provider API's base), without a trailing slash. */
const httpUrl = z
  .string()
  .trim()
  .refine((value) => {
    try {
      return ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, 'expected an http(s) URL')
  .transform((value) => value.replace(/\/+$/, ''));

/** OTLP over HTTP, as protobuf (the standard's default) or JSON; gRPC is not served. */
const otlpProtocol = z.enum(['http/protobuf', 'http/json'], { error: 'expected http/protobuf or http/json (OTLP over HTTP)' });

const secretsKey = z
  .string()
  .refine((value) => parseKey(value) !== null, 'expected base64 of 32 random bytes, e.g. the output of `openssl rand -base64 32`')
  .transform((value) => parseKey(value)!);

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test'], { error: 'expected development, production or test' }).default('development'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
    .optional(),
  PGLITE_DIR: z.string().default('./.data/pglite'),
  PORT: wholeNumber(0, 65535, 'a port number').default(4000),
  HOST: z.string().default('127.0.0.1'),
  MIGRATE_ON_START: flag.default(true),
  /** Resolved by database kind when unset: see `seedDemoEnabled`. */
  SEED_DEMO: flag.optional(),
  TRUST_PROXY: flag.default(false),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'expected fatal, error, warn, info, debug, trace or silent' })
    .default('info'),
  GRAPHQL_INTROSPECTION: flag.optional(),
  BODY_LIMIT_BYTES: wholeNumber(1, 1024 * 1024 * 1024, 'a whole number of bytes').default(1024 * 1024),
  /** How long an idle keep-alive connection is kept open for the client's next request (src/http/server.ts). */
  HTTP_KEEP_ALIVE_MS: wholeNumber(1000, 600_000, 'a whole number of milliseconds').default(65_000),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'expected a redis:// or rediss:// URL').optional(),
  /** Put before every Redis key and pub/sub channel, so that deployments may share one Redis. */
  REDIS_PREFIX: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_.:{}-]{1,64}$/, 'expected 1 to 64 letters, digits or _ . : { } -, e.g. connect-staging:')
    .default(DEFAULT_REDIS_PREFIX),
  DB_CONNECT_TIMEOUT_S: wholeNumber(0, 3600, 'a whole number of seconds').default(30),
  CORS_ORIGINS: z
    .string()
    .transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean))
    .optional(),
  DB_POOL_SIZE: wholeNumber(1, 200).default(10),
  GRAPHQL_MAX_COST: wholeNumber(100, 10_000_000, 'a whole number').default(10_000),
  RATE_LIMIT_PER_MINUTE: wholeNumber(0, 1_000_000, 'a whole number of requests').default(600),
  /** Each browser session's own budget (docs/browser-apps.md); unset: RATE_LIMIT_PER_MINUTE. */
  SESSION_RATE_LIMIT_PER_MINUTE: wholeNumber(0, 1_000_000, 'a whole number of requests').optional(),
  AUTH_CACHE_MS: wholeNumber(0, 60_000, 'a whole number of milliseconds').default(5000),
  SUBSCRIPTION_MAX_PENDING: wholeNumber(1, 1_000_000, 'a whole number of events').default(1000),
  /** How often at most a subscription stream's connection is written, its writes of the interval together (src/realtime/coalesce.ts); 0: at once. */
  STREAM_FLUSH_MS: wholeNumber(0, 1000, 'a whole number of milliseconds').default(100),
  WS_KEEPALIVE_MS: wholeNumber(1000, 600_000, 'a whole number of milliseconds').default(12_000),
  /** Single-connection SSE reservations one credential may hold open at once (src/realtime/sse.ts). */
  SSE_RESERVATIONS_PER_CREDENTIAL: wholeNumber(1, 10_000, 'a whole number of reservations').default(10),
  /** Single-connection SSE reservations the process holds at once, past which a new one is refused. */
  SSE_RESERVATIONS_MAX: wholeNumber(1, 10_000_000, 'a whole number of reservations').default(100_000),
  /** What may wait for one subscriber's connection (WebSocket or event stream) before its client, which does not read, is cut off (src/realtime/writer.ts). */
  STREAM_MAX_BUFFERED_BYTES: wholeNumber(1024, 1024 * 1024 * 1024, 'a whole number of bytes').default(4 * 1024 * 1024),
  DB_STATEMENT_TIMEOUT_MS: wholeNumber(100, 3_600_000, 'a whole number of milliseconds').default(10_000),
  DB_TRANSACTION_TIMEOUT_MS: wholeNumber(100, 3_600_000, 'a whole number of milliseconds').default(15_000),
  DB_PREPARED_STATEMENTS: flag.default(true),
  DELIVERY_WORKER: flag.default(true),
  DELIVERY_POLL_MS: wholeNumber(10, 3_600_000, 'a whole number of milliseconds').default(1000),
  DELIVERY_LEASE_MS: wholeNumber(100, DAY_MS, 'a whole number of milliseconds').default(30_000),
  DELIVERY_BACKOFF_MS: wholeNumber(1, DAY_MS, 'a whole number of milliseconds').default(1000),
  DELIVERY_MAX_BACKOFF_MS: wholeNumber(1, DAY_MS, 'a whole number of milliseconds').default(3_600_000),
  DELIVERY_TIMEOUT_MS: wholeNumber(100, 600_000, 'a whole number of milliseconds').default(10_000),
  /** Resolved by NODE_ENV when unset: see `privateTargets`. */
  WEBHOOK_PRIVATE_TARGETS: z.enum(['allow', 'deny'], { error: 'expected allow or deny' }).optional(),
  /** Resolved by PORT when unset: see `publicUrl`. */
  PUBLIC_URL: z
    .string()
    .trim()
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && !url.search && !url.hash;
      } catch {
        return false;
      }
    }, 'expected the http(s) base URL the gateway is reached at, e.g. https://connect.example.com')
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  WHATSAPP_API_URL: httpUrl.default('https://graph.facebook.com'),
  WHATSAPP_API_VERSION: z.string().trim().regex(/^v\d+\.\d+$/, 'expected a Graph API version such as v21.0').default('v21.0'),
  TWILIO_API_URL: httpUrl.default('https://api.twilio.com'),
  /** The inbound SMTP listener's port (unset: no listener) and address (unset: HOST). */
  SMTP_INBOUND_PORT: wholeNumber(0, 65535, 'a port number').optional(),
  SMTP_INBOUND_HOST: z.string().trim().min(1).optional(),
  /** Connections the inbound SMTP listener holds at once; one more is answered 421. */
  SMTP_MAX_CLIENTS: wholeNumber(1, 100_000, 'a whole number of connections').default(100),
  /** How long one inbound SMTP connection may last, however slowly it sends. */
  SMTP_SESSION_TIMEOUT_S: wholeNumber(10, 86_400, 'a whole number of seconds').default(120),
  /** PEM files of the certificate and key STARTTLS is offered with (both or neither). */
  SMTP_INBOUND_TLS_CERT: z.string().trim().min(1).optional(),
  SMTP_INBOUND_TLS_KEY: z.string().trim().min(1).optional(),
  /** Base64 of 32 bytes: stored secrets are sealed with it (src/lib/sealed.ts). */
  SECRETS_KEY: secretsKey.optional(),
  /** The key being rotated away from: values sealed with it can still be opened. */
  SECRETS_KEY_PREVIOUS: secretsKey.optional(),
  /**
   * OpenTelemetry (docs/operations.md#tracing): spans are exported only when an OTLP endpoint is
   * set. The SDK reads these and the other standard OTEL_* variables itself; the ones the server
   * decides by are checked here, so that a bad value stops the start with its rule.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  OTEL_SDK_DISABLED: flag.default(false),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('connect-gateway'),
});

export type Env = z.infer<typeof envSchema>;

/** The certificate and its key come together: one without the other is refused at start. */
function tlsPair(env: Env): string[] {
  if ((env.SMTP_INBOUND_TLS_CERT === undefined) === (env.SMTP_INBOUND_TLS_KEY === undefined)) return [];
  const [given, missing] = env.SMTP_INBOUND_TLS_CERT === undefined ? ['SMTP_INBOUND_TLS_KEY', 'SMTP_INBOUND_TLS_CERT'] : ['SMTP_INBOUND_TLS_CERT', 'SMTP_INBOUND_TLS_KEY'];
  return [`${given}: needs ${missing} too (the certificate and its key are set together)`];
}

/** Every bad variable, each with its rule; the message is one line. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
  }
}

/** Variables still read under an earlier name while the current one is unset (docs/operations.md). */
const EARLIER_NAMES: Readonly<Record<string, string>> = { STREAM_MAX_BUFFERED_BYTES: 'WS_MAX_BUFFERED_BYTES' };

/** Parses the environment once. Empty values count as unset. */
export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const present: Record<string, string | undefined> = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  for (const [name, earlier] of Object.entries(EARLIER_NAMES)) {
    if (present[name] === undefined && present[earlier] !== undefined) present[name] = present[earlier];
  }
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  const pair = tlsPair(parsed.data);
  if (pair.length) throw new ConfigError(pair);
  return parsed.data;
}

/**
 * The deadline of one provider attempt must end before the attempt's lease does (docs/operating-safely.md, Staying up):
 * otherwise another worker may claim and send a message while the first still waits for its
 * provider. Checked when a server starts (its workers attempt deliveries), not by the admin
 * commands. Null when the two agree.
 */
export function deliveryTimingProblem(env: Pick<Env, 'DELIVERY_TIMEOUT_MS' | 'DELIVERY_LEASE_MS'>): string | null {
  if (env.DELIVERY_TIMEOUT_MS < env.DELIVERY_LEASE_MS) return null;
  return (
    `DELIVERY_TIMEOUT_MS (${env.DELIVERY_TIMEOUT_MS}) must be shorter than DELIVERY_LEASE_MS (${env.DELIVERY_LEASE_MS}): ` +
    'an attempt still waiting for its provider when its lease ends could be sent again by another worker'
  );
}

/**
 * Whether spans are exported (docs/operations.md#tracing): an OTLP endpoint is set (for all
 * signals or for traces) and the SDK is not disabled. Otherwise the SDK is never loaded.
 */
export function tracingEnabled(env: Pick<Env, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SDK_DISABLED'>): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && !env.OTEL_SDK_DISABLED;
}

export function introspectionEnabled(env: Env): boolean {
  return env.GRAPHQL_INTROSPECTION ?? env.NODE_ENV !== 'production';
}

/** The demo workspace is on by default where a newcomer starts (the embedded database), off on PostgreSQL. */
export function seedDemoEnabled(env: Env, kind: 'postgres' | 'pglite'): boolean {
  return env.SEED_DEMO ?? kind === 'pglite';
}

/**
 * Whether webhook and event subscription URLs may reach private addresses (docs/operating-safely.md, Outbound targets): refused
 * by default in production, allowed otherwise (a local receiver while developing).
 */
export function privateTargets(env: Pick<Env, 'WEBHOOK_PRIVATE_TARGETS' | 'NODE_ENV'>): 'allow' | 'deny' {
  return env.WEBHOOK_PRIVATE_TARGETS ?? (env.NODE_ENV === 'production' ? 'deny' : 'allow');
}

/** The gateway's externally visible base URL (docs/channels.md): inbound URLs are printed and signatures checked under it. */
export function publicUrl(env: Pick<Env, 'PUBLIC_URL' | 'PORT'>): string {
  return env.PUBLIC_URL ?? `http://localhost:${env.PORT}`;
}
