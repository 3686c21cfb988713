import type { Logger } from 'pino';
import {
  AuthenticationError,
  ChannelSelectionError,
  DomainError,
  ForbiddenError,
  NotFoundError,
  ProviderUnavailableError,
  RateLimitedError,
  RequestInFlightError,
  ServiceUnavailableError,
  TokenExpiredError,
  ValidationError,
} from '../errors/domain.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { HttpError, json } from '../http/exchange.js';
import { logUnexpected } from '../errors/log.js';
import { rateLimitHeaders } from '../context/rate-limit.js';

export const INTERNAL_ERROR_BODY = { status: 'error', message: 'Internal server error' } as const;

export interface RestError {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The REST answer to an expected failure, or null for an unexpected one. */
export function expectedRestError(error: unknown): RestError | null {
  if (error instanceof AuthenticationError) {
    // Only an expired credential says why (docs/browser-apps.md): any other refusal tells nothing about the token.
    const body = { status: 'error', message: error.message, ...(error instanceof TokenExpiredError ? { code: 'token_expired' } : {}) };
    return { status: 401, body, headers: { 'www-authenticate': 'Bearer' } };
  }
  if (error instanceof ForbiddenError) return { status: 403, body: { status: 'error', message: error.message } };
  if (error instanceof ChannelSelectionError) return { status: 400, body: { status: 'error', message: error.message } };
  if (error instanceof NotFoundError) return { status: 404, body: { status: 'error', message: error.message } };
  if (error instanceof RequestInFlightError) return { status: 409, body: { status: 'error', message: error.message } };
  if (error instanceof RateLimitedError) {
    return { status: 429, body: { status: 'error', message: error.message }, headers: rateLimitHeaders(error.state, true) };
  }
  if (error instanceof ValidationError) {
    return {
      status: 422,
      body: { message: error.message, errors: error.errors, ...(error.conflict ? { conflict: error.conflict } : {}) },
    };
  }
  if (error instanceof ProviderUnavailableError) return { status: 502, body: { status: 'error', message: error.message } };
  if (error instanceof HttpError) return { status: error.status, body: { status: 'error', message: error.message }, headers: error.headers };
  if (error instanceof ServiceUnavailableError || isDatabaseUnavailable(error)) {
    return { status: 503, body: { status: 'error', message: 'Service unavailable' }, headers: { 'retry-after': '1' } };
  }
  if (error instanceof DomainError) return { status: 400, body: { status: 'error', message: error.message } };
  return null;
}

/** The one place where failures become REST responses. Real messages only below 500. */
export function restErrorResponse(error: unknown, logger: Logger): Response {
  const expected = expectedRestError(error);
  if (expected) return json(expected.status, expected.body, expected.headers);
  logUnexpected(logger, error);
  return json(500, INTERNAL_ERROR_BODY);
}
