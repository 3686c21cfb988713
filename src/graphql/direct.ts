import type http from 'node:http';
import type { ExecutionResult } from 'graphql';
import type { AppDeps } from '../context/deps.js';
import type { AuthContext } from '../context/types.js';
import { authenticateRequest, requestContext } from '../context/authenticate.js';
import { recordedRateLimitHeaders } from '../context/rate-limit.js';
import { graphqlErrorResponse } from '../errors/graphql.js';
import { describeError } from '../errors/log.js';
import { INTERNAL_ERROR_BODY, restErrorResponse } from '../errors/rest.js';
import type { AppMetrics } from '../metrics/metrics.js';
import { HttpError } from '../rest/http.js';
import { directResponder, headerRecord, nodeHeaders, readNodeBody, type DirectAnswer, type DirectRoute } from '../rest/node.js';
import type { CompiledAnswers } from './compiled-answer.js';

/** A request this route began and yoga finishes: its body, its caller, and the result its operation came to here, if it ran. */
export interface HandedOver {
  request: http.IncomingMessage;
  response: http.ServerResponse;
  body: Buffer;
  caller: AuthContext;
  /** What the rate limit counted the request as (`carryRateLimit`). */
  countedAs: object;
  errors: ExecutionResult | undefined;
  startedAt: number;
}

/** UTF-8 text as fetch's `text()` decodes it: a leading byte order mark is dropped. */
export function utf8(bytes: Buffer): string {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.toString('utf8', 3) : bytes.toString('utf8');
}

/** A fetch Response as a direct answer, with the headers a counted request carries. */
async function fromResponse(response: Response, extra: Record<string, string>): Promise<DirectAnswer> {
  return { status: response.status, headers: { ...headerRecord(response.headers), ...extra }, body: await response.text() };
}

/**
 * GraphQL requests served straight from node:http: a POST to /graphql with a JSON body, asking
 * for a JSON answer, from a caller that is no browser (no Origin header: CORS answers are yoga's).
 * The body is read within BODY_LIMIT_BYTES and the caller authenticated and counted as the app
 * does; an operation the app's yoga has already validated and run is answered from the compiled
 * answers (src/graphql/compiled-answer.ts), written with one `end`, with the request metrics, the
 * access line and `Vary: Origin` as the app's plugins record them. Anything else — a text not
 * seen yet, a result with errors, a body yoga must refuse — is handed over to yoga (`handOver`)
 * with what was read and resolved, so that nothing is read, counted or run twice.
 */
export function directGraphql(options: {
  deps: AppDeps;
  compiled: CompiledAnswers;
  metrics: AppMetrics;
  varyOnOrigin: boolean;
  handOver: (request: HandedOver) => void;
}): DirectRoute {
  const { deps, compiled, metrics, handOver } = options;
  const { logger } = deps;
  const send = directResponder({ logger, observe: metrics.observe, varyOnOrigin: options.varyOnOrigin });

  async function serve(request: http.IncomingMessage, response: http.ServerResponse, headers: Pick<Headers, 'get'>): Promise<void> {
    const exchange = { method: 'POST', path: '/graphql', route: 'graphql' as string | undefined, startedAt: performance.now() };
    let body: Buffer;
    try {
      body = await readNodeBody(request, deps.env.BODY_LIMIT_BYTES);
    } catch (error) {
      // A body over the limit is the app's 413; a client that went away before sending it all gets nothing.
      if (error instanceof HttpError) send(response, exchange, await fromResponse(restErrorResponse(error, logger), {}));
      else response.destroy();
      return;
    }
    // What authentication reads the request by, and what the rate limit counts it as.
    const countedAs = { headers };
    let caller: AuthContext;
    try {
      caller = await authenticateRequest(deps, countedAs);
    } catch (error) {
      send(response, exchange, await fromResponse(graphqlErrorResponse(error, logger), recordedRateLimitHeaders(countedAs)));
      return;
    }
    const outcome = await compiled
      .answer(headers, utf8(body), requestContext(deps, caller), (document, name) => {
        exchange.route = metrics.operationRoute(document, name);
      })
      .catch((error: unknown) => {
        // A defect of the shortcut, not of the request: yoga answers it.
        logger.warn({ err: describeError(error) }, 'graphql: compiled answer failed, left to yoga');
        return undefined;
      });
    if (outcome && 'answer' in outcome) {
      const { contentType, body: text } = outcome.answer;
      send(response, exchange, { status: 200, headers: { 'content-type': contentType, ...recordedRateLimitHeaders(countedAs) }, body: text });
      return;
    }
    handOver({ request, response, body, caller, countedAs, errors: outcome?.errors, startedAt: exchange.startedAt });
  }

  return (request, response) => {
    if (request.method !== 'POST' || request.url !== '/graphql' || request.headers.origin !== undefined) return false;
    const headers = nodeHeaders(request);
    // A subscription (an event stream) or a body yoga alone reads is yoga's from the start.
    if (!compiled.takes(headers)) return false;
    serve(request, response, headers).catch((error: unknown) => {
      logger.error({ err: describeError(error) }, 'graphql request failed');
      if (!response.headersSent) send(response, { method: 'POST', path: '/graphql', route: 'graphql', startedAt: performance.now() }, { status: 500, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(INTERNAL_ERROR_BODY) });
      else response.destroy();
    });
    return true;
  };
}
