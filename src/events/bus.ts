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

export interface EventBus {
  publish(event: DomainEvent): void;
  subscribe<T extends DomainEvent['type']>(type: T): AsyncIterable<Extract<DomainEvent, { type: T }>>;
  dispose(): Promise<void>;
}

/**
 * Domain events for subscriptions: in-process by default, shared by every process
 * through Redis pub/sub when `redisUrl` is given.
 */
export function createEventBus(options: { redisUrl?: string | undefined; logger: Logger }): EventBus {
  const clients: Redis[] = [];
  let eventTarget;
  if (options.redisUrl) {
    const connect = () => {
      const client = new Redis(options.redisUrl!, { lazyConnect: false, maxRetriesPerRequest: 3 });
      client.on('error', (error) => options.logger.warn({ err: describeError(error) }, 'redis event bus error'));
      clients.push(client);
      return client;
    };
    eventTarget = createRedisEventTarget({ publishClient: connect(), subscribeClient: connect() });
  }
  const pubsub = createPubSub<Topics>(eventTarget ? { eventTarget } : {});
  return {
    publish(event) {
      (pubsub.publish as (topic: string, payload: DomainEvent) => void)(event.type, event);
    },
    subscribe(type) {
      return pubsub.subscribe(type as never) as never;
    },
    async dispose() {
      await Promise.all(clients.map((client) => client.quit().catch(() => client.disconnect())));
    },
  };
}
