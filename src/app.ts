import type { Logger } from 'pino';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import type { AppDeps } from './context/deps.js';
import { introspectionEnabled } from './env.js';
import { authenticateRequest, requestContext } from './context/authenticate.js';
import { createEventBus } from './realtime/bus.js';
import { createPresence } from './modules/activity/presence.js';
import { OpenStreams } from './lib/streams.js';
import { createEventLoads } from './realtime/event-loads.js';
import { subscribeWhileValid } from './realtime/subscriptions.js';
import { domainGraphQLError, graphqlErrorResponse, maskGraphQLError } from './graphql/errors.js';
import { DomainError } from './errors/domain.js';
import { restErrorResponse } from './rest/errors.js';
import { logMaskedFailures, yogaLogger } from './errors/log.js';
import type { GraphQLContext } from './graphql/builder.js';
import { schema } from './schema.js';
import { documentChecker } from './graphql/document-check.js';
import { GRAPHIQL_OPTIONS, graphiqlRenderer } from './graphql/graphiql.js';
import { createCredentialWatch } from './realtime/credential-watch.js';
import { documentLimitsPlugin } from './graphql/limits.js';
import { compiledQueriesPlugin, costLimitPlugin } from './graphql/jit.js';
import { incrementalDeliveryPlugin } from './graphql/incremental.js';
import { pageArgumentsPlugin } from './graphql/connection.js';
import { graphqlOverWebSocket } from './realtime/websocket.js';
import { eventStreamAnswers, singleConnectionSse, SSE_STREAM_PATH } from './realtime/sse.js';
import { operationPreparer } from './graphql/operation.js';
import { coalescedEventStreams, writeCoalescer } from './realtime/coalesce.js';
import { readBody } from './http/exchange.js';
import { routingPlugin } from './http/plugin.js';
import { RouteTable, type HttpRoute } from './http/routes.js';
import type { ServerContext } from './http/state.js';
import { restRoutes } from './rest/handler.js';
import { systemRoutes } from './modules/system/system.routes.js';
import { docsRoutes } from './modules/docs/docs.routes.js';
import { PROVIDERS, providerWebhooks } from './providers/registry.js';
import { webhookParts } from './modules/inbound/webhook-parts.js';
import { channelRoutes } from './modules/channels/channels.routes.js';
import { contactRoutes } from './modules/contacts/contacts.routes.js';
import { userRoutes } from './modules/users/users.routes.js';
import { conversationRoutes } from './modules/conversations/conversations.routes.js';
import { messageRoutes } from './modules/messages/messages.routes.js';
import { broadcastRoutes } from './modules/broadcasts/broadcasts.routes.js';
import { templateRoutes } from './modules/templates/templates.routes.js';
import { sessionRoutes } from './modules/sessions/sessions.routes.js';
import { documentRoutes } from './modules/documents/documents.routes.js';
import { activityRoutes } from './modules/activity/activity.routes.js';
import { createDocumentStore } from './modules/documents/documents.service.js';
import { liveCredentials, resolveCredential } from './modules/credentials/credentials.service.js';
import { mediaOpener } from './modules/messages/media.service.js';
import { trustedDocumentsPlugin } from './graphql/trusted-documents.js';
import { createRateLimiter } from './context/rate-limit.js';
import { createCredentialCache } from './context/credential-cache.js';
import { sharedSubscriptionExecution } from './realtime/cohorts.js';
import { createAppMetrics, type AppMetrics } from './metrics/metrics.js';

/** The REST API's route declarations and the provider webhooks', in the order the OpenAPI document lists them. */
export const DOCUMENTED_ROUTES = {
  rest: [
    ...channelRoutes,
    ...contactRoutes,
    ...templateRoutes,
    ...messageRoutes,
    ...conversationRoutes,
    ...activityRoutes,
    ...userRoutes,
    ...sessionRoutes,
    ...documentRoutes,
    ...broadcastRoutes,
  ],
  webhooks: providerWebhooks(PROVIDERS),
};

export const GRAPHQL_PATH = '/graphql';

/**
 * GET and POST /graphql in the route table: the caller authenticated and counted before the
 * document is parsed or validated (a refused document costs the caller's budget, and a caller
 * without a credential gets 401, whatever its Accept header), the body read within
 * BODY_LIMIT_BYTES, then the request handed on to yoga's pipeline. The GraphiQL page, the one
 * answer without a credential, is given by yoga before the table is consulted, and only where
 * GraphiQL is on (docs/graphql.md#graphiql); every other request reaching this route is GraphQL.
 */
function graphqlRoutes(deps: AppDeps): HttpRoute[] {
  const refuse = (error: unknown, log: Logger, request: Request) => graphqlErrorResponse(error, log, request.headers.get('accept'));
  const route = (method: 'GET' | 'POST'): HttpRoute => ({
    method,
    path: GRAPHQL_PATH,
    label: 'graphql',
    auth: 'credential',
    refuse,
    async handle({ request, state }) {
      if (method !== 'POST' || !request.body) return undefined;
      try {
        const body = await readBody(request, deps.env.BODY_LIMIT_BYTES);
        if (body) state.body = body;
      } catch (error) {
        // The same answer as REST's for a body over the limit, before yoga parses anything.
        return restErrorResponse(error, state.log);
      }
      return undefined;
    },
  });
  // graphql-sse's single connection mode (src/realtime/sse.ts): reserve, stream, operate, stop.
  const stream = (method: 'GET' | 'POST' | 'PUT' | 'DELETE'): HttpRoute => ({
    method,
    path: SSE_STREAM_PATH,
    label: 'graphql stream',
    auth: 'credential',
    refuse,
    handle: async () => undefined,
  });
  return [route('GET'), route('POST'), stream('PUT'), stream('GET'), stream('POST'), stream('DELETE')];
}

/**
 * The body the GraphQL route read, for yoga's own parser of the request's content type: handed
 * over as the body of a request of the same method, URL and headers, so that yoga reads the bytes
 * already counted against the limit rather than the connection.
 */
function readBodyOnce(): Plugin<Record<string, unknown>, ServerContext> {
  return {
    onRequestParse({ request, requestParser, setRequestParser, serverContext, fetchAPI }) {
      const body = serverContext.state?.body;
      if (!body || !requestParser) return;
      setRequestParser(() =>
        requestParser(new fetchAPI.Request(request.url, { method: request.method, headers: request.headers, body: body as Uint8Array<ArrayBuffer> })),
      );
    },
  };
}

/** Labels a GraphQL request in metrics by its operation, once its document is valid and its caller known. */
function operationLabelPlugin(metrics: AppMetrics): Plugin {
  const label = ({ args }: { args: { contextValue: unknown; document: Parameters<AppMetrics['operationRoute']>[0]; operationName?: string | null | undefined } }) => {
    const state = (args.contextValue as GraphQLContext).state;
    if (state) state.route = metrics.operationRoute(args.document, args.operationName);
  };
  return { onExecute: label, onSubscribe: label };
}

/** Logs the unexpected failures a GraphQL answer masks on the request's own logger (its id on the line). */
function maskedFailuresLog(): Plugin<Record<string, unknown>, ServerContext> {
  return {
    onResultProcess({ result, serverContext }) {
      const log = serverContext.state?.log;
      if (!log || Symbol.asyncIterator in (result as object)) return;
      for (const one of Array.isArray(result) ? result : [result as { errors?: readonly unknown[] }]) logMaskedFailures(log, one.errors);
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
const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Channel-Uuid', 'Idempotency-Key', 'X-Request-Id', 'traceparent', 'tracestate'];
/** Response headers a browser client may read cross-origin, beyond the CORS-safelisted ones. */
const CORS_EXPOSED_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Idempotent-Replayed',
  'WWW-Authenticate',
  'X-Request-Id',
];

/** How often one refused origin is logged. */
const REFUSED_ORIGIN_LOG_MS = 60_000;
/** Refused origins remembered for that at once; past it the oldest is forgotten (and may be logged again). */
const REFUSED_ORIGINS_REMEMBERED = 10_000;

/**
 * Logs a browser request refused for its Origin once per origin per minute, naming the setting
 * that would admit it: the operator sees why a browser app fails without a line per request.
 */
function refusedOriginLog(logger: Logger) {
  const lastLogged = new Map<string, number>();
  return (origin: string) => {
    const now = Date.now();
    const last = lastLogged.get(origin);
    if (last !== undefined && now - last < REFUSED_ORIGIN_LOG_MS) return;
    lastLogged.delete(origin);
    lastLogged.set(origin, now);
    if (lastLogged.size > REFUSED_ORIGINS_REMEMBERED) lastLogged.delete(lastLogged.keys().next().value!);
    logger.warn({ origin: origin.slice(0, 200), setting: 'CORS_ORIGINS' }, 'browser request refused for its origin: list it in CORS_ORIGINS to admit it');
  };
}

/** Whether `origin` is the server's own (the Host the request was sent to): a same-origin request, which CORS does not concern. */
function isOwnOrigin(origin: string, host: string | null): boolean {
  try {
    return host !== null && new URL(origin).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * CORS (docs/browser-apps.md#origins-and-cors): off unless CORS_ORIGINS lists origins. A listed
 * origin gets its own origin back; `*` lets any other origin in. No answer ever carries
 * `Access-Control-Allow-Credentials`: the API uses no cookies, its credential is the Authorization
 * header. Any other origin, and every origin while the list is unset, gets no CORS header at all,
 * so browsers refuse to share the response; such a refusal is logged once per origin per minute.
 * yoga's plugin answers every OPTIONS before the route table, so a preflight to /api/connect is
 * treated exactly like one to /graphql.
 */
export function corsOptions(origins: string[] | undefined, logger: Logger): YogaServerOptions<Record<string, unknown>, GraphQLContext>['cors'] {
  const normalise = (origin: string) => origin.replace(/\/+$/, '').toLowerCase();
  const listed = new Set((origins ?? []).filter((o) => o !== '*').map(normalise));
  const anyOrigin = (origins ?? []).includes('*');
  const shared = {
    methods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    credentials: false,
  };
  const refused = refusedOriginLog(logger);
  return (request) => {
    const origin = request.headers.get('origin');
    if (!origin) return false;
    if (listed.has(normalise(origin))) return { ...shared, origin: [origin] };
    // yoga answers `*` by echoing the caller's origin.
    if (anyOrigin) return { ...shared, origin: '*' };
    if (!isOwnOrigin(origin, request.headers.get('host'))) refused(origin);
    return false;
  };
}

/**
 * Whether a browser page of `origin` may open a WebSocket to this server (docs/graphql.md: the upgrade
 * honours CORS_ORIGINS): its own origin always, another only when listed (or `*`).
 */
export function webSocketOrigins(origins: string[] | undefined) {
  const normalise = (origin: string) => origin.replace(/\/+$/, '').toLowerCase();
  const listed = new Set((origins ?? []).map(normalise));
  return (origin: string, host: string | undefined): boolean => {
    if (listed.has('*') || listed.has(normalise(origin))) return true;
    try {
      return host !== undefined && new URL(origin).host.toLowerCase() === host.toLowerCase();
    } catch {
      return false;
    }
  };
}

/** Disposes what the app created itself when the server is disposed. */
function disposePlugin(dispose: () => Promise<void>): Plugin {
  return { onDispose: dispose };
}

/**
 * The server: yoga, with every route of the one table (REST, provider webhooks, GraphQL, probes,
 * documentation) served through its request hooks. node:http serves it through yoga's own node
 * adapter (src/http/server.ts); tests call its `fetch`. `options.plugins` are yoga plugins run
 * after the app's own, which see every stage of an operation (parse, validate, execute).
 */
export function createApp(appDeps: AppDeps, options: { plugins?: Plugin[] } = {}) {
  const ownsEvents = !appDeps.events;
  const ownsRateLimiter = appDeps.rateLimiter === undefined;
  const ownsCredentialCache = appDeps.credentialCache === undefined;
  const { env, logger } = appDeps;
  const deps: AppDeps = {
    ...appDeps,
    events: appDeps.events ?? createEventBus({ redisUrl: env.REDIS_URL, prefix: env.REDIS_PREFIX, logger, maxPending: env.SUBSCRIPTION_MAX_PENDING }),
    streams: appDeps.streams ?? new OpenStreams(),
    eventLoads: createEventLoads(),
    holdStream: subscribeWhileValid,
    rateLimiter: ownsRateLimiter
      ? createRateLimiter({
          perMinute: env.RATE_LIMIT_PER_MINUTE,
          sessionPerMinute: env.SESSION_RATE_LIMIT_PER_MINUTE,
          redisUrl: env.REDIS_URL,
          prefix: env.REDIS_PREFIX,
          logger,
        })
      : appDeps.rateLimiter,
    credentialCache: ownsCredentialCache
      ? createCredentialCache({ ttlMs: env.AUTH_CACHE_MS, redisUrl: env.REDIS_URL, redisPrefix: env.REDIS_PREFIX, logger })
      : appDeps.credentialCache,
    lookupCredential: appDeps.lookupCredential ?? ((key) => resolveCredential(appDeps.db.query, key)),
    openMedia: appDeps.openMedia ?? mediaOpener(appDeps.providers, appDeps.sealer),
    documentProblem: appDeps.documentProblem ?? documentChecker(schema),
  };
  const ownsCredentialWatch = !deps.credentialWatch;
  // On the embedded database no other process can change a credential while this one runs.
  deps.credentialWatch ??= createCredentialWatch({
    live: (ids) => liveCredentials(deps.db.query, ids),
    bus: deps.events!,
    cache: deps.credentialCache,
    logger,
    alone: deps.db.kind === 'pglite',
  });
  const ownsPresence = !deps.presence;
  deps.presence ??= createPresence({ bus: deps.events!, logger });
  const metrics = createAppMetrics(deps);
  // Registered GraphQL documents, for every transport: yoga's HTTP pipeline through its plugin,
  // the others (a WebSocket's subscribe, a reserved SSE stream) through src/graphql/operation.ts.
  const documents = createDocumentStore(deps.db.query);
  const table = new RouteTable().add(
    ...systemRoutes(deps, metrics),
    ...docsRoutes(deps),
    ...graphqlRoutes(deps),
    ...restRoutes(deps, { rest: DOCUMENTED_ROUTES.rest, webhooks: providerWebhooks(deps.providers?.list ?? PROVIDERS), webhookParts: webhookParts(deps) }),
  );
  // A subscription stream's connection is written at most once per STREAM_FLUSH_MS, however many events.
  const coalescer = writeCoalescer(env.STREAM_FLUSH_MS);
  // Every stream's connection has one writer, paced by the coalescer and bounded by STREAM_MAX_BUFFERED_BYTES (src/realtime/writer.ts).
  const streamLimits = { coalescer, maxBufferedBytes: env.STREAM_MAX_BUFFERED_BYTES, logger };
  const eventStreams = eventStreamAnswers({ path: GRAPHQL_PATH, limits: streamLimits });
  let closeWebSockets = async () => {};
  const yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    graphiql: deps.env.NODE_ENV === 'production' ? false : GRAPHIQL_OPTIONS,
    renderGraphiQL: graphiqlRenderer(),
    cors: corsOptions(deps.env.CORS_ORIGINS, logger),
    logging: yogaLogger(deps.logger),
    // The one body limit is BODY_LIMIT_BYTES, applied by the GraphQL route as the body is read.
    maxRequestBodySize: false,
    maskedErrors: { maskError: maskGraphQLError() },
    // A registered document named by id (GraphQL over HTTP's persisted documents) instead of a text.
    extraParamNames: ['documentId'],
    plugins: [
      routingPlugin({
        table,
        logger,
        authenticate: (headers, state) => authenticateRequest(deps, headers, state),
        observe: metrics.observe,
        varyOnOrigin: Boolean(deps.env.CORS_ORIGINS?.length),
      }),
      readBodyOnce(),
      maskedFailuresLog(),
      coalescedEventStreams(coalescer),
      trustedDocumentsPlugin(documents),
      singleConnectionSse({
        documents,
        perCredential: env.SSE_RESERVATIONS_PER_CREDENTIAL,
        maxReservations: env.SSE_RESERVATIONS_MAX,
        credentialWatch: deps.credentialWatch,
        streams: deps.streams!,
        limits: streamLimits,
      }),
      eventStreams.plugin,
      operationLabelPlugin(metrics),
      documentLimitsPlugin({ hideSuggestions: !introspectionEnabled(deps.env) }),
      incrementalDeliveryPlugin(),
      costLimitPlugin(),
      pageArgumentsPlugin(),
      compiledQueriesPlugin(),
      sharedSubscriptionExecution({
        observe: metrics.subscriptionEvent,
        // A WebSocket's subscription has its socket's sink; an event stream's, its answer's.
        direct: { sinkOf: (context) => context.streamSink ?? eventStreams.sinkOf(context) },
      }),
      ...(introspectionEnabled(deps.env) ? [] : [disableIntrospection()]),
      ...(options.plugins ?? []),
      // Streams still open end with the server: a disposed app answers nothing more.
      disposePlugin(async () => deps.streams!.endAll()),
      disposePlugin(() => closeWebSockets()),
      disposePlugin(async () => coalescer.dispose()),
      // Before the bus it announces on: other processes hear at once that this one's viewers left.
      ...(ownsPresence ? [disposePlugin(async () => deps.presence!.dispose())] : []),
      ...(ownsEvents ? [disposePlugin(() => deps.events!.dispose())] : []),
      ...(ownsRateLimiter && deps.rateLimiter ? [disposePlugin(() => deps.rateLimiter!.dispose())] : []),
      ...(ownsCredentialCache && deps.credentialCache ? [disposePlugin(() => deps.credentialCache!.dispose())] : []),
      ...(ownsCredentialWatch ? [disposePlugin(async () => deps.credentialWatch!.dispose())] : []),
    ] as Plugin[],
    context: async ({ state, request }) => {
      try {
        return requestContext(deps, state?.caller ?? (await authenticateRequest(deps, request.headers, state ?? {})));
      } catch (error) {
        throw error instanceof DomainError ? domainGraphQLError(error) : error;
      }
    },
  });
  const webSocket = graphqlOverWebSocket({
    prepare: operationPreparer(yoga as never, documents),
    logger,
    path: GRAPHQL_PATH,
    maxPayload: env.BODY_LIMIT_BYTES,
    allowOrigin: webSocketOrigins(env.CORS_ORIGINS),
    authenticate: (headers, state) => authenticateRequest(deps, headers, state),
    observe: metrics.observe,
    streams: deps.streams!,
    credentialWatch: deps.credentialWatch,
    limits: streamLimits,
    keepAliveMs: env.WS_KEEPALIVE_MS,
  });
  closeWebSockets = webSocket.dispose;
  // node:http hands WebSocket upgrades here (src/http/server.ts).
  return Object.assign(yoga, { upgrade: webSocket.upgrade });
}

export type App = ReturnType<typeof createApp>;
