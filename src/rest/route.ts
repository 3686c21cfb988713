import type { z } from 'zod';
import type { RequestContext } from '../context/types.js';
import type { RouteCall } from '../http/routes.js';
import type { Scope } from '../context/scopes.js';

/** Where the REST API lives; route paths are relative to it. */
export const API_PREFIX = '/api/connect';

/** The OpenAPI document of the REST API, relative to the prefix; served without credentials. */
export const OPENAPI_PATH = '/openapi.json';

export type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Failures a route answers besides those every authenticated route can (401,
 * 403, 429, 500, 503) and those its declaration implies (a body: 400, 413, 422; a
 * query: 422; an acting channel: 400; idempotency: 409, 422).
 */
export type RouteFailure = 403 | 404 | 422 | 502;

export interface RouteRequest<Params, Query> {
  request: Request;
  url: URL;
  ctx: RequestContext;
  /** Path parameters, parsed with the declared schema. */
  params: Params;
  /** Query parameters (the first value of each), parsed with the declared schema. */
  query: Query;
  /** The JSON body (undefined when empty), within the body size limit. */
  body(): Promise<unknown>;
  /** Ends the connection of an answer whose body fails after its head was sent (false in process). */
  endConnection(): boolean;
}

/**
 * A REST route, declared once: the router serves and validates from it, and the
 * OpenAPI document is rendered from it.
 */
export interface RouteDeclaration<Params extends z.ZodType = z.ZodType, Query extends z.ZodType = z.ZodType> {
  method: RouteMethod;
  /** Relative to /api/connect, with `:name` path parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /**
   * What the caller's credential must hold (docs/browser-apps.md, Scopes): `read` for every
   * GET; `send`, `contacts` or `conversations` for the changes a session may be granted;
   * `credentials` for what only a backend credential may do. A session without it gets 403.
   */
  scope: Scope;
  /** Whether the route acts as one channel (so a multi-channel credential must send X-Channel-Uuid). Default true. */
  actsAsChannel?: boolean;
  /** Whether the route takes an Idempotency-Key. */
  idempotent?: boolean;
  params?: Params;
  query?: Query;
  /** The request body's schema: the one the service parses it with. */
  body?: z.ZodType;
  /** A larger body limit than BODY_LIMIT_BYTES for this route (a bulk write), in bytes. */
  bodyLimitBytes?: number;
  /** The successful answers, by status: JSON unless `contentType` says otherwise (a file); no schema for an answer without a body (204). */
  responses: { [status: number]: { description: string; schema?: z.ZodType; contentType?: string } };
  failures?: readonly RouteFailure[];
  handler(request: RouteRequest<z.output<Params>, z.output<Query>>): Promise<Response>;
}

/** Declares a route; the helper only infers the handler's parameter and query types. */
export function route<Params extends z.ZodType = z.ZodType<Record<string, never>>, Query extends z.ZodType = z.ZodType<Record<string, never>>>(
  declaration: RouteDeclaration<Params, Query>,
): RouteDeclaration<Params, Query> {
  return declaration;
}
