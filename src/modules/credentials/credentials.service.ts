import type { Channel, PrismaClient } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import type { AuthContext } from '../../context/types.js';
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

/**
 * Resolves the caller of a request: the workspace named by the host, the
 * credential behind the bearer token, and the channel it acts as. Every failure
 * is the same AuthenticationError, so a caller learns nothing about which part
 * was wrong. One query.
 */
export async function authenticate(
  prisma: PrismaClient,
  request: { host: string | null; bearer: string | null; channelHeader: string | null },
): Promise<AuthContext> {
  const { host, bearer, channelHeader } = request;
  if (!host || !bearer) throw new AuthenticationError();
  const token = await prisma.accessToken.findUnique({
    where: { tokenHash: hashToken(bearer) },
    include: {
      workspace: true,
      channel: true,
      connection: { include: { channels: { include: { channel: true }, orderBy: { createdAt: 'asc' } } } },
    },
  });
  const now = Date.now();
  if (!token || token.workspace.hostname !== host || token.revokedAt || (token.expiresAt && token.expiresAt.getTime() <= now)) {
    throw new AuthenticationError();
  }
  const candidates = token.kind === 'channel_key' ? [token.channel] : (token.connection?.channels.map((link) => link.channel) ?? []);
  const channels = candidates.filter(
    (channel): channel is Channel => !!channel && channel.status === 'active' && channel.workspaceId === token.workspaceId,
  );
  if (channels.length === 0) throw new AuthenticationError();

  let channel: Channel | null;
  if (channelHeader !== null) {
    channel = channels.find((c) => c.id === channelHeader.trim().toLowerCase()) ?? null;
    if (!channel) throw new AuthenticationError();
  } else {
    channel = channels.length === 1 ? channels[0]! : null;
  }
  return {
    workspace: token.workspace,
    credential: { id: token.id, kind: token.kind },
    channels,
    channel,
  };
}
