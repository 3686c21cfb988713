import { Prisma, type Channel, type PrismaClient, type Workspace } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import type { Db } from '../../db/types.js';
import type { AuthContext, ResolvedCredential } from '../../context/types.js';
import { AuthenticationError, InputError } from '../../errors/domain.js';
import { TOKEN_PREFIX, displayPrefix, generateToken, hashToken } from '../../lib/tokens.js';
import { isUuid } from '../../lib/uuid.js';

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

export async function revokeToken(prisma: PrismaClient, token: string): Promise<void> {
  const { count } = await prisma.accessToken.updateMany({
    where: { tokenHash: hashToken(token), revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (count === 0) {
    const known = await prisma.accessToken.findUnique({ where: { tokenHash: hashToken(token) }, select: { id: true } });
    throw new InputError(known ? 'That token is already revoked.' : 'No such token.');
  }
}

/**
 * Whether the credential behind `auth` still admits what `authenticate` admitted: not revoked,
 * not expired, and its acting channel (with none chosen, any of its channels) still active and
 * still reachable through it. Long-lived requests ask this again while they run. One query.
 */
export async function credentialStillValid(prisma: PrismaClient, auth: AuthContext): Promise<boolean> {
  const channel = {
    workspaceId: auth.workspace.id,
    status: 'active' as const,
    ...(auth.channel ? { id: auth.channel.id } : { id: { in: auth.channels.map((c) => c.id) } }),
  };
  const found = await prisma.accessToken.findFirst({
    where: {
      id: auth.credential.id,
      workspaceId: auth.workspace.id,
      revokedAt: null,
      OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
      ...(auth.credential.kind === 'channel_key' ? { channel } : { connection: { channels: { some: { channel } } } }),
    },
    select: { id: true },
  });
  return found !== null;
}

interface CredentialRow {
  credential_id: string;
  kind: 'channel_key' | 'connection';
  connection_id: string | null;
  expires_at: Date | null;
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
  created_at: Date;
  updated_at: Date;
}

/**
 * The credential behind a token hash at `host`, or null when it admits nothing: an unknown,
 * revoked or expired token, another workspace's host, or no active channel of its own workspace
 * to act as. One statement: a row per channel, each carrying the token and its workspace.
 */
export async function resolveCredential(
  sql: RunSql,
  request: { host: string; tokenHash: string },
  now: Date = new Date(),
): Promise<ResolvedCredential | null> {
  const rows = await sql<CredentialRow>(Prisma.sql`
    SELECT t.id AS credential_id, t.kind::text AS kind, t.connection_id, t.expires_at,
           w.id AS workspace_id, w.hostname AS workspace_hostname, w.name AS workspace_name,
           w.trusted_documents_only AS workspace_trusted_documents_only, w.created_at AS workspace_created_at, w.updated_at AS workspace_updated_at,
           c.id, c.name, c.type::text AS type, c.status::text AS status, c.webhook_url, c.webhook_secret,
           c.provider::text AS provider, c.provider_settings, c.provider_secrets, c.created_at, c.updated_at
      FROM access_tokens t
      JOIN workspaces w ON w.id = t.workspace_id
      LEFT JOIN connection_channels l ON t.kind = 'connection' AND l.connection_id = t.connection_id
      JOIN channels c ON c.id = CASE WHEN t.kind = 'channel_key' THEN t.channel_id ELSE l.channel_id END
     WHERE t.token_hash = ${request.tokenHash}
       AND w.hostname = ${request.host}
       AND t.revoked_at IS NULL
       AND (t.expires_at IS NULL OR t.expires_at > ${now}::timestamptz)
       AND c.status = 'active'
       AND c.workspace_id = t.workspace_id
     ORDER BY l.created_at, c.id`);
  const first = rows[0];
  if (!first) return null;
  return {
    workspace: {
      id: first.workspace_id,
      hostname: first.workspace_hostname,
      name: first.workspace_name,
      trustedDocumentsOnly: first.workspace_trusted_documents_only,
      createdAt: first.workspace_created_at,
      updatedAt: first.workspace_updated_at,
    },
    credential: { id: first.credential_id, kind: first.kind },
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
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    })),
    connectionId: first.connection_id,
    expiresAt: first.expires_at,
  };
}

/**
 * The request's caller from a resolved credential and its X-Channel-Uuid: the named channel,
 * which must be one the credential can act as, or without the header its only channel.
 */
export function actAs(resolved: ResolvedCredential, channelHeader: string | null): AuthContext {
  const { workspace, credential, channels } = resolved;
  let channel: Channel | null;
  if (channelHeader !== null) {
    const wanted = channelHeader.trim().toLowerCase();
    channel = channels.find((c) => c.id === wanted) ?? null;
    if (!channel) throw new AuthenticationError();
  } else {
    channel = channels.length === 1 ? channels[0]! : null;
  }
  return { workspace, credential, channels, channel };
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
