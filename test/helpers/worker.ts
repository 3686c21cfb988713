import { pino } from 'pino';
import type { Database } from '../../src/db/database.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from '../../src/modules/delivery/delivery.worker.js';
import { PROVIDERS, createProviders, type ProviderOptions, type Providers } from '../../src/providers/registry.js';
import type { ProviderDescriptor } from '../../src/providers/provider.js';
import { testSealer } from './secrets.js';
import type { EventBus } from '../../src/context/services.js';
import { processInboundEvent } from '../../src/modules/inbound/inbound.worker.js';

/** Providers as a test process builds them: private targets allowed, provider APIs at a local port nothing answers unless a test gives its fake. */
export function testProviders(overrides: Partial<ProviderOptions> = {}, list: readonly ProviderDescriptor[] = PROVIDERS): Providers {
  return createProviders(
    {
      timeoutMs: 2000,
      targets: 'allow',
      publicUrl: 'http://localhost:4000',
      ...overrides,
      settings: { WHATSAPP_API_URL: 'http://127.0.0.1:9', TWILIO_API_URL: 'http://127.0.0.1:9', ...overrides.settings },
    },
    list,
  );
}

/** A delivery worker for tests on `db`, as a server builds one: silent, polling and backing off in milliseconds. Not started. */
export function testWorker(db: Pick<Database, 'prisma' | 'query'>, overrides: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker {
  return new DeliveryWorker({
    prisma: db.prisma,
    sql: db.query,
    logger: pino({ level: 'silent' }),
    providers: testProviders(),
    sealer: testSealer,
    leaseMs: 5000,
    pollMs: 20,
    backoffMs: 20,
    ...overrides,
  });
}

/**
 * A worker beside a test app, as a server process builds one: the app's logger (its lines in
 * `app.logs`), the app's providers, and inbound events processed onto the app's event bus (so
 * GraphQL subscriptions hear replies). Not started.
 */
export function appWorker(
  app: { db: Pick<Database, 'prisma' | 'query'>; logger: import('pino').Logger; events: EventBus; providers: Providers },
  overrides: Partial<DeliveryWorkerOptions> = {},
): DeliveryWorker {
  const { prisma } = app.db;
  return testWorker(app.db, {
    logger: app.logger,
    providers: app.providers,
    events: app.events,
    inbound: (eventId) => processInboundEvent({ prisma, logger: app.logger, events: app.events, parsers: app.providers.parsers, sealer: testSealer }, eventId),
    ...overrides,
  });
}
