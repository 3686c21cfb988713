import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { RequestContext } from '../../context/types.js';
import { DEFAULT_SESSION_SCOPES, SESSION_SCOPES, requireScope } from '../../context/scopes.js';
import { NotFoundError, ValidationError } from '../../errors/domain.js';
import { toPage, type Cursor, type Page } from '../../lib/pagination.js';
import { TOKEN_PREFIX, displayPrefix, generateToken, hashToken } from '../../lib/tokens.js';
import { isoTimestamp } from '../../lib/time.js';
import { isUuid, uuid7 } from '../../lib/uuid.js';
import { parseInput } from '../../lib/validation.js';
import { MESSAGES, SESSION_TTL, createSessionSchema, type MintedSessionView, type SessionView } from './sessions.schemas.js';

/*
 * Browser sessions (docs/browser-apps.md): short-lived, scoped tokens a backend credential mints for one
 * workspace user. A session is an access token of kind `session`: it authenticates like the
 * others (src/modules/credentials/credentials.service.ts), holds only while the credential that
 * minted it holds, and is listed and revoked here — by a backend credential over the sessions
 * whose channels it can all act as, or by an operator over a whole workspace.
 */

/** A stored session as its views need it. */
export interface SessionRow {
  id: string;
  user: { id: string; name: string; email: string };
  scopes: string[];
  channelIds: string[];
  origins: string[];
  expiresAt: Date;
  createdAt: Date;
}

export function sessionView(row: SessionRow): SessionView {
  return {
    id: row.id,
    user: row.user,
    scopes: SESSION_SCOPES.filter((scope) => row.scopes.includes(scope)),
    channels: row.channelIds,
    origins: row.origins,
    expiresAt: isoTimestamp(row.expiresAt),
    createdAt: isoTimestamp(row.createdAt),
  };
}

export function mintedSessionView(row: SessionRow & { token: string }): MintedSessionView {
  const { id, ...view } = sessionView(row);
  return { id, token: row.token, ...view };
}

/**
 * Which sessions a caller sees: those of a workspace, and for a backend credential only those
 * whose channels it can all act as (null: every one, for operators).
 */
export interface SessionVisibility {
  workspaceId: string;
  channelIds: readonly string[] | null;
}

function scopeOf(ctx: RequestContext): SessionVisibility {
  // Never a session's: managing credentials is for backend credentials only.
  requireScope(ctx.auth.credential, 'credentials');
  return { workspaceId: ctx.auth.workspace.id, channelIds: ctx.auth.channels.map((channel) => channel.id) };
}

/** A workspace user by id or email (without regard to case); `field` names the input it came from. */
async function userOf(prisma: PrismaClient, workspaceId: string, idOrEmail: string, field: string) {
  const key = idOrEmail.trim().toLowerCase();
  const user = await prisma.user.findFirst({
    where: { workspaceId, ...(isUuid(key) ? { id: key } : { emailNormalized: key }) },
    select: { id: true, name: true, email: true },
  });
  if (!user) throw ValidationError.field(field, MESSAGES.userUnknown);
  return user;
}

/**
 * Mints a session for a workspace user (`POST /sessions`, `createSession`). Its channels default
 * to every active channel the minting credential can act as, and must be among them; it expires
 * after its TTL, and never after the minting credential does. Only the token's hash is stored;
 * the token is returned this once.
 */
export async function mintSession(ctx: RequestContext, body: unknown): Promise<SessionRow & { token: string }> {
  const scope = scopeOf(ctx);
  const input = parseInput(createSessionSchema, body);
  const available = scope.channelIds!;
  // Named as the caller wrote it: the message tells nothing the caller did not send.
  const outside = input.channels?.find((id) => !available.includes(id.toLowerCase()));
  if (outside !== undefined) throw ValidationError.field('channels', MESSAGES.channelOutside(outside));
  const channelIds = input.channels && [...new Set(input.channels.map((id) => id.toLowerCase()))];
  const user = await userOf(ctx.prisma, scope.workspaceId, input.user, 'user');
  const createdAt = new Date();
  const ttlMs = (input.ttl_seconds ?? SESSION_TTL.default) * 1000;
  const expiresAt = new Date(Math.min(createdAt.getTime() + ttlMs, ctx.auth.expiresAt?.getTime() ?? Infinity));
  const token = generateToken(TOKEN_PREFIX.session);
  const row: SessionRow = {
    id: uuid7(),
    user,
    scopes: input.scopes ?? [...DEFAULT_SESSION_SCOPES],
    channelIds: channelIds ?? [...available],
    origins: input.origins ?? [],
    expiresAt,
    createdAt,
  };
  await ctx.prisma.accessToken.create({
    data: {
      id: row.id,
      workspaceId: scope.workspaceId,
      kind: 'session',
      userId: user.id,
      mintedById: ctx.auth.credential.id,
      scopes: row.scopes,
      channelIds: row.channelIds,
      origins: row.origins,
      tokenHash: hashToken(token),
      prefix: displayPrefix(token),
      expiresAt,
      createdAt,
    },
  });
  return { ...row, token };
}

interface SessionSqlRow {
  id: string;
  scopes: string[];
  channel_ids: string[];
  origins: string[];
  expires_at: Date;
  created_at: Date;
  user_id: string;
  user_name: string;
  user_email: string;
}

/** Sessions that are live now: neither revoked nor expired, and minted by a credential that is neither. */
function liveSessions(scope: SessionVisibility, now: Date, alias = 't') {
  const t = Prisma.raw(alias);
  return Prisma.sql`${t}.workspace_id = ${scope.workspaceId}::uuid
       AND ${t}.user_id IS NOT NULL
       AND ${t}.revoked_at IS NULL
       AND ${t}.expires_at > ${now}::timestamptz
       AND p.revoked_at IS NULL
       AND (p.expires_at IS NULL OR p.expires_at > ${now}::timestamptz)
       ${scope.channelIds ? Prisma.sql`AND ${t}.channel_ids <@ ${[...scope.channelIds]}::uuid[]` : Prisma.empty}`;
}

/** Live sessions a caller sees, newest first, of one user or all: a page of `limit` after `cursor`, or all. */
export async function findSessions(
  prisma: PrismaClient,
  scope: SessionVisibility,
  options: { userId?: string | undefined; limit?: number; cursor?: Cursor | undefined } = {},
): Promise<SessionRow[]> {
  const now = new Date();
  const { cursor, limit } = options;
  const rows = await prisma.$queryRaw<SessionSqlRow[]>`
    SELECT t.id, t.scopes, t.channel_ids::text[] AS channel_ids, t.origins, t.expires_at, t.created_at,
           u.id AS user_id, u.name AS user_name, u.email AS user_email
      FROM access_tokens t
      JOIN access_tokens p ON p.id = t.minted_by_id
      JOIN users u ON u.id = t.user_id
     WHERE ${liveSessions(scope, now)}
       ${options.userId ? Prisma.sql`AND t.user_id = ${options.userId}::uuid` : Prisma.empty}
       ${cursor ? Prisma.sql`AND (t.created_at, t.id) < (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)` : Prisma.empty}
     ORDER BY t.created_at DESC, t.id DESC
     ${limit === undefined ? Prisma.empty : Prisma.sql`LIMIT ${limit + 1}`}`;
  return rows.map((row) => ({
    id: row.id,
    user: { id: row.user_id, name: row.user_name, email: row.user_email },
    scopes: row.scopes,
    channelIds: row.channel_ids,
    origins: row.origins,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  }));
}

/**
 * Revokes the live sessions a caller sees — one by id, or every one of a user — and answers the
 * revoked sessions' ids and users. One statement.
 */
export async function revokeSessions(
  prisma: PrismaClient,
  scope: SessionVisibility,
  which: { sessionId: string } | { userId: string },
): Promise<{ id: string; userId: string }[]> {
  const now = new Date();
  if ('sessionId' in which && !isUuid(which.sessionId)) return [];
  const rows = await prisma.$queryRaw<{ id: string; user_id: string }[]>`
    UPDATE access_tokens s SET revoked_at = ${now}::timestamptz
      FROM access_tokens p
     WHERE p.id = s.minted_by_id
       AND ${liveSessions(scope, now, 's')}
       AND ${'sessionId' in which ? Prisma.sql`s.id = ${which.sessionId.toLowerCase()}::uuid` : Prisma.sql`s.user_id = ${which.userId}::uuid`}
    RETURNING s.id, s.user_id`;
  return rows.map((row) => ({ id: row.id, userId: row.user_id }));
}

/** `GET /sessions`: the live sessions whose channels the credential can all act as, newest first. */
export async function listSessions(ctx: RequestContext, params: { user?: string | undefined; limit: number; cursor?: Cursor | undefined }): Promise<Page<SessionRow>> {
  const scope = scopeOf(ctx);
  const userId = params.user === undefined ? undefined : (await userOf(ctx.prisma, scope.workspaceId, params.user, 'user')).id;
  const rows = await findSessions(ctx.prisma, scope, { userId, limit: params.limit, cursor: params.cursor });
  return toPage(rows, params.limit);
}

/** `DELETE /sessions/{id}`: revokes one session the credential sees, ending its streams on every process. */
export async function revokeSession(ctx: RequestContext, id: string): Promise<void> {
  const revoked = await revokeSessions(ctx.prisma, scopeOf(ctx), { sessionId: id });
  if (!revoked.length) throw new NotFoundError('Session');
  await ctx.credentialWatch?.announce({ credentialId: revoked[0]!.id });
}

/** `DELETE /sessions?user=`: revokes every session of a user the credential sees; answers how many. */
export async function revokeUserSessions(ctx: RequestContext, user: string): Promise<number> {
  const scope = scopeOf(ctx);
  const found = await userOf(ctx.prisma, scope.workspaceId, user, 'user');
  const revoked = await revokeSessions(ctx.prisma, scope, { userId: found.id });
  if (revoked.length) await ctx.credentialWatch?.announce({ userId: found.id });
  return revoked.length;
}

export { userOf as sessionUser };
