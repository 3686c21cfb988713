import type { Logger } from 'pino';
import {
  AuthenticationError,
  ChannelSelectionError,
  DomainError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from './domain.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { HttpError, json } from '../rest/http.js';
import { logUnexpected } from './log.js';

export const INTERNAL_ERROR_BODY = { status: 'error', message: 'Internal server error' } as const;

/** The one place where failures become REST responses. Real messages only below 500. */
export function restErrorResponse(error: unknown, logger: Logger): Response {
  if (error instanceof AuthenticationError) {
    return json(401, { status: 'error', message: error.message }, { 'www-authenticate': 'Bearer' });
  }
  if (error instanceof ChannelSelectionError) return json(400, { status: 'error', message: error.message });
  if (error instanceof NotFoundError) return json(404, { status: 'error', message: error.message });
  if (error instanceof ValidationError) {
    return json(422, {
      message: error.message,
      errors: error.errors,
      ...(error.conflict ? { conflict: error.conflict } : {}),
    });
  }
  if (error instanceof HttpError) return json(error.status, { status: 'error', message: error.message }, error.headers);
  if (error instanceof ServiceUnavailableError || isDatabaseUnavailable(error)) {
    return json(503, { status: 'error', message: 'Service unavailable' }, { 'retry-after': '1' });
  }
  if (error instanceof DomainError) return json(400, { status: 'error', message: error.message });
  logUnexpected(logger, error);
  return json(500, INTERNAL_ERROR_BODY);
}
