import type { AuthenticationError } from '../errors/domain.js';

/*
 * The process's services as requests, services and workers reach them: declared here, beneath
 * everything that uses them, and built above — the bus and its event loads by the realtime engine
 * (src/realtime/), presence by src/modules/activity/ — then handed over by the app (src/app.ts) in
 * AppDeps (docs/architecture.md).
 */

/** What happened, by id only: subscribers load the current state themselves. */
export type DomainEvent =
  | { type: 'message.created'; messageId: string; conversationId: string; workspaceId: string; channelId: string }
  /** A message's status changed (sent, delivered, read, failed), once committed; `broadcastId`: the broadcast that made it, if any. */
  | { type: 'message.updated'; messageId: string; conversationId: string; workspaceId: string; channelId: string; broadcastId?: string | null }
  | { type: 'conversation.updated'; conversationId: string; workspaceId: string; channelId: string }
  /**
   * A broadcast changed other than by its messages' statuses (started, paused, resumed, recipients
   * failed or skipped); `ended`: it finished or was canceled, and changes no more.
   */
  | { type: 'broadcast.updated'; broadcastId: string; workspaceId: string; channelId: string; ended: boolean };

/** A stream that can hand its events on as they come rather than be read (the bus's subscriptions, and streams built on them). */
export interface Listenable<E, End = void> {
  /** `event` for each event, synchronously as it arrives; `end` once, when the stream ends. */
  listen(event: (event: E) => void, end: (last: End) => void): void;
}

/** Whether `stream` can hand its events on as they come. */
export const isListenable = <E, End = void>(stream: object): stream is Listenable<E, End> => typeof (stream as Partial<Listenable<E, End>>).listen === 'function';

export interface EventBus {
  publish(event: DomainEvent): void;
  /**
   * The events of one type, as this process hears them. Each subscriber has its own queue of at
   * most `maxPending` unread events: one that falls further behind (a client that does not read)
   * is cut off — its iteration ends — rather than held in memory. With `accept`, only the events
   * it accepts are queued (tested as each is published: a subscriber's filter costs no iteration).
   */
  subscribe<T extends DomainEvent['type']>(
    type: T,
    accept?: (event: Extract<DomainEvent, { type: T }>) => boolean,
  ): AsyncIterableIterator<Extract<DomainEvent, { type: T }>> & Listenable<Extract<DomainEvent, { type: T }>>;
  /**
   * Listens on a channel of announcements beside the domain events (credential changes), named
   * without the prefix. The listener is called synchronously as each message arrives, over the
   * same Redis connection as the events: by the time an event published after an announcement
   * reaches a subscriber, every listener has heard that announcement. Announcements made in this
   * process are heard at once.
   */
  listen(channel: string, listener: (message: string) => void): () => void;
  /**
   * Tells every listener of `channel`, in this process at once and in the others through Redis
   * (this one may hear it a second time from there). Resolves once Redis has taken the message,
   * or after a short wait without it (logged): an outage of Redis never fails the change being
   * announced.
   */
  announce(channel: string, message: string): Promise<void>;
  /**
   * Whether announcements made by other processes reach this one: Redis is configured and this
   * process is subscribed to it. `onHearing` is told each time that changes; announcements made
   * while it was false are lost.
   */
  readonly hearing: boolean;
  onHearing(listener: (hearing: boolean) => void): () => void;
  dispose(): Promise<void>;
}

/** What subscriptions load for an event, shared by every subscriber of one app (src/realtime/event-loads.ts). */
export interface EventLoads {
  /** The row `load` gives for `event` and `query`, loaded by the first subscriber to ask. */
  load<T>(event: object, query: unknown, load: () => Promise<T>): Promise<T>;
}

/** A workspace user as an activity names them. */
export interface ActivityUser {
  id: string;
  name: string;
}

/** What one user is doing in one conversation, as `conversationActivity` streams it (docs/inbox.md). */
export interface ActivityEvent {
  conversationId: string;
  workspaceId: string;
  user: ActivityUser;
  typing: boolean;
  viewing: boolean;
  at: Date;
}

export interface Presence {
  /** A user typing (or no longer) in a conversation: told to every process's subscribers of it. */
  reportTyping(input: { workspaceId: string; conversationId: string; user: ActivityUser; typing: boolean }): void;
  /**
   * The activity of a conversation, starting with what is known of it now; while it is read, `viewer`
   * (a session's user; none for a backend credential) counts as viewing it on every process.
   */
  watch(input: { workspaceId: string; conversationId: string; viewer: ActivityUser | null }): AsyncIterableIterator<ActivityEvent>;
  dispose(): void;
}

/**
 * What a stream yields once its credential has lapsed, in place of an event: the subscription
 * field's resolver throws its error (src/graphql/scopes.ts), so the client receives one result
 * whose `errors` carry TOKEN_EXPIRED or UNAUTHENTICATED, and then the stream completes.
 */
export class StreamEnd {
  constructor(readonly error: AuthenticationError) {}
}
