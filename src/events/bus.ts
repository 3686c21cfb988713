import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { describeError } from '../errors/log.js';

/** What happened, by id only: subscribers load the current state themselves. */
export type DomainEvent =
  | { type: 'message.created'; messageId: string; conversationId: string; workspaceId: string; channelId: string }
  | { type: 'conversation.updated'; conversationId: string; workspaceId: string; channelId: string };

type Topics = { [E in DomainEvent as E['type']]: [E] };

/** How long an announcement may wait for Redis before the caller goes on without it. */
const ANNOUNCE_TIMEOUT_MS = 1000;

export interface EventBus {
  publish(event: DomainEvent): void;
  subscribe<T extends DomainEvent['type']>(type: T): AsyncIterable<Extract<DomainEvent, { type: T }>>;
  /**
   * Listens on a channel of announcements beside the domain events (credential changes). The
   * listener is called synchronously as each message arrives, over the same Redis connection as
   * the events: by the time an event published after an announcement reaches a subscriber, every
   * listener has heard that announcement. Announcements made in this process are heard at once.
   */
  listen(channel: string, listener: (message: string) => void): () => void;
  /**
   * Tells every listener of `channel`, in this process at once and in the others through Redis
   * (this one hears it a second time from there).
   * Resolves once Redis has taken the message, or after a short wait without it (logged): an
   * outage of Redis never fails the change being announced.
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

/**
 * Domain events for subscriptions: in-process by default, shared by every process
 * through Redis pub/sub when `redisUrl` is given.
 */
export function createEventBus(options: { redisUrl?: string | undefined; logger: Logger }): EventBus {
  const { logger } = options;
  const clients: Redis[] = [];
  const listeners = new Map<string, Set<(message: string) => void>>();
  const hearingListeners = new Set<(hearing: boolean) => void>();
  let hearing = false;
  let publisher: Redis | undefined;
  let subscriber: Redis | undefined;
  let eventTarget;
  if (options.redisUrl) {
    // A subscriber's commands wait for Redis to come back rather than fail: nothing awaits them.
    const connect = (maxRetriesPerRequest: number | null) => {
      const client = new Redis(options.redisUrl!, { lazyConnect: false, maxRetriesPerRequest });
      client.on('error', (error) => logger.warn({ err: describeError(error) }, 'redis event bus error'));
      clients.push(client);
      return client;
    };
    const publishing = (publisher = connect(3));
    subscriber = connect(null);
    // An event published while Redis is away is lost (CONTRACT §10), never an unhandled rejection.
    const publishClient = {
      publish: (channel: string, message: string) =>
        publishing.publish(channel, message).catch((error: unknown) => logger.warn({ err: describeError(error) }, 'event not published: Redis out of reach')),
    } as unknown as Redis;
    eventTarget = createRedisEventTarget({ publishClient, subscribeClient: subscriber });
  }
  const pubsub = createPubSub<Topics>(eventTarget ? { eventTarget } : {});

  const deliver = (channel: string, message: string) => {
    for (const listener of [...(listeners.get(channel) ?? [])]) listener(message);
  };
  const setHearing = (now: boolean) => {
    if (hearing === now) return;
    hearing = now;
    for (const listener of [...hearingListeners]) listener(now);
  };

  if (subscriber) {
    const client = subscriber;
    client.on('message', (channel: string, message: string) => deliver(channel, message));
    // Hearing starts once Redis confirms every channel listened on, on each new connection.
    client.on('ready', () => {
      const channels = [...listeners.keys()];
      (channels.length ? client.subscribe(...channels) : Promise.resolve()).then(
        () => setHearing(true),
        (error: unknown) => logger.warn({ err: describeError(error) }, 'cannot subscribe to announcements'),
      );
    });
    client.on('close', () => setHearing(false));
  }

  return {
    publish(event) {
      (pubsub.publish as (topic: string, payload: DomainEvent) => void)(event.type, event);
    },
    subscribe(type) {
      return pubsub.subscribe(type as never) as never;
    },
    listen(channel, listener) {
      let set = listeners.get(channel);
      if (!set) {
        listeners.set(channel, (set = new Set()));
        subscriber?.subscribe(channel).catch((error: unknown) => logger.warn({ err: describeError(error) }, 'cannot subscribe to announcements'));
      }
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
    async announce(channel, message) {
      deliver(channel, message);
      if (!publisher) return;
      let timer: NodeJS.Timeout | undefined;
      const published = publisher.publish(channel, message);
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not take the announcement within ${ANNOUNCE_TIMEOUT_MS} ms`)), ANNOUNCE_TIMEOUT_MS);
      });
      try {
        await Promise.race([published, timeout]);
      } catch (error) {
        published.catch(() => {});
        logger.warn({ err: describeError(error) }, 'announcement not published: other processes learn of it by their own checks');
      } finally {
        clearTimeout(timer);
      }
    },
    get hearing() {
      return hearing;
    },
    onHearing(listener) {
      hearingListeners.add(listener);
      return () => {
        hearingListeners.delete(listener);
      };
    },
    async dispose() {
      setHearing(false);
      // A client that is not connected would wait for Redis to quit: it is let go of at once.
      await Promise.all(clients.map((client) => (client.status === 'ready' ? client.quit().catch(() => client.disconnect()) : client.disconnect())));
    },
  };
}
