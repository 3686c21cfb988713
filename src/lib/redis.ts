import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { describeError } from '../errors/log.js';

/**
 * What the gateway keeps in Redis lives under one prefix (REDIS_PREFIX): pub/sub channels and
 * keys alike, so that deployments sharing a Redis server never hear each other's events,
 * credential announcements or rate-limit counts.
 */
export const DEFAULT_REDIS_PREFIX = 'connect:';

/**
 * Logs an outage of the Redis connections a component uses once each way: a warning at the
 * first failure (saying what the component does meanwhile), `reachable again` once every
 * connection is ready after one. The reconnection attempts in between, which ioredis reports
 * as errors every few hundred milliseconds, are not logged. The first time every connection is
 * ready, `connected` is logged, so that an operator sees the start reach Redis.
 */
export function logRedisOutages(clients: Redis[], logger: Logger, what: string, meanwhile: string): void {
  const down = new Set<Redis>();
  const ready = new Set<Redis>();
  let connected = false;
  let outage = false;
  for (const client of clients) {
    client.on('error', (error: unknown) => {
      down.add(client);
      if (outage) return;
      outage = true;
      logger.warn({ err: describeError(error) }, `${what} unreachable: ${meanwhile}`);
    });
    client.on('ready', () => {
      down.delete(client);
      ready.add(client);
      if (!connected && ready.size === clients.length) {
        connected = true;
        logger.info(`${what} connected`);
      }
      if (!outage || down.size > 0) return;
      outage = false;
      logger.info(`${what} reachable again`);
    });
  }
}

/** Closes a client: politely when connected, at once otherwise (QUIT would wait for a Redis that is gone). */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}
