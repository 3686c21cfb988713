import type { Logger } from 'pino';
import type { EventBus } from '../events/bus.js';
import type { OpenStreams } from '../lib/streams.js';
import type { OpenedMedia } from '../providers/whatsapp/media.js';
import type { Channel, PrismaClient, Workspace } from '../generated/prisma/client.js';
import type { RunSql } from '../db/database.js';

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
  /** Runs one statement of a hot path by itself, past Prisma's per-call work on PostgreSQL (`Database.query`). */
  sql: RunSql;
  /** The most a GraphQL operation may cost (GRAPHQL_MAX_COST). */
  maxQueryCost: number;
  logger: Logger;
  auth: AuthContext;
  /** Wakes the delivery worker after a message was committed to the outbox. */
  onMessageQueued?: () => void;
  /** Where committed changes are announced (GraphQL subscriptions). */
  events?: EventBus;
  /** The subscription streams this process holds open, ended at once on shutdown. */
  streams?: OpenStreams;
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
  /** The connection behind a connection token, so that a change to its links can be traced to it. */
  connectionId: string | null;
  expiresAt: Date | null;
}
