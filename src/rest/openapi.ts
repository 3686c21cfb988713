import { readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import { replaceWithDocumentation } from '../lib/validation.js';
import { API_PREFIX, type RouteDeclaration } from './route.js';
import type { WebhookDeclaration } from '../providers/provider.js';
import { errorSchema, validationErrorSchema } from './schemas.js';
import { CONTENT_TYPE_MESSAGE } from '../http/exchange.js';
import { FetchResponse } from '../lib/response.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const jsonContent = (schema: z.ZodType) => ({ 'application/json': { schema } });

const rateLimitHeaders = {
  'RateLimit-Limit': z.int().meta({ description: "Requests the credential may make per window (absent when rate limits are off)." }).optional(),
  'RateLimit-Remaining': z.int().meta({ description: 'Requests left in this window.' }).optional(),
  'RateLimit-Reset': z.int().meta({ description: 'Seconds until the window renews.' }).optional(),
};

const replayedHeader = z
  .literal('true')
  .optional()
  .meta({ description: 'Present when the answer is the replay of an earlier request with the same `Idempotency-Key`.' });

const retryAfter = z.int().meta({ description: 'Seconds to wait before retrying.' });

/** Every failure a REST request can meet, as reusable response components. */
const failures = {
  400: {
    id: 'BadRequest',
    description: 'A malformed JSON body, or a credential for several channels without `X-Channel-Uuid`.',
    headers: z.object(rateLimitHeaders),
    content: jsonContent(errorSchema),
  },
  401: {
    id: 'Unauthenticated',
    description:
      'The credential is missing, invalid, expired or revoked, the host names no workspace, or ' +
      '`X-Channel-Uuid` names no active channel the credential can act as.',
    headers: z.object({ 'WWW-Authenticate': z.literal('Bearer') }),
    content: jsonContent(
      errorSchema.extend({
        message: z.literal('Unauthenticated.'),
        code: z.literal('token_expired').optional().meta({ description: 'Present when the credential has expired: mint or issue a new one.' }),
      }),
    ),
  },
  403: {
    id: 'Forbidden',
    description:
      'A session token outside its scopes, used from an origin it does not list, or on a route only a ' +
      'backend credential may use (`/sessions`); nothing was changed.',
    headers: z.object(rateLimitHeaders),
    content: jsonContent(errorSchema),
  },
  404: {
    id: 'NotFound',
    description: 'The resource does not exist in this workspace (a malformed id included), or no route has this path.',
    headers: z.object(rateLimitHeaders),
    content: jsonContent(errorSchema),
  },
  405: {
    id: 'MethodNotAllowed',
    description: 'The path exists but not with this method; `Allow` lists the methods it has.',
    headers: z.object({ Allow: z.string().meta({ example: 'GET, HEAD, PATCH' }) }),
    content: jsonContent(errorSchema),
  },
  409: {
    id: 'RequestInFlight',
    description: 'A request with the same `Idempotency-Key` is still running; retry once it has completed.',
    headers: z.object(rateLimitHeaders),
    content: jsonContent(errorSchema),
  },
  413: {
    id: 'PayloadTooLarge',
    description: 'The body is over the size limit (1 MiB by default).',
    headers: z.object(rateLimitHeaders),
    content: jsonContent(errorSchema),
  },
  415: {
    id: 'UnsupportedMediaType',
    description: 'The request has a body that is not declared `Content-Type: application/json`; nothing was changed.',
    headers: z.object(rateLimitHeaders),
    content: jsonContent(errorSchema.extend({ message: z.literal(CONTENT_TYPE_MESSAGE) })),
  },
  422: {
    id: 'ValidationFailed',
    description: 'Invalid input: messages per request field, and on a uniqueness conflict the contact holding the value.',
    headers: z.object({ ...rateLimitHeaders, 'Idempotent-Replayed': replayedHeader }),
    content: jsonContent(validationErrorSchema),
  },
  429: {
    id: 'RateLimited',
    description: "The credential has spent its request budget for now.",
    headers: z.object({ 'Retry-After': retryAfter, ...rateLimitHeaders }),
    content: jsonContent(errorSchema.extend({ message: z.literal('Too many requests.') })),
  },
  502: {
    id: 'BadGateway',
    description: "The channel's provider could not hand the file over (an error, no answer, or more than the size limit).",
    headers: z.object(rateLimitHeaders),
    content: jsonContent(errorSchema),
  },
  500: {
    id: 'InternalError',
    description: 'An unexpected failure; every change of the request was rolled back.',
    content: jsonContent(errorSchema.extend({ message: z.literal('Internal server error') })),
  },
  503: {
    id: 'ServiceUnavailable',
    description: 'The database is unreachable; service resumes by itself when it returns.',
    headers: z.object({ 'Retry-After': retryAfter }),
    content: jsonContent(errorSchema.extend({ message: z.literal('Service unavailable') })),
  },
} satisfies Record<number, ZodOpenApiResponseObject>;

type FailureStatus = keyof typeof failures;

/** The failures a route can answer: those of every authenticated route, those its declaration implies, and its own. */
export function routeFailures(route: RouteDeclaration): FailureStatus[] {
  const statuses = new Set<FailureStatus>([401, 403, 429, 500, 503, ...(route.failures ?? [])]);
  if (route.actsAsChannel ?? true) statuses.add(400);
  // A route without a body still reads one sent to it: none or `{}` is ignored, anything else refused.
  if (route.body || route.method !== 'GET') [400, 413, 415, 422].forEach((s) => statuses.add(s as FailureStatus));
  if (route.query) statuses.add(422);
  if (route.idempotent) [409, 422].forEach((s) => statuses.add(s as FailureStatus));
  return [...statuses].sort((a, b) => a - b);
}

const idempotencyKeyHeader = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/)
  .optional()
  .meta({
    description:
      'Makes the request safe to retry: the same key with the same body within 24 h replays the first ' +
      'answer, a refusal included (with `Idempotent-Replayed: true`); with another body it is a 422. A key ' +
      'is scoped to the credential, the channel it acts as and the route: a connection token sending the ' +
      'same key for another channel (`X-Channel-Uuid`) makes a new request.',
  });

const channelHeader = (actsAsChannel: boolean) =>
  z
    .string()
    .meta({
      format: 'uuid',
      description: actsAsChannel
        ? 'The channel to act as; required when the credential can act as several channels.'
        : 'Not needed here; when sent, it must name a channel the credential can act as, and only that channel is read or changed.',
    })
    .optional();

function operation(route: RouteDeclaration): ZodOpenApiOperationObject {
  const actsAsChannel = route.actsAsChannel ?? true;
  const headers = {
    'X-Channel-Uuid': channelHeader(actsAsChannel),
    ...(route.idempotent ? { 'Idempotency-Key': idempotencyKeyHeader } : {}),
  };
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, { description, schema, contentType }] of Object.entries(route.responses)) {
    responses[status] = {
      description,
      headers: z.object({
        ...rateLimitHeaders,
        ...(route.idempotent ? { 'Idempotent-Replayed': replayedHeader } : {}),
      }),
      ...(schema ? { content: contentType ? { [contentType]: { schema } } : jsonContent(schema) } : {}),
    };
  }
  for (const status of routeFailures(route)) responses[status] = failures[status];
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: [route.description, `Scope: \`${route.scope}\`${route.scope === 'credentials' ? ' (backend credentials only; a session is refused)' : ''}.`].filter(Boolean).join('\n\n'),
    'x-scope': route.scope,
    tags: [route.tag],
    requestParams: {
      ...(route.params ? { path: route.params as z.ZodObject } : {}),
      ...(route.query ? { query: objectOf(route.query) } : {}),
      ...(Object.keys(headers).length ? { header: z.object(headers) } : {}),
    },
    ...(route.body ? { requestBody: { required: true, content: jsonContent(route.body) } } : {}),
    responses,
  };
}

/**
 * A provider webhook as a documented path: no bearer credential (`security: []`), the provider's
 * signature header, and the body the provider posts.
 */
function webhookOperation(route: WebhookDeclaration<never>): ZodOpenApiOperationObject {
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, { description, contentType }] of Object.entries(route.responses)) {
    const content = contentType ? { [contentType]: { schema: z.string() } } : Number(status) >= 400 ? jsonContent(errorSchema) : undefined;
    responses[status] = { description, ...(content ? { content } : {}) };
  }
  // Every webhook can meet these as any request can.
  responses[500] = failures[500];
  responses[503] = failures[503];
  const header = route.signature ? z.object({ [route.signature.header]: z.string().meta({ description: route.signature.description }) }) : undefined;
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [WEBHOOKS_TAG],
    security: [],
    requestParams: {
      path: route.params,
      ...(route.query ? { query: route.query } : {}),
      ...(header ? { header } : {}),
    },
    ...(route.body
      ? { requestBody: { required: true, description: route.body.description, content: { [route.body.contentType]: { schema: z.string() } } } }
      : {}),
    responses,
  };
}

const WEBHOOKS_TAG = 'Provider webhooks';

/** The object schema behind a query schema that prepares its input first (a preprocess). */
function objectOf(schema: z.ZodType): z.ZodObject {
  if (schema instanceof z.ZodObject) return schema;
  if (schema instanceof z.ZodPipe) return objectOf(schema.out as z.ZodType);
  throw new Error('A query schema must be an object schema');
}

const DESCRIPTION = `The Connect API: contacts, channels, templates, messages and conversations of one workspace.

**Authentication.** Every request carries \`Authorization: Bearer <token>\`: a backend credential — a channel API key (\`cak_…\`) or a connection token (\`cct_…\`) — or a browser session token (\`cst_…\`) minted by one with \`POST /sessions\`. The workspace is the request's host name. A credential for several channels names one with \`X-Channel-Uuid\`. An expired credential is a 401 whose body carries \`"code":"token_expired"\`.

**Scopes.** Each operation states the scope it needs (\`x-scope\`): \`read\`, \`send\`, \`contacts\`, \`conversations\`, or \`credentials\` (backend credentials only). Backend credentials hold every scope; a session holds those it was minted with, and is refused anything else with a 403.

**Collections** take \`limit\` (1–100, default 25) and \`cursor\` (the previous page's \`meta.next_cursor\`) and answer \`{"data":[…],"meta":{"per_page","next_cursor","has_more"}}\`.

**Errors.** A validation failure is a 422 with messages per request field under \`errors\`; every other failure is \`{"status":"error","message":"…"}\`. An unknown path is a 404; a known path with another method a 405 with \`Allow\`. \`HEAD\` is answered as \`GET\` without a body.

**Rate limits.** Authenticated answers carry \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`; over the budget, 429 with \`Retry-After\`.`;

/** The declarations the document is rendered from. */
export interface DocumentedRoutes {
  rest: readonly RouteDeclaration[];
  webhooks: readonly WebhookDeclaration<never>[];
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** The OpenAPI 3.1 document of every REST route and provider webhook, rendered from the routes' own declarations. */
export function openApiDocument(routes: DocumentedRoutes) {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes.rest) {
    const path = openApiPath(`${API_PREFIX}${route.path}`);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  for (const route of routes.webhooks) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: webhookOperation(route) };
  }
  return createDocument(
    {
      openapi: '3.1.0',
      info: { title: 'Connect API', version, description: DESCRIPTION },
      // Paths are absolute (REST under /api/connect): the server that serves the document, or the local demo.
      servers: [
        { url: '/', description: 'The server this document is read from. The Host header names the workspace.' },
        { url: 'http://localhost:4000', description: 'npm start with its defaults: the embedded demo workspace (hostname localhost).' },
      ],
      tags: [
        ...['Contacts', 'Messages', 'Conversations', 'Channels', 'Templates', 'Sessions'].map((name) => ({ name })),
        {
          name: WEBHOOKS_TAG,
          description: 'Where providers post replies and delivery statuses (no credential: each request is verified by its provider signature).',
        },
      ],
      security: [{ bearerAuth: [] }],
      paths,
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A channel API key (`cak_…`), a connection token (`cct_…`) or a session token (`cst_…`).' },
        },
        responses: { MethodNotAllowed: failures[405] },
      },
    },
    {
      override: ({ jsonSchema, zodSchema, io }) => {
        if (io === 'input') replaceWithDocumentation(zodSchema, jsonSchema as Record<string, unknown>);
        // zod bounds every integer by JavaScript's safe range; for the API's counts that says nothing.
        if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
        if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      },
    },
  );
}

/** Serves the document, rendered once on first request. */
export function openApiResponse(routes: DocumentedRoutes): () => Response {
  let body: string | undefined;
  return () => {
    body ??= JSON.stringify(openApiDocument(routes));
    return new FetchResponse(body, { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } });
  };
}
