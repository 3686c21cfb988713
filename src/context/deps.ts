import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { Env } from '../env.js';
import type { EventBus, EventLoads, Presence } from './services.js';
import type { RateLimiter } from './rate-limit.js';
import type { CredentialCache } from './credential-cache.js';
import type { CredentialLookup, CredentialWatch, HoldStream, RequestContext } from './types.js';
import type { OpenStreams } from '../lib/streams.js';
import type { Sealer } from '../lib/sealed.js';
import type { Providers } from '../providers/registry.js';
import type { Tracing } from '../lib/tracing.js';

/** What the whole process shares: built once at start, passed explicitly. */
export interface AppDeps {
  db: Database;
  env: Env;
  logger: Logger;
  /** Wakes the delivery worker of this process, when it runs one. */
  onMessageQueued?: () => void;
  /** Wakes the broadcast runner of this process, when it runs one. */
  onBroadcastQueued?: () => void;
  /** Request budgets per credential; created from the settings by the app when not given (null: off). */
  rateLimiter?: RateLimiter | null;
  /** Domain events; created from REDIS_URL by the app when not given. */
  events?: EventBus;
  /** Resolved credentials kept between requests; created from the settings by the app when not given (null: off). */
  credentialCache?: CredentialCache | null;
  /** Announces credential changes and ends streams whose credential lapses; created by the app when not given. */
  credentialWatch?: CredentialWatch;
  /** The subscription streams open on this app; created by the app when not given. */
  streams?: OpenStreams;
  /** What subscriptions load for an event, shared by the app's subscribers; the app's own, always made by it. */
  eventLoads?: EventLoads;
  /** Opens and seals stored secrets (null: none can be stored, as on PostgreSQL without SECRETS_KEY). */
  sealer?: Sealer | null;
  /** The channels' providers: the media endpoint fetches inbound files through them. */
  providers?: Providers;
  /** Who views and types in which conversation (docs/inbox.md); created by the app when not given. */
  presence?: Presence;
  /** Holds a subscription's stream by its credential; the realtime engine's, supplied by the app. */
  holdStream?: HoldStream;
  /** Looks credentials up; supplied by the app from the credentials module when not given. */
  lookupCredential?: CredentialLookup;
  /** What is wrong with a GraphQL document against the schema, or null; supplied by the app. */
  documentProblem?: (text: string) => string | null;
  /** Opens an inbound message's file through its channel's provider; supplied by the app from the providers. */
  openMedia?: RequestContext['openMedia'];
  /** Spans for REST handlers, when OpenTelemetry is on (src/telemetry.ts); absent, nothing is traced. */
  tracing?: Tracing;
}
