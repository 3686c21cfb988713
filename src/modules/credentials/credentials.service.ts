import { Prisma, type Channel, type PrismaClient, type Workspace } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import type { Db } from '../../db/types.js';
import type { AuthContext, CredentialKind, LiveCredential, ResolvedCredential } from '../../context/types.js';
import { BACKEND_SCOPES, sessionScopes } from '../../context/scopes.js';
import { AuthenticationError, InputError, TokenExpiredError } from '../../errors/domain.js';
import { TOKEN_PREFIX, displayPrefix, generateToken, hashToken } from '../../lib/tokens.js';
import { isUuid } from '../../lib/uuid.js';
import { actAs } from '../../context/act-as.js';

function expiryFrom(expiresInSeconds: number | undefined): Date | null {
  return expiresInSeconds === undefined ? null : new Date(Date.now() + expiresInSeconds * 1000);
}

/** Issues an API key for a channel. Only its hash is stored; the token is returned once. */
export async function issueChannelKey(
  db: Db,
  channel: Pick<Channel, 'id' | 'workspaceId'>,
  expiresInSeconds?: number,
): Promise<{ token: string; expiresAt: Date | null }> {
  const token = generateToken(TOKEN_PREFIX.channelKey);
  const expiresAt = expiryFrom(expiresInSeconds);
  await db.accessToken.create({
    data: {
      workspaceId: channel.workspaceId,
      kind: 'channel_key',
      channelId: channel.id,
      tokenHash: hashToken(token),
      prefix: displayPrefix(token),
      expiresAt,
    },
  });
  return { token, expiresAt };
}

/** Creates a connection over channels of one workspace, with its token (returned once). */
export async function createConnection(
  prisma: PrismaClient,
  input: { workspaceId: string; name: string; channelIds: string[]; expiresInSeconds?: number | undefined },
): Promise<{ id: string; token: string; expiresAt: Date | null }> {
  const channelIds = [...new Set(input.channelIds.map((id) => id.toLowerCase()))];
  const invalid = channelIds.filter((id) => !isUuid(id));
  if (invalid.length) throw new InputError(`Not a channel id: ${invalid.join(', ')}.`);
  const found = await prisma.channel.findMany({
    where: { id: { in: channelIds }, workspaceId: input.workspaceId },
    select: { id: true },
  });
  const missing = channelIds.filter((id) => !found.some((c) => c.id === id));
  if (missing.length) throw new InputError(`No channel of this workspace has id ${missing.join(', ')}.`);

  const token = generateToken(TOKEN_PREFIX.connection);
  const expiresAt = expiryFrom(input.expiresInSeconds);
  const connection = await prisma.connection.create({
    data: {
      workspaceId: input.workspaceId,
      name: input.name,
      channels: { create: channelIds.map((channelId) => ({ channelId })) },
      accessTokens: {
        create: {
          workspaceId: input.workspaceId,
          kind: 'connection',
          tokenHash: hashToken(token),
          prefix: displayPrefix(token),
          expiresAt,
        },
      },
    },
  });
  return { id: connection.id, token, expiresAt };
}

/**
 * Revokes a token and every session it minted (docs/browser-apps.md), in one transaction. Answers the
 * revoked credential's id, which running servers are told of.
 */
export async function revokeToken(prisma: PrismaClient, token: string): Promise<{ id: string }> {
  const tokenHash = hashToken(token);
  return prisma.$transaction(async (tx) => {
    const found = await tx.accessToken.findUnique({ where: { tokenHash }, select: { id: true } });
    if (!found) throw new InputError('No such token.');
    const revokedAt = new Date();
    const { count } = await tx.accessToken.updateMany({ where: { id: found.id, revokedAt: null }, data: { revokedAt } });
    if (count === 0) throw new InputError('That token is already revoked.');
    await tx.accessToken.updateMany({ where: { mintedById: found.id, revokedAt: null }, data: { revokedAt } });
    return found;
  });
}


/**
 * Of the credentials `ids`, those that are neither revoked nor (for a session) minted by a
 * credential that is revoked or expired, each with whether it has expired and the active channels
 * it can act as now; a credential left with no channel is absent. Open streams ask this again when
 * their credential may have changed (src/realtime/credential-watch.ts): one statement for any
 * number of them.
 */
export async function liveCredentials(sql: RunSql, ids: readonly string[], now: Date = new Date()): Promise<Map<string, LiveCredential>> {
  const live = new Map<string, LiveCredential>();
  if (!ids.length) return live;
  const rows = await sql<{ credential_id: string; expired: boolean; channel_id: string }>(Prisma.sql`
    SELECT t.id AS credential_id, (t.expires_at IS NOT NULL AND t.expires_at <= ${now}::timestamptz) AS expired, c.id AS channel_id
      FROM access_tokens t
      LEFT JOIN access_tokens p ON p.id = t.minted_by_id
      LEFT JOIN connection_channels l ON l.connection_id = COALESCE(p.connection_id, t.connection_id)
      JOIN channels c ON c.id = COALESCE(l.channel_id, p.channel_id, t.channel_id)
     WHERE t.id = ANY(${[...ids]}::uuid[])
       AND t.revoked_at IS NULL
       AND ${mintedByHolds(now)}
       AND (t.minted_by_id IS NULL OR c.id = ANY(t.channel_ids))
       AND c.status = 'active'
       AND c.workspace_id = t.workspace_id`);
  for (const row of rows) {
    let entry = live.get(row.credential_id);
    if (!entry) live.set(row.credential_id, (entry = { expired: row.expired, channels: new Set() }));
    entry.channels.add(row.channel_id);
  }
  return live;
}

/**
 * A session holds only while the credential that minted it does: revoking or expiring a channel
 * key or a connection token revokes every session it minted (docs/browser-apps.md).
 */
function mintedByHolds(now: Date) {
  return Prisma.sql`(t.minted_by_id IS NULL OR (p.revoked_at IS NULL AND (p.expires_at IS NULL OR p.expires_at > ${now}::timestamptz)))`;
}

interface CredentialRow {
  credential_id: string;
  kind: CredentialKind;
  connection_id: string | null;
  expires_at: Date | null;
  minted_by_id: string | null;
  minted_by_expires_at: Date | null;
  scopes: string[] | null;
  origins: string[] | null;
  user_id: string | null;
  user_name: string | null;
  user_email: string | null;
  workspace_id: string;
  workspace_hostname: string;
  workspace_name: string;
  workspace_trusted_documents_only: boolean;
  workspace_created_at: Date;
  workspace_updated_at: Date;
  id: string;
  name: string;
  type: Channel['type'];
  status: Channel['status'];
  webhook_url: string | null;
  webhook_secret: string | null;
  provider: Channel['provider'];
  provider_settings: Channel['providerSettings'];
  provider_secrets: string | null;
  max_rate_per_second: number | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The credential behind a token hash at `host`, or null when it admits nothing: an unknown or
 * revoked token, another workspace's host, a session whose minting credential is revoked or
 * expired, or no active channel of its own workspace to act as. An expired credential is
 * answered all the same, with its `expiresAt`, so that the caller can tell it apart
 * (TOKEN_EXPIRED) without asking again. One statement: a row per channel, each carrying the
 * token, its workspace and, for a session, its user. A session's channels are those it was
 * minted for that its minting credential can still act as.
 */
export async function resolveCredential(
  sql: RunSql,
  request: { host: string; tokenHash: string },
  now: Date = new Date(),
): Promise<ResolvedCredential | null> {
  const rows = await sql<CredentialRow>(Prisma.sql`
    SELECT t.id AS credential_id, t.kind::text AS kind, COALESCE(p.connection_id, t.connection_id) AS connection_id, t.expires_at,
           t.minted_by_id, p.expires_at AS minted_by_expires_at, t.scopes, t.origins,
           u.id AS user_id, u.name AS user_name, u.email AS user_email,
           w.id AS workspace_id, w.hostname AS workspace_hostname, w.name AS workspace_name,
           w.trusted_documents_only AS workspace_trusted_documents_only, w.created_at AS workspace_created_at, w.updated_at AS workspace_updated_at,
           c.id, c.name, c.type::text AS type, c.status::text AS status, c.webhook_url, c.webhook_secret,
           c.provider::text AS provider, c.provider_settings, c.provider_secrets, c.max_rate_per_second, c.created_at, c.updated_at
      FROM access_tokens t
      JOIN workspaces w ON w.id = t.workspace_id
      LEFT JOIN access_tokens p ON p.id = t.minted_by_id
      LEFT JOIN users u ON u.id = t.user_id
      LEFT JOIN connection_channels l ON l.connection_id = COALESCE(p.connection_id, t.connection_id)
      JOIN channels c ON c.id = COALESCE(l.channel_id, p.channel_id, t.channel_id)
     WHERE t.token_hash = ${request.tokenHash}
       AND w.hostname = ${request.host}
       AND t.revoked_at IS NULL
       AND ${mintedByHolds(now)}
       AND (t.minted_by_id IS NULL OR c.id = ANY(t.channel_ids))
       AND c.status = 'active'
       AND c.workspace_id = t.workspace_id
     ORDER BY l.created_at, c.id`);
  const first = rows[0];
  if (!first) return null;
  const session = first.kind === 'session';
  return {
    workspace: {
      id: first.workspace_id,
      hostname: first.workspace_hostname,
      name: first.workspace_name,
      trustedDocumentsOnly: first.workspace_trusted_documents_only,
      createdAt: first.workspace_created_at,
      updatedAt: first.workspace_updated_at,
    },
    credential: {
      id: first.credential_id,
      kind: first.kind,
      scopes: session ? sessionScopes(first.scopes ?? []) : BACKEND_SCOPES,
      user: session && first.user_id ? { id: first.user_id, name: first.user_name!, email: first.user_email! } : null,
      origins: session ? (first.origins ?? []) : [],
      mintedById: first.minted_by_id,
    },
    channels: rows.map((row) => ({
      id: row.id,
      workspaceId: row.workspace_id,
      name: row.name,
      type: row.type,
      status: row.status,
      webhookUrl: row.webhook_url,
      webhookSecret: row.webhook_secret,
      provider: row.provider,
      providerSettings: row.provider_settings,
      providerSecrets: row.provider_secrets,
      maxRatePerSecond: row.max_rate_per_second,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    })),
    connectionId: first.connection_id,
    expiresAt: first.expires_at,
    mintedByExpiresAt: first.minted_by_expires_at,
  };
}

/**
 * Resolves the caller of a request: the workspace named by the host, the
 * credential behind the bearer token, and the channel it acts as. Every failure
 * is the same AuthenticationError, so a caller learns nothing about which part
 * was wrong. One statement.
 */
export async function authenticate(
  sql: RunSql,
  request: { host: string | null; bearer: string | null; channelHeader: string | null },
): Promise<AuthContext> {
  const { host, bearer, channelHeader } = request;
  if (!host || !bearer) throw new AuthenticationError();
  const resolved = await resolveCredential(sql, { host, tokenHash: hashToken(bearer) });
  if (!resolved) throw new AuthenticationError();
  return actAs(resolved, channelHeader);
}
