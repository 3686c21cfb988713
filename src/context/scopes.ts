import { ForbiddenError } from '../errors/domain.js';

/**
 * What a session may be granted (docs/browser-apps.md): `read` — every GET, query and subscription; `send`
 * — sending messages; `contacts` — creating and updating contacts; `conversations` — closing,
 * reopening and the other changes to a conversation; `broadcasts` — creating and steering
 * broadcasts, granted only when asked for (docs/broadcasts.md).
 */
export const SESSION_SCOPES = ['read', 'send', 'contacts', 'conversations', 'broadcasts'] as const;
export type SessionScope = (typeof SESSION_SCOPES)[number];

/** What a session is granted when its minting names no scopes: never `broadcasts`. */
export const DEFAULT_SESSION_SCOPES: readonly SessionScope[] = ['read', 'send', 'contacts', 'conversations'];

/**
 * The scope an operation needs, stated where it is declared (a REST route, a GraphQL root field).
 * `credentials` — minting, listing and revoking sessions, anything else that manages
 * credentials, and bulk contact imports — belongs to backend credentials only: no session ever holds it.
 */
export type Scope = SessionScope | 'credentials';

/** Every scope, in the order answers list them. */
export const SCOPES: readonly Scope[] = [...SESSION_SCOPES, 'credentials'];

/** A credential's scopes, as a lookup. */
export type Scopes = Readonly<Record<Scope, boolean>>;

/** Channel keys and connection tokens: privileged, every scope. */
export const BACKEND_SCOPES: Scopes = Object.freeze({ read: true, send: true, contacts: true, conversations: true, broadcasts: true, credentials: true });

/** A session's scopes from the names stored with it; names this version does not know grant nothing. */
export function sessionScopes(names: readonly string[]): Scopes {
  return Object.freeze({
    read: names.includes('read'),
    send: names.includes('send'),
    contacts: names.includes('contacts'),
    conversations: names.includes('conversations'),
    broadcasts: names.includes('broadcasts'),
    credentials: false,
  });
}

const REFUSALS: Record<Scope, string> = {
  read: 'This session may not read: it lacks the read scope.',
  send: 'This session may not send messages: it lacks the send scope.',
  contacts: 'This session may not change contacts: it lacks the contacts scope.',
  conversations: 'This session may not change conversations: it lacks the conversations scope.',
  broadcasts: 'This session may not create or change broadcasts: it lacks the broadcasts scope.',
  credentials: 'Only a backend credential (a channel key or a connection token) may do this: managing credentials, registering documents, importing contacts. A session never can.',
};

/** Throws ForbiddenError (REST 403, GraphQL FORBIDDEN) unless the caller's credential holds `scope`. */
export function requireScope(credential: { scopes: Scopes }, scope: Scope): void {
  if (!credential.scopes[scope]) throw new ForbiddenError(REFUSALS[scope]);
}
