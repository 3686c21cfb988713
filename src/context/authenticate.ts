import type { AppDeps } from './deps.js';
import type { AuthContext, RequestContext } from './types.js';
import { bearerToken, requestHost } from './request.js';
import { actAs } from './act-as.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { AuthenticationError, ForbiddenError, ServiceUnavailableError } from '../errors/domain.js';
import { hashToken, isWellFormedToken } from '../lib/tokens.js';
import { admitRequest, type RateLimitRecord } from './rate-limit.js';
import { PROVIDERS } from '../providers/registry.js';

/**
 * Resolves the caller of a request from its headers, the same way for REST and GraphQL:
 * one statement, or none while the credential is cached (AUTH_CACHE_MS).
 * While the database is unreachable this is where a request stops, with 503; a
 * credential over its request budget stops here too, with 429. What the budget counted is
 * recorded on `record` (the request's state), for its answer's headers.
 */
export async function authenticateRequest(deps: AppDeps, headers: Pick<Headers, 'get'>, record: { rateLimit?: RateLimitRecord } = {}): Promise<AuthContext> {
  // No Host (HTTP/1.0) or an empty one names no workspace: never the server's own address.
  const host = requestHost(headers, deps.env.TRUST_PROXY);
  const bearer = bearerToken(headers);
  // A malformed or mistyped token costs no query.
  if (!host || !bearer || !isWellFormedToken(bearer)) throw new AuthenticationError();
  const tokenHash = hashToken(bearer);
  const lookup = deps.lookupCredential;
  if (!lookup) throw new Error('the app was built without a credential lookup');
  const load = () => lookup({ host, tokenHash });
  // A subscription checks its credential afresh before its stream starts (subscribeWhileValid).
  const cache = deps.credentialCache;
  const resolved = await deps.db.health.race(cache ? cache.resolve(host, tokenHash, load) : load()).catch((error: unknown) => {
    throw isDatabaseUnavailable(error) ? new ServiceUnavailableError() : error;
  });
  if (resolved === 'unavailable') throw new ServiceUnavailableError();
  if (!resolved) throw new AuthenticationError();
  const auth = actAs(resolved, headers.get('x-channel-uuid'));
  if (auth.credential.origins.length) refuseOtherOrigins(auth.credential.origins, headers.get('origin'));
  await admitRequest(deps.rateLimiter, auth.credential.id, record, auth.credential.kind === 'session' ? 'session' : 'backend');
  return auth;
}

/**
 * A session minted for some origins refuses a request whose Origin header names another (docs/browser-apps.md,
 * Origins and CORS). A request without the header (not a browser's cross-origin one) is not refused: the
 * origins keep a leaked token from working in other sites' pages, not from a script.
 */
function refuseOtherOrigins(origins: readonly string[], origin: string | null): void {
  if (origin === null || origins.includes(origin.toLowerCase())) return;
  throw new ForbiddenError('This session may not be used from this origin.');
}

/** The context both transports hand to services. */
export function requestContext(deps: AppDeps, auth: AuthContext): RequestContext {
  return {
    prisma: deps.db.prisma,
    sql: deps.db.query,
    logger: deps.logger,
    auth,
    maxQueryCost: deps.env.GRAPHQL_MAX_COST,
    onMessageQueued: deps.onMessageQueued,
    onBroadcastQueued: deps.onBroadcastQueued,
    events: deps.events,
    streams: deps.streams,
    eventLoads: deps.eventLoads,
    credentialWatch: deps.credentialWatch,
    presence: deps.presence,
    holdStream: deps.holdStream,
    providers: deps.providers?.list ?? PROVIDERS,
    openMedia: deps.openMedia,
    documentProblem: deps.documentProblem,
  };
}
