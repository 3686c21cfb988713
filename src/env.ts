import { z } from 'zod';

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], { error: 'expected 1 or 0 (true/false)' })
  .transform((v) => v === '1' || v === 'true' || v === 'yes' || v === 'on');

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
    .optional(),
  PGLITE_DIR: z.string().min(1).default('./.data/pglite'),
  PORT: z.coerce.number({ error: 'expected a port number' }).int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  MIGRATE_ON_START: flag.default(true),
  SEED_DEMO: flag.default(false),
  TRUST_PROXY: flag.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  GRAPHQL_INTROSPECTION: flag.optional(),
  BODY_LIMIT_BYTES: z.coerce.number({ error: 'expected a number of bytes' }).int().positive().default(1024 * 1024),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'expected a redis:// URL').optional(),
  DB_CONNECT_TIMEOUT_S: z.coerce.number({ error: 'expected whole seconds from 0 to 3600' }).int().min(0).max(3600).default(30),
  CORS_ORIGINS: z
    .string()
    .transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean))
    .optional(),
  DB_POOL_SIZE: z.coerce.number({ error: 'expected a number' }).int().min(1).max(200).default(10),
  DELIVERY_WORKER: flag.default(true),
  DELIVERY_POLL_MS: z.coerce.number({ error: 'expected milliseconds' }).int().min(10).default(1000),
  DELIVERY_LEASE_MS: z.coerce.number({ error: 'expected milliseconds' }).int().min(100).default(30_000),
  DELIVERY_BACKOFF_MS: z.coerce.number({ error: 'expected milliseconds' }).int().min(1).default(1000),
  DELIVERY_TIMEOUT_MS: z.coerce.number({ error: 'expected milliseconds' }).int().min(100).default(10_000),
});

export type Env = z.infer<typeof envSchema>;

export class ConfigError extends Error {}

/** Parses the environment once. Empty values count as unset. */
export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const present = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

export function introspectionEnabled(env: Env): boolean {
  return env.GRAPHQL_INTROSPECTION ?? env.NODE_ENV !== 'production';
}
