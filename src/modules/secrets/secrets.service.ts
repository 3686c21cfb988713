import type { Db } from '../../db/types.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isSealed, SealError, sealedKeyId, type Sealer } from '../../lib/sealed.js';

/** Why a secret cannot be stored on PostgreSQL without SECRETS_KEY: one line an operator can act on. */
export const SECRETS_KEY_REQUIRED =
  'SECRETS_KEY is required to store secrets on PostgreSQL: set it to base64 of 32 random bytes (openssl rand -base64 32) for every process and admin command';

/** The sealer, or the refusal to store a secret without one. */
export function requireSealer(sealer: Sealer | null | undefined): Sealer {
  if (!sealer) throw new InputError(SECRETS_KEY_REQUIRED);
  return sealer;
}

/** A stored secret that cannot be opened: the process must not run on it (one line, naming the setting). */
export class SecretsKeyError extends Error {
  override name = 'SecretsKeyError';
}

/** Every stored secret: a column of a table, by row id. */
const SECRET_COLUMNS = [
  { table: 'channels', column: 'webhook_secret' },
  { table: 'channels', column: 'provider_secrets' },
  { table: 'webhook_endpoints', column: 'secret' },
] as const;

interface StoredSecret {
  table: (typeof SECRET_COLUMNS)[number]['table'];
  column: (typeof SECRET_COLUMNS)[number]['column'];
  id: string;
  value: string;
}

async function storedSecrets(db: Db): Promise<StoredSecret[]> {
  const rows: StoredSecret[] = [];
  for (const { table, column } of SECRET_COLUMNS) {
    const found = await db.$queryRawUnsafe<{ id: string; value: string }[]>(`SELECT id::text AS id, ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL`);
    rows.push(...found.map((row) => ({ table, column, id: row.id, value: row.value })));
  }
  return rows;
}

async function store(db: Db, secret: StoredSecret, value: string): Promise<void> {
  // Only if it is still the value read: a concurrent change wins.
  await db.$executeRawUnsafe(`UPDATE ${secret.table} SET ${secret.column} = $1 WHERE id = $2::uuid AND ${secret.column} = $3`, value, secret.id, secret.value);
}

/**
 * Made ready at every start and admin run, after the migrations: a key that cannot open what is
 * stored is refused (SecretsKeyError: a wrong key is found now, not by a failed delivery later),
 * and secrets stored in clear before sealing existed are sealed. Without a sealer (PostgreSQL,
 * no SECRETS_KEY) there must be no stored secret at all. Returns how many were sealed.
 */
export async function prepareSecrets(prisma: PrismaClient, sealer: Sealer | null): Promise<{ sealed: number }> {
  const secrets = await storedSecrets(prisma);
  if (!sealer) {
    if (secrets.length) {
      throw new SecretsKeyError(
        `SECRETS_KEY is not set, but the database holds ${secrets.length} stored secret(s): set SECRETS_KEY to the key they were sealed with (a new one for secrets stored before sealing)`,
      );
    }
    return { sealed: 0 };
  }
  const checked = new Set<string>();
  for (const secret of secrets) {
    const id = sealedKeyId(secret.value);
    if (id === null || checked.has(id)) continue;
    checked.add(id);
    if (!sealer.knows(id)) {
      throw new SecretsKeyError(
        `SECRETS_KEY does not open the stored secrets: they were sealed with key ${id}, and SECRETS_KEY is key ${sealer.currentKeyId}; set SECRETS_KEY to that key (and SECRETS_KEY_PREVIOUS to the old one during a rotation)`,
      );
    }
    try {
      sealer.open(secret.value);
    } catch (error) {
      throw new SecretsKeyError(`SECRETS_KEY: ${(error as SealError).message} (${secret.table}.${secret.column} of ${secret.id})`);
    }
  }
  let sealed = 0;
  for (const secret of secrets) {
    if (isSealed(secret.value)) continue;
    await store(prisma, secret, sealer.seal(secret.value));
    sealed++;
  }
  return { sealed };
}

/** Re-seals every stored secret with the current key (SECRETS_KEY), opening old ones with SECRETS_KEY_PREVIOUS. */
export async function resealSecrets(prisma: PrismaClient, sealer: Sealer): Promise<{ resealed: number; kept: number }> {
  let resealed = 0;
  let kept = 0;
  await prisma.$transaction(async (tx) => {
    for (const secret of await storedSecrets(tx)) {
      const next = sealer.reseal(secret.value);
      if (next === secret.value) {
        kept++;
        continue;
      }
      await store(tx, secret, next);
      resealed++;
    }
  });
  return { resealed, kept };
}
