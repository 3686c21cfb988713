import type { AppDeps, AuthContext, RequestContext } from './types.js';
import { bearerToken, requestHost } from './request.js';
import { authenticate } from '../modules/credentials/credentials.service.js';

/** Resolves the caller of an HTTP request, the same way for REST and GraphQL. */
export function authenticateRequest(deps: AppDeps, request: Request): Promise<AuthContext> {
  const headers = request.headers;
  const host = requestHost(headers, deps.env.TRUST_PROXY) ?? requestHost(new Headers({ host: new URL(request.url).host }), false);
  return authenticate(deps.db.prisma, {
    host,
    bearer: bearerToken(headers),
    channelHeader: headers.get('x-channel-uuid'),
  });
}

/** The context both transports hand to services. */
export function requestContext(deps: AppDeps, auth: AuthContext): RequestContext {
  return { prisma: deps.db.prisma, logger: deps.logger, auth, onMessageQueued: deps.onMessageQueued, events: deps.events };
}
