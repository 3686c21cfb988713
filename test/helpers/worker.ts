import { pino } from 'pino';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from '../../src/modules/delivery/delivery.worker.js';
import { defaultProviders } from '../../src/modules/delivery/providers.js';

/** A delivery worker for tests: silent, polling and backing off in milliseconds. Not started. */
export function testWorker(prisma: PrismaClient, overrides: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker {
  return new DeliveryWorker({
    prisma,
    logger: pino({ level: 'silent' }),
    providers: defaultProviders({ timeoutMs: 2000, targets: 'allow' }),
    leaseMs: 5000,
    pollMs: 20,
    backoffMs: 20,
    ...overrides,
  });
}
