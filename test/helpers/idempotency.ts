import pg from 'pg';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { hashToken } from '../../src/lib/tokens.js';

/**
 * Holds the claim of `key` on `route` for the credential of `apiKey` in an open transaction on a
 * connection of its own, as a request still running would; `release` rolls it back and disconnects.
 */
export async function holdIdempotencyKey(
  prisma: PrismaClient,
  databaseUrl: string,
  claim: { apiKey: string; route: string; key: string },
): Promise<{ release(): Promise<void> }> {
  const token = await prisma.accessToken.findUniqueOrThrow({ where: { tokenHash: hashToken(claim.apiKey) } });
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  const release = async () => {
    try {
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
  };
  try {
    await holder.query('BEGIN');
    await holder.query(
      `INSERT INTO idempotency_keys (id, credential_id, route, key, request_hash) VALUES (gen_random_uuid(), $1, $2, $3, repeat('0', 64))`,
      [token.id, claim.route, claim.key],
    );
  } catch (error) {
    await release();
    throw error;
  }
  return { release };
}
