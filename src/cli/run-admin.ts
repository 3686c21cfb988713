import { parseArgs } from 'node:util';
import type { ZodError } from 'zod';
import { openDatabase, type Database } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import type { Env } from '../env.js';
import { DomainError } from '../errors/domain.js';
import { commands } from './commands.js';
import { loadSealer } from '../lib/secrets-key.js';
import { SecretsKeyError, prepareSecrets } from '../modules/secrets/secrets.service.js';
import type { Resolver } from '../lib/outbound-http.js';
import { publishInvalidation } from '../context/credential-invalidation.js';
import type { AdminIo } from './io.js';

export type { AdminIo };

class UsageError extends Error {}

function openFromEnv(env: Env): Promise<Database> {
  return openDatabase({ databaseUrl: env.DATABASE_URL, pgliteDir: env.PGLITE_DIR, poolSize: 2 });
}

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name}${c.summary ? ` ${c.summary}` : ''}`);
  return [
    'usage: npm run admin -- <command> [--flag value]…',
    '',
    'database: PostgreSQL at DATABASE_URL (postgres://…) when it is set;',
    'otherwise the embedded database in PGLITE_DIR (default ./.data/pglite).',
    'A running server holds the embedded database: stop it first.',
    'SECRETS_KEY: the key stored secrets are sealed with (on PostgreSQL, required to create a provider',
    'channel or a webhook secret); give the admin commands the same key as the servers.',
    'PUBLIC_URL: the address providers reach the gateway at; printed inboundUrls are under it',
    '(default http://localhost:PORT).',
    'REDIS_URL, REDIS_PREFIX: as the servers use them, so that revocations reach them at once.',
    '',
    'commands:',
    ...lines,
  ].join('\n');
}

function firstIssue(error: ZodError): string {
  const issue = error.issues[0]!;
  const flag = issue.path[0];
  if (issue.code === 'invalid_type' && issue.input === undefined) return `--${String(flag)} is required`;
  return flag === undefined ? issue.message : `--${String(flag)} ${issue.message}`;
}

/**
 * Runs one admin command. Prints one JSON object on success (exit 0, or the command's own code
 * for a result that is not wholly a success); on bad input one line on stderr (exit 1 for a
 * rejected request, 2 for bad usage).
 */
export async function runAdmin(
  argv: string[],
  env: Env,
  io: AdminIo,
  openDb: () => Promise<Database> = () => openFromEnv(env),
  options: { resolve?: Resolver } = {},
): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    io.stderr('error: no command given; run `npm run admin -- help` for the list');
    return 2;
  }
  if (name === '--help' || name === 'help') {
    io.stdout(usage());
    return 0;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`error: unknown command ${JSON.stringify(name)}; run \`npm run admin -- help\` for the list`);
    return 2;
  }

  let input: unknown;
  try {
    const options = Object.fromEntries(Object.entries(command.flags).map(([flag, type]) => [flag, { type }]));
    const { values } = (() => {
      try {
        return parseArgs({ args: rest, options, strict: true, allowPositionals: false });
      } catch (error) {
        throw new UsageError(`${(error as Error).message.split('\n')[0]} (${name} takes ${command.summary})`);
      }
    })();
    const parsed = command.input.safeParse(values);
    if (!parsed.success) throw new UsageError(firstIssue(parsed.error));
    input = parsed.data;
  } catch (error) {
    io.stderr(`error: ${(error as Error).message}`);
    return 2;
  }

  const db = await openDb().catch(
    (error: Error) => {
      io.stderr(`error: ${error.message.split('\n')[0]}`);
      return null;
    },
  );
  if (!db) return 1;
  try {
    await db.withSession((session) => migrate(session));
    const sealer = loadSealer({ key: env.SECRETS_KEY, previous: env.SECRETS_KEY_PREVIOUS, kind: db.kind, pgliteDir: env.PGLITE_DIR });
    await prepareSecrets(db.prisma, sealer);
    const result = await command.run(db.prisma, input, { env, sealer, io, ...(options.resolve ? { resolve: options.resolve } : {}) });
    const change = command.invalidates?.(input, result);
    // Without Redis there is nobody to tell: servers stop trusting their copies within AUTH_CACHE_MS.
    if (change && env.REDIS_URL) {
      await publishInvalidation(env.REDIS_URL, change, { prefix: env.REDIS_PREFIX }).catch((error: Error) =>
        io.stderr(`warning: done, but running servers were not told through Redis (${error.message.split('\n')[0]}); they refuse the old credential within AUTH_CACHE_MS`),
      );
    }
    io.stdout(JSON.stringify(command.print ? command.print(result) : result));
    return command.exitCode?.(result) ?? 0;
  } catch (error) {
    if (error instanceof DomainError || error instanceof SecretsKeyError) {
      io.stderr(`error: ${error.message}`);
      return 1;
    }
    io.stderr(`error: ${(error as Error).message.split('\n')[0]}`);
    return 1;
  } finally {
    await db.close();
  }
}
