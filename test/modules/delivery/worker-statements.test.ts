import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel } from '../../../src/modules/channels/channels.service.js';
import { createUser } from '../../../src/modules/users/users.service.js';
import { createWebhook } from '../../../src/modules/webhooks/webhooks.service.js';
import { createWorkspace } from '../../../src/modules/workspaces/workspaces.service.js';
import { uniqueHost } from '../../helpers/factories.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { startReceiver } from '../../helpers/receiver.js';
import { restClient } from '../../helpers/rest.js';
import { testSealer } from '../../helpers/secrets.js';
import { WHATSAPP_SETTINGS, startWhatsAppFake, whatsappWorkspace, type WhatsAppFake } from '../../helpers/whatsapp-fake.js';
import { testProviders, testWorker } from '../../helpers/worker.js';

/*
 * The delivery worker's statement budget per message sent (docs/architecture.md, Statement budgets, as
 * test/rest/statements.test.ts keeps the requests'): the worker shares the event loop and the
 * connection pool with request handling, so every statement it spends on a message adds to
 * both. Sending one message is the claim (which reads what sending needs), one statement per
 * part a provider records, and one statement recording the outcome with its events. Prisma's
 * query log shows an interactive transaction's COMMIT: a budget met shows none is used.
 */

let fake: WhatsAppFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let statements: string[] = [];
beforeAll(async () => {
  fake = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  // A database of its own: the worker claims every due delivery.
  app = await appOnOwnDatabase({
    onQuery: (sql) => statements.push(sql),
    providers: testProviders({ settings: { WHATSAPP_API_URL: fake.url } }),
  });
});
afterAll(async () => {
  await app.drop();
  await fake.close();
});

/** The statements one claim-and-send pass of a fresh worker issues; it must have attempted `expected` deliveries. */
async function counted(expected: number): Promise<string[]> {
  const worker = testWorker(app.db, { providers: app.providers });
  statements = [];
  expect(await worker.runOnce()).toBe(expected);
  const spent = statements;
  statements = [];
  return spent;
}

const transactional = (sqls: string[]) => sqls.filter((sql) => /^\s*(BEGIN|COMMIT|ROLLBACK)\b/i.test(sql));

describe('statements the delivery worker spends per message', () => {
  it('a webhook channel: the claim and the outcome, two statements; the status change’s event is the one the message’s view gives', async () => {
    const receiver = await startReceiver();
    const events = await startReceiver();
    try {
      const workspace = await createWorkspace(app.db.prisma, { hostname: uniqueHost(), name: 'Budget' });
      const { channel, apiKey } = await createChannel(
        app.db.prisma,
        { workspaceId: workspace.id, name: 'Hooked', type: 'whatsapp', webhookUrl: receiver.url },
        testSealer,
      );
      await createWebhook(app.db.prisma, { workspaceId: workspace.id, url: events.url, events: ['message.status_changed'] }, testSealer);
      const user = await createUser(app.db.prisma, { workspaceId: workspace.id, name: 'Agent Smith', email: 'agent@example.com' });
      const api = restClient(app, workspace.hostname, apiKey);

      // From the channel, and an encrypted one from a user: the event's view covers both senders and the placeholder.
      for (const body of [
        { to: { phone: '+31612345678' }, message: 'Hello', media_urls: ['https://example.com/a.png'] },
        { to: { phone: '+31612345679' }, message: 'U0VBTEVE', is_encrypted: true, from: user.email },
      ]) {
        const sent = await api.post('/messages', body);
        expect(sent.status).toBe(202);
        const view = sent.body.data.message;
        const before = receiver.received.length;

        const sqls = await counted(1);
        expect(receiver.received.length).toBe(before + 1);
        expect(transactional(sqls)).toEqual([]);
        expect(sqls.length, sqls.join('\n\n')).toBeLessThanOrEqual(2);

        // The status change's event, queued by the same statement, carries the message's view.
        const stored = await app.db.prisma.message.findUniqueOrThrow({ where: { id: view.id } });
        expect(stored.status).toBe('sent');
        expect(stored.deliveryAttempts).toBe(1);
        expect(await counted(1)).toHaveLength(2);
        const event = JSON.parse(events.received.at(-1)!.body);
        expect(event.type).toBe('message.status_changed');
        expect(event.data).toEqual({ ...view, status: 'sent' });
        expect(JSON.stringify(Object.keys(event.data))).toBe(JSON.stringify(Object.keys({ ...view, status: 'sent' })));
      }
    } finally {
      await receiver.close();
      await events.close();
    }
  });

  it('a WhatsApp channel: the claim, the provider id recorded, and the outcome, three statements', async () => {
    const ws = await whatsappWorkspace(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    await app.db.prisma.channelTemplate.create({
      data: { workspaceId: ws.workspace.id, channelId: ws.channel.id, name: 'order_ready', language: 'en_US', body: 'Hi {{1}}, order {{2}} is ready.', parameterCount: 2 },
    });
    // Outside the 24-hour window: a template, whose name and language the claim reads with the message.
    const sent = await api.post('/messages', { to: { phone: '+31612345670' }, type: 'template', template: { name: 'order_ready', parameters: ['Ann', '42'] } });
    expect(sent.status).toBe(202);
    const before = fake.sent.length;

    const sqls = await counted(1);
    expect(fake.sent.length).toBe(before + 1);
    expect(fake.sent.at(-1)!.body).toMatchObject({ to: '31612345670', type: 'template', template: { name: 'order_ready', language: { code: 'en_US' } } });
    expect(transactional(sqls)).toEqual([]);
    expect(sqls.length, sqls.join('\n\n')).toBeLessThanOrEqual(3);
    const stored = await app.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.data.message.id }, include: { providerIds: true } });
    expect(stored.status).toBe('sent');
    expect(stored.providerIds).toHaveLength(1);
  });
});
