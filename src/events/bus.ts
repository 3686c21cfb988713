import { randomUUID } from 'node:crypto';
import { createPubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeRedis, DEFAULT_REDIS_PREFIX, logRedisOutages } from '../lib/redis.js';

/** What happened, by id only: subscribers load the current state themselves. */
export type DomainEvent =
  | { type: 'message.created'; messageId: string; conversationId: string; workspaceId: string; channelId: string }
  | { type: 'conversation.updated'; conversationId: string; workspaceId: string; channelId: string };

type Topics = { [E in DomainEvent as E['type']]: [E] };

/** Every topic: each process listens to all of them on Redis. */
const TOPICS: readonly DomainEvent['type'][] = ['message.created', 'conversation.updated'];

export interface EventBus {
  publish(event: DomainEvent): void;
  subscribe<T extends DomainEvent['type']>(type: T): AsyncIterable<Extract<DomainEvent, { type: T }>>;
  dispose(): Promise<void>;
}

/** What travels on Redis: the event and the process that published it (which heard it already). */
interface Envelope {
  origin: string;
  event: DomainEvent;
}

/**
 * Domain events for subscriptions. Each process hears its own events at once, in process; with
 * `redisUrl` they are also published to every other process through Redis pub/sub, on channels
 * under `prefix` (REDIS_PREFIX). Redis is an accelerator, never a dependency (CONTRACT §10):
 * while it is unreachable, publishing drops what other processes would have heard (nothing
 * waits, nothing throws, the process's own subscribers still hear everything), the outage is
 * logged once each way, and listening resumes by itself when Redis returns.
 */
export function createEventBus(options: { redisUrl?: string | undefined; prefix?: string | undefined; logger: Logger }): EventBus {
  const pubsub = createPubSub<Topics>();
  const here = (event: DomainEvent) => (pubsub.publish as (topic: string, payload: DomainEvent) => void)(event.type, event);
  const subscribe = <T extends DomainEvent['type']>(type: T) => pubsub.subscribe(type as never) as never;
  if (!options.redisUrl) return { publish: here, subscribe, dispose: async () => {} };

  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const channelOf = (type: string) => `${prefix}${type}`;
  const origin = randomUUID();
  // Without an offline queue a publish while Redis is away fails at once (and is dropped), rather
  // than piling up in memory; one already written when the connection drops is tried once more.
  const publisher = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  // Subscribed once: ioredis subscribes again on every reconnection, however long the outage.
  const subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  logRedisOutages([publisher, subscriber], options.logger, 'event bus (Redis)', 'events reach only subscribers of the process that published them until it returns');
  const channels = new Map(TOPICS.map((type) => [channelOf(type), type]));
  subscriber.on('message', (channel: string, message: string) => {
    const type = channels.get(channel);
    if (!type) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message) as Envelope;
    } catch {
      return;
    }
    if (envelope?.origin === origin || envelope?.event?.type !== type) return;
    here(envelope.event);
  });
  subscriber.subscribe(...channels.keys()).catch((error: Error) => options.logger.warn({ err: { message: error.message } }, 'event bus: could not subscribe'));

  return {
    publish(event) {
      here(event);
      if (publisher.status !== 'ready') return;
      const envelope: Envelope = { origin, event };
      // A publish that fails (Redis gone meanwhile) is dropped: the outage itself is what gets logged.
      publisher.publish(channelOf(event.type), JSON.stringify(envelope)).catch(() => {});
    },
    subscribe,
    async dispose() {
      await Promise.all([closeRedis(publisher), closeRedis(subscriber)]);
    },
  };
}
