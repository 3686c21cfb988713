import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { AppDeps } from '../../context/deps.js';
import type { Channel, ChannelProvider } from '../../generated/prisma/client.js';
import { publicUrl } from '../../env.js';
import { isUuid } from '../../lib/uuid.js';
import { ServerResponse } from '../../lib/response.js';
import { inboundReceived } from '../../metrics/process.js';
import { HttpError, json, readBody } from '../../http/exchange.js';
import type { WebhookDeclaration } from '../../rest/route.js';
import { SIGNATURE_HEADER, parseableBody, signatureWellFormed, verifySignature } from '../../providers/whatsapp/inbound.js';
import { openProviderSecrets } from '../channels/channel-secrets.js';
import { twilioWebhooks } from './twilio.routes.js';
import { storeInboundWebhook } from './inbound.store.js';

/** The most a provider webhook may carry. */
export const INBOUND_BODY_LIMIT = 1024 * 1024;

/** A channel as a webhook needs it, with its credentials opened; kept for a few seconds between webhooks. */
export interface InboundChannel {
  channel: Pick<Channel, 'id' | 'workspaceId' | 'provider' | 'status'>;
  secrets: Record<string, string>;
}

/** What every provider's webhook routes share: the channel lookup, the refusal, the body, the store. */
export interface WebhookParts {
  /** The active channel of `provider` a path names, or null (an unknown, inactive or other-provider channel is a 404). */
  channelOf(id: string | undefined, provider: ChannelProvider): Promise<InboundChannel | null>;
  refuse(provider: ChannelProvider, outcome: string, status: number, message: string, channelId: string | undefined): Response;
  /** The body within INBOUND_BODY_LIMIT, or the 413 refusal. */
  body(request: Request, provider: ChannelProvider, channelId: string): Promise<{ bytes: Buffer } | { refused: Response }>;
  store(channel: InboundChannel['channel'], provider: ChannelProvider, headers: Record<string, string>, body: Buffer): Promise<void>;
  /** The gateway's public base URL (PUBLIC_URL): the URL providers sign. */
  publicUrl: string;
}

/** Whether two secrets are equal, in time that depends on neither (both are hashed to one length first). */
const sameSecret = (given: string, expected: string) =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());

const text = (status: number, body: string) => new ServerResponse(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });

/**
 * The channels webhooks name, with their credentials opened, each kept for `ttlMs` (AUTH_CACHE_MS):
 * a provider posting steadily costs one read per channel per period, not one per webhook. A
 * rotated credential is used within that time.
 */
function channelCache(deps: AppDeps) {
  const kept = new Map<string, { until: number; value: InboundChannel | null }>();
  const ttlMs = deps.env.AUTH_CACHE_MS;
  return async (id: string): Promise<InboundChannel | null> => {
    const now = Date.now();
    const hit = kept.get(id);
    if (hit && hit.until > now) return hit.value;
    const row = await deps.db.prisma.channel.findUnique({
      where: { id },
      select: { id: true, workspaceId: true, provider: true, status: true, providerSecrets: true },
    });
    const value = row ? { channel: row, secrets: openProviderSecrets(row, deps.sealer) } : null;
    if (ttlMs > 0) {
      if (kept.size >= 10_000) kept.delete(kept.keys().next().value!);
      kept.set(id, { until: now + ttlMs, value });
    }
    return value;
  };
}

const channelParams = z.object({ channelId: z.string().meta({ format: 'uuid', description: 'The channel the webhook URL was made for.' }) });

/** What the webhook routes share, made once per app. */
export function webhookParts(deps: AppDeps): WebhookParts {
  const cached = channelCache(deps);
  const parts: WebhookParts = {
    async channelOf(id, provider) {
      const found = id && isUuid(id) ? await cached(id.toLowerCase()) : null;
      return found && found.channel.status === 'active' && found.channel.provider === provider ? found : null;
    },
    refuse(provider, outcome, status, message, channelId) {
      inboundReceived.labels(provider, outcome).inc();
      deps.logger.info({ provider, channelId, outcome, status }, 'inbound webhook refused');
      return json(status, { status: 'error', message });
    },
    async body(request, provider, channelId) {
      try {
        return { bytes: (await readBody(request, INBOUND_BODY_LIMIT)) ?? Buffer.alloc(0) };
      } catch (error) {
        if (error instanceof HttpError && error.status === 413) return { refused: parts.refuse(provider, 'too_large', 413, 'Request body too large.', channelId) };
        throw error;
      }
    },
    /** The stored event and its processing, in one statement: both or neither. */
    async store(channel, provider, headers, body) {
      await storeInboundWebhook(deps.db, channel, provider, headers, body);
      deps.onMessageQueued?.();
    },
    publicUrl: publicUrl(deps.env),
  };
  return parts;
}

const notFound = (parts: WebhookParts, provider: ChannelProvider, channelId: string | undefined) =>
  parts.refuse(provider, 'not_found', 404, 'Channel not found.', channelId);

/**
 * The provider webhooks (CONTRACT §6), checked in the contract's order — an unknown, inactive or
 * other-provider channel is 404; a bad or missing signature 401 (Twilio: 403); a body over 1 MiB
 * 413; a verified body that cannot be read 400 — then stored raw, with the delivery that will
 * process it, in one statement before answering 200. Each refusal is logged, never with the body.
 */
export const webhookRoutes: WebhookDeclaration<WebhookParts>[] = [
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
      const found = await parts.channelOf(params.channelId, 'whatsapp_cloud');
      if (!found) return notFound(parts, 'whatsapp_cloud', params.channelId);
      const query = url.searchParams;
      const token = found.secrets.verifyToken;
      if (query.get('hub.mode') !== 'subscribe' || !token || !sameSecret(query.get('hub.verify_token') ?? '', token)) {
        return parts.refuse('whatsapp_cloud', 'forbidden', 403, 'The verify token does not match this channel’s.', params.channelId);
      }
      inboundReceived.labels('whatsapp_cloud', 'verified').inc();
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
      const found = await parts.channelOf(channelId, 'whatsapp_cloud');
      if (!found) return notFound(parts, 'whatsapp_cloud', channelId);
      const signature = request.headers.get(SIGNATURE_HEADER);
      if (!signatureWellFormed(signature)) return parts.refuse('whatsapp_cloud', 'bad_signature', 401, 'Missing or malformed X-Hub-Signature-256.', channelId);
      const read = await parts.body(request, 'whatsapp_cloud', channelId);
      if ('refused' in read) return read.refused;
      const body = read.bytes;
      if (!verifySignature(signature, body, found.secrets.appSecret ?? '')) {
        return parts.refuse('whatsapp_cloud', 'bad_signature', 401, 'The signature does not match the body.', channelId);
      }
      if (!parseableBody(body)) return parts.refuse('whatsapp_cloud', 'malformed', 400, 'The body is not a JSON object.', channelId);
      await parts.store(found.channel, 'whatsapp_cloud', { 'content-type': request.headers.get('content-type') ?? '' }, body);
      inboundReceived.labels('whatsapp_cloud', 'accepted').inc();
      return text(200, 'OK');
    },
  },
  ...twilioWebhooks(channelParams),
];
