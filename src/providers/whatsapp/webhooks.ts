import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { FetchResponse } from '../../lib/response.js';
import type { WebhookDeclaration, WebhookParts } from '../provider.js';
import { SIGNATURE_HEADER, parseableBody, signatureWellFormed, verifySignature } from './inbound.js';

const PROVIDER = 'whatsapp_cloud';

/** Whether two secrets are equal, in time that depends on neither (both are hashed to one length first). */
const sameSecret = (given: string, expected: string) =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());

const text = (status: number, body: string) => new FetchResponse(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });

const channelParams = z.object({ channelId: z.string().meta({ format: 'uuid', description: 'The channel the webhook URL was made for.' }) });

const notFound = (parts: WebhookParts, channelId: string | undefined) => parts.refuse(PROVIDER, 'not_found', 404, 'Channel not found.', channelId);

/** Where Meta posts a channel's messages and statuses, and checks the URL first. */
export const whatsappAddress = (publicUrl: string, channelId: string) => `${publicUrl}/webhooks/whatsapp/${channelId}`;

/**
 * Meta's webhook for a channel (docs/providers.md, Inbound), checked in order: an unknown,
 * inactive or other-provider channel is 404; a bad or missing signature 401; a body over the limit
 * 413; a signed body that is not JSON 400. Then stored raw before the 200.
 */
export const whatsappWebhooks: WebhookDeclaration[] = [
  {
    method: 'GET',
    path: '/webhooks/whatsapp/:channelId',
    operationId: 'verifyWhatsAppWebhook',
    summary: "Meta's webhook verification",
    description: 'Answers `hub.challenge` when `hub.mode` is `subscribe` and `hub.verify_token` is the channel’s verify token.',
    params: channelParams,
    query: z.object({ 'hub.mode': z.literal('subscribe'), 'hub.verify_token': z.string(), 'hub.challenge': z.string() }),
    responses: {
      200: { description: 'The challenge, as sent.', contentType: 'text/plain' },
      403: { description: 'The verify token does not match the channel’s.' },
      404: { description: 'No active WhatsApp channel has this id.' },
    },
    async handler({ url, params }, parts) {
      const found = await parts.channelOf(params.channelId, PROVIDER);
      if (!found) return notFound(parts, params.channelId);
      const query = url.searchParams;
      const token = found.secrets.verifyToken;
      if (query.get('hub.mode') !== 'subscribe' || !token || !sameSecret(query.get('hub.verify_token') ?? '', token)) {
        return parts.refuse(PROVIDER, 'forbidden', 403, 'The verify token does not match this channel’s.', params.channelId);
      }
      parts.count(PROVIDER, 'verified');
      return text(200, query.get('hub.challenge') ?? '');
    },
  },
  {
    method: 'POST',
    path: '/webhooks/whatsapp/:channelId',
    operationId: 'receiveWhatsAppWebhook',
    summary: 'WhatsApp messages and statuses',
    description: "Meta's webhook for the channel's number: stored before the answer, then processed (every entry, change, message and status).",
    params: channelParams,
    signature: { header: 'X-Hub-Signature-256', description: '`sha256=` and the hex HMAC-SHA256 of the raw body keyed with the app secret.' },
    body: { contentType: 'application/json', description: 'The webhook as Meta sends it (at most 1 MiB).' },
    responses: {
      200: { description: 'Stored; it will be processed.', contentType: 'text/plain' },
      400: { description: 'The signed body is not a JSON object.' },
      401: { description: 'The signature is missing, malformed or does not match the body.' },
      404: { description: 'No active WhatsApp channel has this id.' },
      413: { description: 'The body is over 1 MiB.' },
    },
    async handler({ request, params }, parts) {
      const channelId = params.channelId!;
      const found = await parts.channelOf(channelId, PROVIDER);
      if (!found) return notFound(parts, channelId);
      const signature = request.headers.get(SIGNATURE_HEADER);
      if (!signatureWellFormed(signature)) return parts.refuse(PROVIDER, 'bad_signature', 401, 'Missing or malformed X-Hub-Signature-256.', channelId);
      const read = await parts.body(request, PROVIDER, channelId);
      if ('refused' in read) return read.refused;
      const body = read.bytes;
      if (!verifySignature(signature, body, found.secrets.appSecret ?? '')) {
        return parts.refuse(PROVIDER, 'bad_signature', 401, 'The signature does not match the body.', channelId);
      }
      if (!parseableBody(body)) return parts.refuse(PROVIDER, 'malformed', 400, 'The body is not a JSON object.', channelId);
      await parts.store(found.channel, PROVIDER, { 'content-type': request.headers.get('content-type') ?? '' }, body);
      return text(200, 'OK');
    },
  },
];
