import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type http from 'node:http';
import { createYoga, type Plugin, type YogaServerInstance, type YogaServerOptions } from 'graphql-yoga';
import type { AppDeps } from './context/deps.js';
import type { AuthContext } from './context/types.js';
import { introspectionEnabled } from './env.js';
import { authenticateRequest, requestContext } from './context/authenticate.js';
import { createEventBus } from './events/bus.js';
import { OpenStreams } from './lib/streams.js';
import { domainGraphQLError, graphqlErrorResponse, maskGraphQLError } from './errors/graphql.js';
import { DomainError } from './errors/domain.js';
import type { GraphQLContext } from './graphql/builder.js';
import { schema } from './graphql/schema.js';
import { GRAPHIQL_OPTIONS, graphiqlRenderer } from './graphql/graphiql.js';
import { createRestHandler } from './rest/handler.js';
import { API_PREFIX } from './rest/route.js';
import { json, readBody } from './rest/http.js';
import { restErrorResponse } from './errors/rest.js';
import { describeError, yogaLogger } from './errors/log.js';
import { systemRoute } from './modules/system/system.routes.js';
import { docsRoute } from './modules/docs/docs.routes.js';
import { WEBHOOKS_PREFIX, inboundRoutes, type InboundRoutes } from './modules/inbound/inbound.routes.js';
import { directWebhooks } from './modules/inbound/inbound.node.js';
import { carryRateLimit, createRateLimiter, recordedRateLimitHeaders } from './context/rate-limit.js';
import { createCredentialCache } from './context/credential-cache.js';
import { documentLimitsPlugin } from './graphql/limits.js';
import { compiledQueriesPlugin, costLimitPlugin } from './graphql/jit.js';
import { pageArgumentsPlugin } from './graphql/connection.js';
import { createCompiledAnswers, type CompiledAnswers } from './graphql/compiled-answer.js';
import { directGraphql, utf8, type HandedOver } from './graphql/direct.js';
import { createAppMetrics, startedAt, type AppMetrics } from './metrics/metrics.js';
import { rememberConnection } from './lib/cut-off.js';
import { ServerResponse } from './lib/response.js';
import { headerRecord } from './rest/node.js';

/** The caller of each GraphQL request, resolved before its document is parsed. */
const graphqlCallers = new WeakMap<Request, AuthContext>();

/** The body of each GraphQL request, read once within the body limit before the caller is resolved. */
const graphqlBodies = new WeakMap<Request, Buffer>();

/** A browser asking for the GraphiQL page, which needs no credential. */
const wantsPage = (request: Request) => request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');

/** GraphQL requests node:http began serving (src/graphql/direct.ts): their body and caller are known, their compiled answer tried. */
const handedOver = new WeakSet<Request>();

/**
 * The request as yoga's body parsers use it, answering from the bytes already read: they call
 * `json()`, `text()` or `formData()` and nothing else, so the body is neither copied into a new
 * Request nor read a second time.
 */
function readRequest(request: Request, bytes: Buffer): Request {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    // Read only if a parser asks: the request creates its signal on first use.
    get signal() {
      return request.signal;
    },
    body: null,
    bodyUsed: true,
    text: async () => utf8(bytes),
    json: async () => JSON.parse(utf8(bytes)),
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    formData: () => new Response(new Uint8Array(bytes), { headers: request.headers }).formData(),
  } as unknown as Request;
}

/** Serves REST and probes from the same server as GraphQL: they answer before yoga's GraphQL handling. */
function restPlugin(deps: AppDeps, metrics: AppMetrics, compiled: CompiledAnswers, inbound: InboundRoutes): Plugin {
  const rest = createRestHandler(deps);
  return {
    async onRequest({ request, url, endResponse, serverContext }) {
      rememberConnection(request, serverContext);
      if (url.pathname === '/graphql') {
        if (handedOver.has(request)) return;
        // The same body limit as REST, counted on the bytes that arrive, before yoga parses them.
        if (request.body) {
          try {
            const body = await readBody(request, deps.env.BODY_LIMIT_BYTES);
            if (body) graphqlBodies.set(request, body);
          } catch (error) {
            return endResponse(restErrorResponse(error, deps.logger));
          }
        }
        if (wantsPage(request)) return;
        // Authenticated and counted before the document is parsed or validated: a refused
        // document costs the caller's budget, and a caller without a credential gets 401.
        let caller: AuthContext;
        try {
          caller = await authenticateRequest(deps, request);
        } catch (error) {
          return endResponse(graphqlErrorResponse(error, deps.logger));
        }
        graphqlCallers.set(request, caller);
        const body = graphqlBodies.get(request);
        if (body && request.method === 'POST') {
          const outcome = await compiled
            .answer(request.headers, utf8(body), requestContext(deps, caller), (document, name) => metrics.labelOperation(request, document, name))
            .catch((error: unknown) => {
              // A defect of the shortcut, not of the request: yoga answers it.
              deps.logger.warn({ err: describeError(error) }, 'graphql: compiled answer failed, left to yoga');
              return undefined;
            });
          if (outcome && 'answer' in outcome) {
            return endResponse(new ServerResponse(outcome.answer.body, { status: 200, headers: { 'content-type': outcome.answer.contentType } }));
          }
          if (outcome) compiled.handOff(request, outcome.errors);
        }
        return;
      }
      const system = systemRoute(deps, request, url, metrics);
      if (system) return endResponse(await system);
      const docs = docsRoute(deps, request, url);
      if (docs) return endResponse(docs);
      if (url.pathname.startsWith(WEBHOOKS_PREFIX)) return endResponse((await inbound.fetch(request, url))!);
      if (url.pathname === API_PREFIX || url.pathname.startsWith(`${API_PREFIX}/`)) {
        return endResponse(await rest(request, url));
      }
      endResponse(json(404, { status: 'error', message: 'Route not found.' }));
    },
    // yoga's parsers are registered before this plugin, so the one chosen for the request is known here.
    onRequestParse({ request, requestParser, setRequestParser }) {
      const body = graphqlBodies.get(request);
      if (body && requestParser) setRequestParser(() => requestParser(readRequest(request, body)));
    },
  };
}

/** One line per request: method, path (no query string: it may hold personal data), status, duration. */
function accessLogPlugin(deps: AppDeps): Plugin {
  const started = new WeakMap<Request, { at: number; path: string }>();
  return {
    onRequest({ request, url, serverContext }) {
      // `url` is the one yoga parsed for routing; nothing is kept when the line would not be written.
      if (deps.logger.isLevelEnabled('info')) started.set(request, { at: startedAt(serverContext), path: url.pathname });
    },
    onResponse({ request, response }) {
      const start = started.get(request);
      // A response yoga gives before any plugin sees the request (a CORS preflight) has no start.
      if (!start && !deps.logger.isLevelEnabled('info')) return;
      deps.logger.info(
        {
          method: request.method,
          path: start?.path ?? new URL(request.url).pathname,
          status: response.status,
          ms: start === undefined ? undefined : Math.round(performance.now() - start.at),
        },
        'request',
      );
    },
  };
}

function disableIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

/** Request headers a browser client may send cross-origin, beyond the CORS-safelisted ones. */
const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Channel-Uuid', 'Idempotency-Key'];
/** Response headers a browser client may read cross-origin, beyond the CORS-safelisted ones. */
const CORS_EXPOSED_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed', 'WWW-Authenticate'];

/**
 * CORS (CONTRACT §2): off unless CORS_ORIGINS lists origins. A listed origin gets its own origin
 * back, with credentials; `*` lets any other origin in without credentials. Any other origin, and
 * every origin while the list is unset, gets no CORS header at all, so browsers refuse to share
 * the response. yoga's plugin answers every OPTIONS before the REST routes, so a preflight to
 * /api/connect is treated exactly like one to /graphql.
 */
export function corsOptions(origins: string[] | undefined): YogaServerOptions<Record<string, unknown>, GraphQLContext>['cors'] {
  if (!origins?.length) return false;
  const normalise = (origin: string) => origin.replace(/\/+$/, '').toLowerCase();
  const listed = new Set(origins.filter((o) => o !== '*').map(normalise));
  const anyOrigin = origins.includes('*');
  const shared = { methods: ['GET', 'POST', 'PATCH'], allowedHeaders: CORS_ALLOWED_HEADERS, exposedHeaders: CORS_EXPOSED_HEADERS, maxAge: 600 };
  return (request) => {
    const origin = request.headers.get('origin');
    if (origin && listed.has(normalise(origin))) return { ...shared, origin: [origin], credentials: true };
    // yoga answers `*` by echoing the caller's origin; without credentials that grants the same.
    if (anyOrigin) return { ...shared, origin: '*', credentials: false };
    return false;
  };
}

/** With CORS on, every answer depends on the Origin header: caches must keep them apart. */
function varyOnOriginPlugin(): Plugin {
  return {
    onResponse({ response }) {
      const vary = response.headers.get('vary') ?? '';
      if (!/(^|,)\s*origin\s*(,|$)/i.test(vary)) response.headers.set('vary', vary ? `${vary}, Origin` : 'Origin');
    },
  };
}

/** Every counted request's answer carries its credential's budget (REST and GraphQL alike). */
function rateLimitHeadersPlugin(): Plugin {
  return {
    onResponse({ request, response }) {
      for (const [name, value] of Object.entries(recordedRateLimitHeaders(request))) response.headers.set(name, value);
    },
  };
}

/** Disposes what the app created itself when the server is disposed. */
function disposePlugin(dispose: () => Promise<void>): Plugin {
  return { onDispose: dispose };
}

/** Parts of an app that tests may supply to watch them; created by the app otherwise. */
export interface AppParts {
  /** The app's answers from compiled queries (src/graphql/compiled-answer.ts), one app's only. */
  compiledAnswers?: CompiledAnswers;
}

export function createApp(appDeps: AppDeps, parts: AppParts = {}) {
  const ownsEvents = !appDeps.events;
  const ownsRateLimiter = appDeps.rateLimiter === undefined;
  const ownsCredentialCache = appDeps.credentialCache === undefined;
  const { env, logger } = appDeps;
  const deps: AppDeps = {
    ...appDeps,
    events: appDeps.events ?? createEventBus({ redisUrl: env.REDIS_URL, prefix: env.REDIS_PREFIX, logger }),
    streams: appDeps.streams ?? new OpenStreams(),
    rateLimiter: ownsRateLimiter ? createRateLimiter({ perMinute: env.RATE_LIMIT_PER_MINUTE, redisUrl: env.REDIS_URL, prefix: env.REDIS_PREFIX, logger }) : appDeps.rateLimiter,
    credentialCache: ownsCredentialCache ? createCredentialCache({ ttlMs: env.AUTH_CACHE_MS, redisUrl: env.REDIS_URL, redisPrefix: env.REDIS_PREFIX, logger }) : appDeps.credentialCache,
  };
  const metrics = createAppMetrics(deps);
  const compiled = parts.compiledAnswers ?? createCompiledAnswers();
  const inbound = inboundRoutes(deps);
  const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: deps.env.NODE_ENV === 'production' ? false : GRAPHIQL_OPTIONS,
    renderGraphiQL: graphiqlRenderer(),
    cors: corsOptions(deps.env.CORS_ORIGINS),
    logging: yogaLogger(deps.logger),
    // The one body limit is BODY_LIMIT_BYTES, applied as the body is read (restPlugin); yoga's own
    // would pipe every body through a second, counting stream.
    maxRequestBodySize: false,
    maskedErrors: { maskError: maskGraphQLError() },
    plugins: [
      accessLogPlugin(deps),
      metrics.plugin,
      restPlugin(deps, metrics, compiled, inbound),
      ...(deps.env.CORS_ORIGINS?.length ? [varyOnOriginPlugin()] : []),
      documentLimitsPlugin({ hideSuggestions: !introspectionEnabled(deps.env) }),
      costLimitPlugin(),
      pageArgumentsPlugin(),
      compiledQueriesPlugin((args) => compiled.remember(args)),
      compiled.plugin,
      ...(introspectionEnabled(deps.env) ? [] : [disableIntrospection()]),
      rateLimitHeadersPlugin(),
      // Streams still open end with the server: a disposed app answers nothing more.
      disposePlugin(async () => deps.streams!.endAll()),
      ...(ownsEvents ? [disposePlugin(() => deps.events!.dispose())] : []),
      ...(ownsRateLimiter && deps.rateLimiter ? [disposePlugin(() => deps.rateLimiter!.dispose())] : []),
      ...(ownsCredentialCache && deps.credentialCache ? [disposePlugin(() => deps.credentialCache!.dispose())] : []),
    ],
    context: async ({ request }) => {
      try {
        return requestContext(deps, graphqlCallers.get(request) ?? (await authenticateRequest(deps, request)));
      } catch (error) {
        throw error instanceof DomainError ? domainGraphQLError(error) : error;
      }
    },
  });
  // node:http (src/server.ts) serves provider webhooks and GraphQL's common requests directly, past
  // yoga; in process they go through yoga.
  const varyOnOrigin = Boolean(deps.env.CORS_ORIGINS?.length);
  const webhooks = directWebhooks(inbound, { logger, metrics, varyOnOrigin });
  const graphql = directGraphql({ deps, compiled, metrics, varyOnOrigin, handOver: (begun) => finishInYoga(yoga, compiled, begun) });
  return Object.assign(yoga, { direct: (request: http.IncomingMessage, response: http.ServerResponse) => webhooks(request, response) || graphql(request, response) });
}

/**
 * A GraphQL request node:http began, answered by yoga: as a Request whose body, caller, rate-limit
 * count and (when it ran) result are already known, written back with the fetch adapter's own
 * writer. The Request is aborted when its connection closes, as the adapter's own are.
 */
function finishInYoga(yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>, compiled: CompiledAnswers, begun: HandedOver): void {
  const { request, response, body, caller, countedAs, errors, startedAt } = begun;
  const aborted = new AbortController();
  response.once('close', () => aborted.abort());
  const fetchRequest = new yoga.fetchAPI.Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, {
    method: 'POST',
    headers: request.headers as Record<string, string>,
    signal: aborted.signal,
  });
  graphqlBodies.set(fetchRequest, body);
  graphqlCallers.set(fetchRequest, caller);
  carryRateLimit(countedAs, fetchRequest);
  handedOver.add(fetchRequest);
  if (errors) compiled.handOff(fetchRequest, errors);
  Promise.resolve(yoga.fetch(fetchRequest, { req: request, res: response, startedAt }))
    .then(async (answer) => {
      // A JSON answer (the direct route takes no request that asks for a stream), read whole.
      const bytes = Buffer.from(await answer.arrayBuffer());
      const headers = { ...headerRecord(answer.headers), 'content-length': bytes.byteLength };
      if (!response.destroyed) response.writeHead(answer.status, headers).end(bytes);
    })
    .catch(() => response.destroy());
}
