import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel } from '../../src/modules/channels/channels.service.js';
import { inboundUrl, providerConfig } from '../../src/modules/channels/providers.schemas.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';
import { FetchResponse } from '../../src/lib/response.js';
import type { InboundMessage, ProviderDescriptor, SendJob } from '../../src/providers/provider.js';
import { PROVIDERS } from '../../src/providers/registry.js';
import { uniqueHost } from '../helpers/factories.js';
import { appOnOwnDatabase } from '../helpers/fresh-database.js';
import { serveOnPort, type ServedApp } from '../helpers/real-port.js';
import { restClient } from '../helpers/rest.js';
import { testSealer } from '../helpers/secrets.js';
import { until } from '../helpers/until.js';
import { appWorker, testProviders } from '../helpers/worker.js';

/**
 * A provider is one folder: a descriptor listed beside the others is sent through, receives
 * webhooks, is documented and checks its recipients, with nothing else of the gateway changed.
 * "Carrier pigeon": a throw-away provider that keeps what it is given and posts JSON back.
 */
const sent: SendJob[] = [];
/** Messages refused once with the pigeon's own "too many birds" code, by id. */
const grounded = new Set<string>();

const pigeon: ProviderDescriptor = {
  name: 'carrier_pigeon',
  label: 'carrier pigeon',
  channelType: 'webchat',
  settings: { loft: { flag: 'loft', schema: z.string().trim().min(1, 'must name the loft') } },
  secrets: { ring: { flag: 'ring', schema: z.string().trim().min(8, 'must be at least 8 characters') } },
  cliHelp: '--loft L --ring R',
  reaches: 'phone',
  // Its pace, and its own code for "too many": nothing else of the gateway knows either.
  limits: { defaultRatePerSecond: 4, rateLimitedCodes: ['storm'] },
  outbound: () => ({
    name: 'carrier_pigeon',
    async send(job) {
      if (job.message.body === 'Storm' && !grounded.has(job.message.id)) {
        grounded.add(job.message.id);
        return { kind: 'failed', code: 'storm', text: 'Too many birds in the air', reply: { status: 400, code: 'storm', retryAfter: '1' } };
      }
      sent.push(job);
      const id = `bird-${sent.length}`;
      await job.recordPart(id, 0);
      return { kind: 'sent', providerIds: [id] };
    },
  }),
  inbound: {
    parser: () => ({
      parse: (raw) => {
        const note = JSON.parse(raw.body.toString('utf8')) as { id: string; from: string; text: string };
        const message: InboundMessage = { kind: 'message', providerId: note.id, from: { phone: note.from }, at: raw.receivedAt, body: note.text, media: [] };
        return [{ events: [message] }];
      },
    }),
    webhooks: [
      {
        method: 'POST',
        path: '/webhooks/carrier-pigeon/:channelId',
        operationId: 'receivePigeon',
        summary: 'A pigeon lands',
        params: z.object({ channelId: z.string() }),
        signature: { header: 'X-Ring', description: 'The channel’s ring.' },
        body: { contentType: 'application/json', description: 'The note it carries.' },
        responses: { 200: { description: 'Stored.' }, 403: { description: 'Not our bird.' }, 404: { description: 'No such loft.' } },
        async handler({ request, params }, parts) {
          const found = await parts.channelOf(params.channelId, 'carrier_pigeon');
          if (!found) return parts.refuse('carrier_pigeon', 'not_found', 404, 'Channel not found.', params.channelId);
          const ring = Buffer.from(request.headers.get('x-ring') ?? '');
          const expected = Buffer.from(found.secrets.ring ?? '');
          if (ring.length !== expected.length || !timingSafeEqual(ring, expected)) {
            return parts.refuse('carrier_pigeon', 'bad_signature', 403, 'Not our bird.', params.channelId);
          }
          const read = await parts.body(request, 'carrier_pigeon', params.channelId!);
          if ('refused' in read) return read.refused;
          await parts.store(found.channel, 'carrier_pigeon', {}, read.bytes);
          return new FetchResponse(null, { status: 200 });
        },
      },
    ],
    address: (publicUrl, channel) => `${publicUrl}/webhooks/carrier-pigeon/${channel.id}`,
  },
};

const LIST = [...PROVIDERS, pigeon];

let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let served: ServedApp;

beforeAll(async () => {
  app = await appOnOwnDatabase({ providers: testProviders({}, LIST) });
  served = await serveOnPort(app.db, app.env, { providers: app.providers, events: app.events });
});
afterAll(async () => {
  await served.close();
  await app.drop();
});

async function pigeonChannel() {
  const workspace = await createWorkspace(app.db.prisma, { hostname: uniqueHost('pigeon'), name: 'Pigeon workspace' });
  const config = providerConfig(pigeon, 'webchat', { loft: 'North tower', ring: 'silver-ring-7' }, undefined, LIST);
  if (!config.ok) throw new Error(config.message);
  const { channel, apiKey } = await createChannel(
    app.db.prisma,
    { workspaceId: workspace.id, name: 'Loft', type: 'webchat', provider: { provider: pigeon.name, ...config } },
    testSealer,
  );
  return { channel, host: workspace.hostname, api: restClient(app, workspace.hostname, apiKey) };
}

const land = (channelId: string, note: unknown, ring = 'silver-ring-7') =>
  fetch(`http://127.0.0.1:${served.port}/webhooks/carrier-pigeon/${channelId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ring': ring },
    body: JSON.stringify(note),
  });

describe('a provider defined by its descriptor alone', () => {
  it('checks its settings with its own rules and names its inbound URL', () => {
    expect(providerConfig(pigeon, 'webchat', { loft: 'x', ring: 'short' }, undefined, LIST)).toEqual({ ok: false, message: '--ring must be at least 8 characters' });
    expect(providerConfig(pigeon, 'webchat', { loft: 'x', ring: 'long enough', 'phone-number-id': '1' }, undefined, LIST)).toEqual({
      ok: false,
      message: '--phone-number-id is not a setting of provider carrier_pigeon',
    });
    expect(inboundUrl('https://gw.example', { id: 'c1', provider: 'carrier_pigeon' }, LIST)).toBe('https://gw.example/webhooks/carrier-pigeon/c1');
  });

  it('sends a message through its own outbound, after checking the recipient is reachable its way', async () => {
    const { channel, api } = await pigeonChannel();
    const refused = await api.post('/messages', { to: { name: 'No phone', email: 'nophone@example.com' }, type: 'text', message: 'Hello' });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain('This channel sends through carrier pigeon: the recipient needs a phone number.');

    const accepted = await api.post('/messages', { to: { name: 'Ann', phone: '+14155550100' }, type: 'text', message: 'Coo' });
    expect(accepted.status).toBe(202);
    const worker = appWorker(app);
    worker.start();
    try {
      await until(async () => (await app.db.prisma.message.findUnique({ where: { id: accepted.body.data.message.id } }))?.status === 'sent');
    } finally {
      await worker.stop();
    }
    const job = sent.find((one) => one.message.id === accepted.body.data.message.id)!;
    expect(job.message.body).toBe('Coo');
    expect(job.recipient.phone).toBe('+14155550100');
    expect(job.channel.settings).toEqual({ loft: 'North tower' });
    expect(job.channel.secrets).toEqual({ ring: 'silver-ring-7' });
    const ids = await app.db.prisma.providerMessageId.findMany({ where: { channelId: channel.id } });
    expect(ids.map((row) => row.providerId)).toEqual([expect.stringMatching(/^bird-\d+$/)]);
  });

  it('slows its channel for a refusal with a code it lists as rate limited, and retries the message after its Retry-After', async () => {
    const { channel, api } = await pigeonChannel();
    const accepted = await api.post('/messages', { to: { name: 'Bo', phone: '+14155550101' }, type: 'text', message: 'Storm' });
    expect(accepted.status).toBe(202);
    const worker = appWorker(app);
    worker.start();
    try {
      await until(async () => (await app.db.prisma.message.findUnique({ where: { id: accepted.body.data.message.id } }))?.status === 'sent', 'the stormy message sent', 10_000);
    } finally {
      await worker.stop();
    }
    expect(grounded.has(accepted.body.data.message.id)).toBe(true);
    const pace = await app.db.prisma.channelPacing.findUniqueOrThrow({ where: { channelId: channel.id } });
    // Its own rate (4 a second) halved; its wait of a second kept.
    expect(pace.limitedRate).toBe(2);
    expect(pace.blockedUntil).not.toBeNull();
    expect(await app.db.prisma.delivery.findFirstOrThrow({ where: { messageId: accepted.body.data.message.id } })).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('receives through its own webhook route: verified, stored, parsed and shown as an inbound message', async () => {
    const { channel, api } = await pigeonChannel();
    expect((await land(channel.id, { id: 'n1', from: '+14155550123', text: 'x' }, 'wrong-ring-00')).status).toBe(403);
    expect(await app.db.prisma.inboundEvent.count({ where: { channelId: channel.id } })).toBe(0);

    expect((await land(channel.id, { id: 'n1', from: '+14155550123', text: 'Back to the loft' })).status).toBe(200);
    const worker = appWorker(app);
    worker.start();
    try {
      await until(async () => (await app.db.prisma.message.count({ where: { channelId: channel.id, direction: 'inbound' } })) === 1);
    } finally {
      await worker.stop();
    }
    const listed = await api.get('/messages');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ direction: 'inbound', status: 'received', body: 'Back to the loft' })]);
    const contact = await app.db.prisma.contact.findFirst({ where: { workspaceId: channel.workspaceId } });
    expect(contact?.phone).toBe('+14155550123');
  });

  it('is documented in the app’s OpenAPI document beside the built-in providers', async () => {
    const document = (await (await fetch(`http://127.0.0.1:${served.port}/api/connect/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/webhooks/carrier-pigeon/{channelId}', '/webhooks/whatsapp/{channelId}']));
  });
});
