import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../../src/modules/delivery/delivery.worker.js';
import { onPostgres } from '../../helpers/app.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { sleep } from '../../helpers/load.js';
import { signedHeaders, textMessage, webhookBody, whatsappWorkspace } from '../../helpers/whatsapp-fake.js';
import { appWorker } from '../../helpers/worker.js';

/**
 * A signed webhook of many entries takes longer to process than a lease lasts (4,000 entries took
 * 58 s against a lease of 30 s): it must never be taken up by a second worker while the first
 * still processes it. Here the lease is scaled down with the event.
 */

const ENTRIES = 300;
const LEASE_MS = 300;

let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
const workers: DeliveryWorker[] = [];

beforeAll(async () => {
  app = await appOnOwnDatabase();
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await app?.drop();
});

// Workers in several processes share PostgreSQL; the embedded database serves one process, whose
// statements on its one connection leave a second worker no turn to claim while the first runs.
describe.runIf(onPostgres)('a big inbound event', () => {
  it(`of ${ENTRIES} entries, outliving many leases, is processed by one worker, once`, async () => {
    const ws = await whatsappWorkspace(app.db.prisma);
    const entries = Array.from({ length: ENTRIES }, (_, i) => {
      const phone = `+316${String(20_000_000 + i)}`;
      return [{ phoneNumberId: ws.settings.phoneNumberId, contacts: [{ waId: phone.slice(1), name: `Sender ${i}` }], messages: [textMessage(phone, `entry ${i}`)] }];
    });
    const body = webhookBody(...entries);
    const answer = await app.fetch(ws.host, `/webhooks/whatsapp/${ws.channel.id}`, { method: 'POST', headers: signedHeaders(body, ws.settings.appSecret), body });
    expect(answer.status).toBe(200);

    const started = Date.now();
    for (const id of ['first-worker', 'second-worker']) {
      const worker = appWorker(app, { leaseMs: LEASE_MS, id });
      workers.push(worker);
      worker.start();
      // The first claims it; the second polls beside it from then on.
      await sleep(50);
    }
    const delivery = () => app.db.prisma.delivery.findFirstOrThrow({ where: { inboundEvent: { channelId: ws.channel.id } } });
    while ((await delivery()).status === 'pending') {
      if (Date.now() - started > 120_000) throw new Error('not processed in time');
      await sleep(50);
    }
    // It did outlive its lease many times over, and was attempted once.
    expect(Date.now() - started).toBeGreaterThan(3 * LEASE_MS);
    expect(await delivery()).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(await app.db.prisma.message.count({ where: { channelId: ws.channel.id } })).toBe(ENTRIES);
    expect(app.logs.filter((line) => line.includes('delivery lease lost'))).toEqual([]);
  }, 150_000);
});
