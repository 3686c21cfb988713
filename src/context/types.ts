import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { Env } from '../env.js';
import type { EventBus } from '../events/bus.js';
import type { RateLimiter } from './rate-limit.js';
import type { CredentialCache } from './credential-cache.js';
import type { Channel, PrismaClient, Workspace } from '../generated/prisma/client.js';
import type { CompiledAnswers } from '../graphql/compiled-answer.js';

/** What the whole process shares: built once at start, passed explicitly. */
export interface AppDeps {
  db: Database;
  env: Env;
  logger: Logger;
  /** Wakes the delivery worker of this process, when it runs one. */
  onMessageQueued?: () => void;
  /** Request budgets per credential; created from the settings by the app when not given (null: off). */
  rateLimiter?: RateLimiter | null;
  /** Domain events; created from REDIS_URL by the app when not given. */
  events?: EventBus;
  /** Resolved credentials kept between requests; created from the settings by the app when not given (null: off). */
  credentialCache?: CredentialCache | null;
  /** The app's answers from compiled queries (src/graphql/compiled-answer.ts), one app's only; created by the app when not given. */
  compiledAnswers?: CompiledAnswers;
}

/** The authenticated caller, resolved once per request for both transports. */
export interface AuthContext {
  workspace: Workspace;
  credential: { id: string; kind: 'channel_key' | 'connection' };
  /** Every active channel the credential can act as. */
  channels: Channel[];
  /** The acting channel; null when the credential can act as several and none was named. */
  channel: Channel | null;
}

export interface RequestContext {
  prisma: PrismaClient;
  /** The most a GraphQL operation may cost (GRAPHQL_MAX_COST). */
  maxQueryCost: number;
  logger: Logger;
  auth: AuthContext;
  /** Wakes the delivery worker after a message was committed to the outbox. */
  onMessageQueued?: () => void;
  /** Where committed changes are announced (GraphQL subscriptions). */
  events?: EventBus;
}
