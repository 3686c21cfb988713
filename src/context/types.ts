import type { Logger } from 'pino';
import type { EventBus, EventLoads, Presence, StreamEnd } from './services.js';
import type { OpenStreams } from '../lib/streams.js';
import type { OpenedMedia, ProviderDescriptor } from '../providers/provider.js';
import type { Channel, PrismaClient, Workspace } from '../generated/prisma/client.js';
import type { RunSql } from '../db/database.js';
import type { Scopes } from './scopes.js';
import type { CredentialInvalidation } from './credential-invalidation.js';

/** Backend credentials (channel keys, connection tokens) and the sessions they mint for browsers. */
export type CredentialKind = 'channel_key' | 'connection' | 'session';

/** The workspace user a session acts as. */
export interface SessionUser {
  id: string;
  name: string;
  email: string;
}

/** A bearer credential as resolved: what it is, what it may do and, for a session, for whom. */
export interface Credential {
  id: string;
  kind: CredentialKind;
  /** Every scope for a backend credential; a session's own (docs/browser-apps.md). */
  scopes: Scopes;
  /** The user a session acts as; null for backend credentials. */
  user: SessionUser | null;
  /** The browser origins a session is limited to; empty for any (and for backend credentials). */
  origins: readonly string[];
  /** The backend credential that minted a session; null otherwise. */
  mintedById: string | null;
}

/** The authenticated caller, resolved once per request for both transports. */
export interface AuthContext {
  workspace: Workspace;
  credential: Credential;
  /** Every active channel the credential can act as. */
  channels: Channel[];
  /** The acting channel; null when the credential can act as several and none was named. */
  channel: Channel | null;
  /** The connection behind a connection token (or a session's minting one). */
  connectionId: string | null;
  /** When the credential expires, and a session's minting credential: open streams end then. */
  expiresAt: Date | null;
  mintedByExpiresAt: Date | null;
}

export interface RequestContext {
  prisma: PrismaClient;
  /** Runs one statement of a hot path by itself, past Prisma's per-call work on PostgreSQL (`Database.query`). */
  sql: RunSql;
  /** The most a GraphQL operation may cost (GRAPHQL_MAX_COST). */
  maxQueryCost: number;
  logger: Logger;
  auth: AuthContext;
  /** Wakes the delivery worker after a message was committed to the outbox. */
  onMessageQueued?: () => void;
  /** Called after a broadcast is created or resumed: the broadcast runner looks for work at once. */
  onBroadcastQueued?: () => void;
  /** Where committed changes are announced (GraphQL subscriptions). */
  events?: EventBus;
  /** The subscription streams this process holds open, ended at once on shutdown. */
  streams?: OpenStreams;
  /** What subscriptions load for an event, once for every subscriber of the app. */
  eventLoads?: EventLoads;
  /** Tells every process of a change to credentials, and ends open streams whose credential lapses. */
  credentialWatch?: CredentialWatch;
  /** Who views and types in which conversation, across processes. */
  presence?: Presence;
  /** Holds a subscription's stream by the caller's credential (src/realtime/subscriptions.ts). */
  holdStream?: HoldStream;
  /** What is wrong with a GraphQL document against the schema, or null: supplied by the app, which assembles the schema. */
  documentProblem?: (text: string) => string | null;
  /** The providers channels can have: what a send needs of a recipient, which take read receipts. */
  providers: readonly ProviderDescriptor[];
  /** Opens a file a channel's provider holds (an inbound message's media), with the channel's credentials. */
  openMedia?: (channel: Channel, ref: string, limitBytes: number) => Promise<OpenedMedia>;
}

/**
 * What a bearer token admits at a host before a channel is chosen: its workspace, the credential
 * and every active channel it can act as. It depends only on the token and the host, so it can be
 * kept between requests; `expiresAt` bounds how long.
 */
export interface ResolvedCredential {
  workspace: Workspace;
  credential: AuthContext['credential'];
  /** Active channels of the workspace the credential can act as; a connection's in the order they were linked. */
  channels: Channel[];
  /** The connection behind a connection token (or a session's minting one), so that a change to its links can be traced to it. */
  connectionId: string | null;
  /** When the credential expires; checked on every use, so that an expired one is told apart (TOKEN_EXPIRED). */
  expiresAt: Date | null;
  /** When a session's minting credential expires, taking the session with it; null otherwise. */
  mintedByExpiresAt: Date | null;
}

/** What `liveCredentials` tells of one credential. */
export interface LiveCredential {
  /** Past its expiry (it admits nothing, and says so: TOKEN_EXPIRED). */
  expired: boolean;
  /** The active channels it can act as now. */
  channels: Set<string>;
}

/** Looks a bearer token's hash up at a host, in one statement: supplied by the credentials module (src/modules/credentials/). */
export type CredentialLookup = (key: { host: string; tokenHash: string }) => Promise<ResolvedCredential | null>;

/** Why a watched credential no longer admits its stream: it expired; it was revoked or lost its channel; or it could not be checked. */
export type Lapse = 'expired' | 'revoked' | 'unchecked';

/** A stream's hold on its credential (`CredentialWatch.watch`). */
export interface CredentialHold {
  /**
   * Whether an event received now may be delivered: at once while nothing was announced about the
   * credential since it was last checked; otherwise once a check begun after the event arrived has
   * answered. False once the credential has lapsed. Answered synchronously when nothing is to be
   * waited for (the usual case, on every event of every stream).
   */
  clear(): boolean | Promise<boolean>;
  /**
   * `clear()` for a stream that hands events on as they come: the answer when it is known at once,
   * otherwise 'waiting', and `wait` is told it later — never before this returns — with the other
   * streams waiting on the same check, in one loop.
   */
  clearOr(wait: (held: boolean) => void): boolean | 'waiting';
  /** Checks the credential afresh (one statement): whether it still admits the stream. */
  verify(): Promise<boolean>;
  /** Stops watching (the stream ended). */
  release(): void;
}

/**
 * Credentials as the process's open streams see them (src/realtime/credential-watch.ts): changes
 * are announced to every process, and each stream learns within 5 s that its credential lapsed.
 */
export interface CredentialWatch {
  /** Tells this process at once, and the others through Redis, that credentials changed. */
  announce(change: CredentialInvalidation): Promise<void>;
  /**
   * Watches the caller's credential for a stream (or, with `socket`, for a WebSocket itself);
   * `onLapse` is called once, when it lapses.
   */
  watch(auth: AuthContext, onLapse: (lapse: Lapse) => void, options?: { socket?: boolean }): CredentialHold;
  /** How many streams are watched (sockets' own watches not counted). */
  readonly size: number;
  dispose(): void;
}

/**
 * Holds a subscription's stream by the caller's credential (src/realtime/subscriptions.ts): the
 * credential is checked before `source` is subscribed, and once it lapses the stream yields one
 * StreamEnd and completes.
 */
export type HoldStream = <T>(
  ctx: Pick<RequestContext, 'auth' | 'streams' | 'credentialWatch'>,
  source: () => AsyncIterable<T> | Promise<AsyncIterable<T>>,
) => Promise<AsyncIterableIterator<T | StreamEnd>>;
