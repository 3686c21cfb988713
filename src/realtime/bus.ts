import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { describeError } from '../errors/log.js';
import { closeRedis, DEFAULT_REDIS_PREFIX, logRedisOutages } from '../lib/redis.js';
import type { DomainEvent, EventBus } from '../context/services.js';

/** Every topic: each process listens to all of them on Redis. */
const TOPICS: readonly DomainEvent['type'][] = ['message.created', 'message.updated', 'conversation.updated', 'broadcast.updated'];

/** How long an announcement may wait for Redis before the caller goes on without it. */
const ANNOUNCE_TIMEOUT_MS = 1000;

/** Events a subscriber may leave unread before it is cut off (SUBSCRIPTION_MAX_PENDING). */
export const DEFAULT_MAX_PENDING = 1000;

/** What travels on Redis: the event and the process that published it (which heard it already). */
interface Envelope {
  origin: string;
  event: DomainEvent;
}

/** One subscriber's queue: events pushed as published, taken as it reads — or handed on at once once it listens. */
class Subscription<E> implements AsyncIterableIterator<E> {
  private readonly queue: E[] = [];
  private waiting: ((result: IteratorResult<E>) => void) | undefined;
  private listener: { event: (event: E) => void; end: () => void } | undefined;
  private ended = false;

  constructor(
    private readonly maxPending: number,
    private readonly onEnd: (self: Subscription<E>, cutOff: boolean) => void,
    private readonly accept: ((event: E) => boolean) | undefined,
  ) {}

  push(event: E): void {
    if (this.ended || (this.accept && !this.accept(event))) return;
    if (this.listener) {
      try {
        this.listener.event(event);
      } catch {
        // A listener that fails ends its own subscription, never the others' delivery.
        this.end(false);
      }
      return;
    }
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ done: false, value: event });
      return;
    }
    if (this.queue.length >= this.maxPending) {
      this.end(true);
      return;
    }
    this.queue.push(event);
  }

  /**
   * Hands each event to `event` as it is published, synchronously, instead of queueing it for
   * next() (what is queued already first); `end` is told once the subscription ends. What
   * `event` cannot deliver at once it must bound itself: nothing is queued here any more.
   */
  listen(event: (event: E) => void, end: () => void): void {
    this.listener = { event, end };
    for (const queued of this.queue.splice(0)) event(queued);
    if (this.ended) end();
  }

  private end(cutOff: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    this.onEnd(this, cutOff);
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.({ done: true, value: undefined });
    this.listener?.end();
  }

  next(): Promise<IteratorResult<E>> {
    const event = this.queue.shift();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<E>> {
    this.end(false);
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

/**
 * Domain events for subscriptions, and announcements (credential changes) beside them. Each
 * process hears its own at once, in process; with `redisUrl` they also reach every other process
 * through Redis pub/sub, on channels under `prefix` (REDIS_PREFIX). Redis is an accelerator, never
 * a dependency (docs/operating-safely.md, Staying up): while it is unreachable, publishing drops what other processes would
 * have heard (nothing waits, nothing throws, the process's own subscribers still hear everything),
 * the outage is logged once each way, and listening resumes by itself when Redis returns.
 */
export function createEventBus(options: { redisUrl?: string | undefined; prefix?: string | undefined; logger: Logger; maxPending?: number }): EventBus {
  const { logger, maxPending = DEFAULT_MAX_PENDING } = options;
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const subscribers = new Map<DomainEvent['type'], Set<Subscription<DomainEvent>>>(TOPICS.map((type) => [type, new Set()]));
  const listeners = new Map<string, Set<(message: string) => void>>();
  const hearingListeners = new Set<(hearing: boolean) => void>();
  let hearing = false;

  const here = (event: DomainEvent) => {
    for (const subscriber of [...(subscribers.get(event.type) ?? [])]) subscriber.push(event);
  };
  const deliver = (channel: string, message: string) => {
    for (const listener of [...(listeners.get(channel) ?? [])]) listener(message);
  };
  const setHearing = (now: boolean) => {
    if (hearing === now) return;
    hearing = now;
    for (const listener of [...hearingListeners]) listener(now);
  };

  const origin = randomUUID();
  let publisher: Redis | undefined;
  let subscriber: Redis | undefined;
  if (options.redisUrl) {
    // Without an offline queue a publish while Redis is away fails at once (and is dropped), rather
    // than piling up in memory; one already written when the connection drops is tried once more.
    publisher = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    // Subscribed afresh on every connection (below), however long the outage.
    subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null, autoResubscribe: false });
    logRedisOutages([publisher, subscriber], logger, 'event bus (Redis)', 'events and announcements reach only the process that made them until it returns');
    const client = subscriber;
    const topicOf = new Map(TOPICS.map((type) => [`${prefix}${type}`, type]));
    client.on('message', (channel: string, message: string) => {
      const type = topicOf.get(channel);
      if (!type) {
        if (channel.startsWith(prefix)) deliver(channel.slice(prefix.length), message);
        return;
      }
      let envelope: Envelope;
      try {
        envelope = JSON.parse(message) as Envelope;
      } catch {
        return;
      }
      if (envelope?.origin === origin || envelope?.event?.type !== type) return;
      here(envelope.event);
    });
    // Hearing starts once Redis confirms every channel, on each new connection.
    client.on('ready', () => {
      const channels = [...topicOf.keys(), ...[...listeners.keys()].map((channel) => `${prefix}${channel}`)];
      client.subscribe(...channels).then(
        () => setHearing(true),
        (error: unknown) => logger.warn({ err: describeError(error) }, 'event bus: could not subscribe'),
      );
    });
    client.on('close', () => setHearing(false));
  }

  return {
    publish(event) {
      here(event);
      if (publisher?.status !== 'ready') return;
      const envelope: Envelope = { origin, event };
      // A publish that fails (Redis gone meanwhile) is dropped: the outage itself is what gets logged.
      publisher.publish(`${prefix}${event.type}`, JSON.stringify(envelope)).catch(() => {});
    },
    subscribe(type, accept) {
      const set = subscribers.get(type)!;
      const subscription = new Subscription<DomainEvent>(
        maxPending,
        (self, cutOff) => {
          set.delete(self);
          if (cutOff) logger.warn({ type, maxPending }, 'subscription cut off: the client does not read');
        },
        accept as ((event: DomainEvent) => boolean) | undefined,
      );
      set.add(subscription);
      return subscription as never;
    },
    listen(channel, listener) {
      let set = listeners.get(channel);
      if (!set) {
        listeners.set(channel, (set = new Set()));
        if (subscriber?.status === 'ready') {
          subscriber.subscribe(`${prefix}${channel}`).catch((error: unknown) => logger.warn({ err: describeError(error) }, 'event bus: could not subscribe'));
        }
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
      const published = publisher.publish(`${prefix}${channel}`, message);
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
      for (const set of subscribers.values()) for (const subscription of [...set]) await subscription.return();
      await Promise.all([publisher, subscriber].filter((client): client is Redis => !!client).map(closeRedis));
    },
  };
}
