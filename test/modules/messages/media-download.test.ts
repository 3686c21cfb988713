import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../../src/modules/delivery/delivery.worker.js';
import { metaOrigin } from '../../../src/providers/whatsapp/media.js';
import { appOnOwnDatabase } from '../../helpers/fresh-database.js';
import { sleep } from '../../helpers/load.js';
import { serveOnPort, type ServedApp } from '../../helpers/real-port.js';
import { inboundMessageForm, signedTwilioRequest, startTwilioFake, TWILIO_SETTINGS, twilioWorkspace, type TwilioFake } from '../../helpers/twilio-fake.js';
import { signedHeaders, startWhatsAppFake, webhookBody, WHATSAPP_SETTINGS, whatsappWorkspace, type WhatsAppFake } from '../../helpers/whatsapp-fake.js';
import { appWorker, testProviders } from '../../helpers/worker.js';

/**
 * docs/operating-safely.md, Staying up: media streamed to a client carries a Content-Length equal to the bytes sent, or
 * none, whatever the provider's answer said (gzip-encoded, chunked, a Graph API `file_size`); and
 * the WhatsApp access token goes only to Meta's origins, whatever a media answer names.
 */

const PUBLIC_URL = 'https://connect.example.test';
let whatsapp: WhatsAppFake;
let twilio: TwilioFake;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let worker: DeliveryWorker;
let served: ServedApp;
/** A host that is not Meta's, recording what it is sent. */
let elsewhere: http.Server & { seen: { path: string; authorization: string | undefined }[]; url: string };

beforeAll(async () => {
  whatsapp = await startWhatsAppFake({ token: WHATSAPP_SETTINGS.accessToken });
  twilio = await startTwilioFake({ accountSid: TWILIO_SETTINGS.accountSid, authToken: TWILIO_SETTINGS.authToken });
  app = await appOnOwnDatabase({
    env: { PUBLIC_URL },
    providers: testProviders({ settings: { WHATSAPP_API_URL: whatsapp.url, TWILIO_API_URL: twilio.url }, publicUrl: PUBLIC_URL }),
  });
  worker = appWorker(app);
  worker.start();
  served = await serveOnPort(app.db, app.env, { providers: app.providers });
  const seen: { path: string; authorization: string | undefined }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': 9 }).end('elsewhere');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  elsewhere = Object.assign(server, { seen, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
});
afterAll(async () => {
  await served?.close();
  await worker?.stop();
  await app?.drop();
  await whatsapp?.close();
  await twilio?.close();
  elsewhere?.closeAllConnections();
  await new Promise((resolve) => elsewhere?.close(resolve));
});

async function until(done: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await sleep(20);
  }
}

/** GET on a kept-alive connection of `agent`: the status, the Content-Length announced, and the bytes that came. */
function download(agent: http.Agent, host: string, path: string, apiKey: string) {
  return new Promise<{ status: number; length: string | undefined; body: Buffer }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: served.port, path, agent, headers: { host, authorization: `Bearer ${apiKey}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, length: res.headers['content-length'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * Downloads `path` twice in a row on one kept-alive connection: each answer's bytes are the file's,
 * and its Content-Length, when it has one, is their number (a wrong one would cut the first answer
 * short and spill its rest into the second).
 */
async function expectExact(host: string, path: string, apiKey: string, bytes: Buffer) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let round = 0; round < 2; round++) {
      const answer = await download(agent, host, path, apiKey);
      expect(answer.status, `round ${round}`).toBe(200);
      expect(answer.body.equals(bytes), `round ${round}: ${answer.body.length} bytes, Content-Length ${answer.length}`).toBe(true);
      if (answer.length !== undefined) expect(Number(answer.length)).toBe(bytes.length);
    }
  } finally {
    agent.destroy();
  }
}

/** A WhatsApp image message whose media is `mediaId`, processed: its id. */
async function whatsappMedia(s: Awaited<ReturnType<typeof whatsappWorkspace>>, mediaId: string) {
  const item = { from: '31612360001', id: `wamid.${mediaId}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'image', image: { id: mediaId, mime_type: 'image/png' } };
  const body = webhookBody([{ phoneNumberId: s.settings.phoneNumberId, messages: [item] }]);
  expect((await app.fetch(s.host, `/webhooks/whatsapp/${s.channel.id}`, { method: 'POST', headers: signedHeaders(body, s.settings.appSecret), body })).status).toBe(200);
  let id = '';
  await until(async () => {
    const found = await app.db.prisma.message.findFirst({ where: { channelId: s.channel.id, media: { array_contains: [{ ref: mediaId }] } } });
    id = found?.id ?? '';
    return Boolean(found);
  }, `the message with ${mediaId}`);
  return id;
}

/** Bytes that compress well: gzip makes them far fewer on the wire. */
const compressible = Buffer.from('connect gateway media bytes '.repeat(180));

describe('WhatsApp media', () => {
  it('gzip-encoded upstream: the decoded bytes, without the encoded Content-Length', async () => {
    const s = await whatsappWorkspace(app.db.prisma);
    whatsapp.addMedia('gzipped', compressible, 'image/png', { gzip: true });
    await expectExact(s.host, `/api/connect/messages/${await whatsappMedia(s, 'gzipped')}/media/0`, s.apiKey, compressible);
  });

  it('chunked upstream under a Graph API file_size that is not its size: the bytes sent, without that size', async () => {
    const s = await whatsappWorkspace(app.db.prisma);
    const bytes = Buffer.from('thirty-three bytes, five declared');
    whatsapp.addMedia('misdeclared', bytes, 'image/png', { undeclared: true, fileSize: 5 });
    await expectExact(s.host, `/api/connect/messages/${await whatsappMedia(s, 'misdeclared')}/media/0`, s.apiKey, bytes);
  });

  it('with a Content-Length of its own: announced as it is', async () => {
    const s = await whatsappWorkspace(app.db.prisma);
    const bytes = Buffer.from('plain bytes with their length');
    whatsapp.addMedia('plain', bytes, 'image/png');
    const path = `/api/connect/messages/${await whatsappMedia(s, 'plain')}/media/0`;
    await expectExact(s.host, path, s.apiKey, bytes);
    const agent = new http.Agent({ keepAlive: false });
    expect((await download(agent, s.host, path, s.apiKey)).length).toBe(String(bytes.length));
  });

  it('the access token goes to the Graph API’s origin, never to another host a media answer names', async () => {
    const s = await whatsappWorkspace(app.db.prisma);
    whatsapp.addMedia('foreign', Buffer.from('ignored'), 'image/png', { url: `${elsewhere.url}/media/foreign?mid=1` });
    const id = await whatsappMedia(s, 'foreign');
    const answer = await app.fetch(s.host, `/api/connect/messages/${id}/media/0`, { headers: { authorization: `Bearer ${s.apiKey}` } });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('elsewhere');
    expect(elsewhere.seen).toEqual([{ path: '/media/foreign?mid=1', authorization: undefined }]);
    // Meta's media hosts over HTTPS, and the configured Graph API origin, are the token's only destinations.
    const api = new URL(whatsapp.url).origin;
    expect(metaOrigin('https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1', api)).toBe(true);
    expect(metaOrigin(`${whatsapp.url}/media-bytes/x`, api)).toBe(true);
    for (const other of ['http://lookaside.fbsbx.com/x', 'https://lookaside.fbsbx.com:8443/x', 'https://fbsbx.com.evil.example/x', 'https://evilfbsbx.com/x', `${elsewhere.url}/x`, 'not a url']) {
      expect(metaOrigin(other, api), other).toBe(false);
    }
  });
});

describe('Twilio media', () => {
  it('gzip-encoded by the CDN: the decoded bytes, without the encoded Content-Length', async () => {
    const s = await twilioWorkspace(app.db.prisma);
    const url = twilio.addMedia(compressible, 'image/jpeg', { gzip: true });
    const path = `/webhooks/twilio/${s.channel.id}`;
    const signed = signedTwilioRequest(`${PUBLIC_URL}${path}`, inboundMessageForm(TWILIO_SETTINGS.accountSid, { from: '+31612360002', to: s.settings.from, body: 'pic', media: [{ url, contentType: 'image/jpeg' }] }), s.settings.authToken);
    expect((await app.fetch(s.host, path, { method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(200);
    await until(async () => (await app.db.prisma.message.count({ where: { channelId: s.channel.id } })) === 1, 'the MMS');
    const message = await app.db.prisma.message.findFirstOrThrow({ where: { channelId: s.channel.id } });
    await expectExact(s.host, `/api/connect/messages/${message.id}/media/0`, s.apiKey, compressible);
  });
});
