/** Expected failures. Each transport maps them in exactly one place. */
export abstract class DomainError extends Error {
  /**
   * Set on a failure that refuses a whole request although it is raised inside the operation (a
   * subscription refused before its stream starts): HTTP answers it with its status (docs/graphql.md).
   */
  refusesRequest = false;
}

/** Credentials missing, invalid, revoked or unavailable; also an unknown workspace host. */
export class AuthenticationError extends DomainError {
  constructor() {
    super('Unauthenticated.');
  }
}

/**
 * A credential that was valid and has reached its expiry: told apart from any other refusal
 * (docs/browser-apps.md), so that a client knows to refresh it rather than give up.
 */
export class TokenExpiredError extends AuthenticationError {}

/** A known caller asking for what its credential does not allow (a session outside its scopes or origins). */
export class ForbiddenError extends DomainError {}

/** A credential that can act as several channels was used without X-Channel-Uuid. */
export class ChannelSelectionError extends DomainError {
  constructor() {
    super(
      'This credential can act as several channels: send the X-Channel-Uuid header set to the UUID of the target channel.',
    );
  }
}

export class NotFoundError extends DomainError {
  constructor(resource: string) {
    super(`${resource} not found.`);
  }
}

export interface Conflict {
  field: string;
  contactId: string;
}

/** Invalid input: messages per request field (dotted paths for nested fields). */
export class ValidationError extends DomainError {
  constructor(
    readonly errors: Record<string, string[]>,
    readonly conflict?: Conflict,
    /** The fields refused because another record holds their value. */
    readonly taken: string[] = conflict ? [conflict.field] : [],
  ) {
    super(Object.values(errors)[0]?.[0] ?? 'The given data was invalid.');
  }

  static field(field: string, message: string, conflict?: Conflict): ValidationError {
    return new ValidationError({ [field]: [message] }, conflict);
  }
}

/** Another request with the same Idempotency-Key is still running. */
export class RequestInFlightError extends DomainError {
  constructor() {
    super('A request with this Idempotency-Key is still in progress; retry once it has completed.');
  }
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the budget renews. */
  resetS: number;
}

/** The credential has spent its request budget for now. */
export class RateLimitedError extends DomainError {
  constructor(readonly state: RateLimitState) {
    super('Too many requests.');
  }
}

/** A request the operator tools reject (unknown hostname, duplicate, bad flag). */
export class InputError extends DomainError {}

/** A channel's provider could not hand over what was asked of it (a file of an inbound message): 502. */
export class ProviderUnavailableError extends DomainError {}

/** The database does not answer: every request gets 503 until it does again. */
export class ServiceUnavailableError extends DomainError {
  constructor() {
    super('Service unavailable');
  }
}
