import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppDeps } from '../../context/deps.js';
import type { Channel, ChannelProvider } from '../../generated/prisma/client.js';
import { describeError } from '../../errors/log.js';
import { INTERNAL_ERROR_BODY } from '../../errors/rest.js';
import { isDatabaseUnavailable } from '../../db/errors.js';
import { isUuid } from '../../lib/uuid.js';
import { inboundReceived } from '../../metrics/process.js';
import { HttpError } from '../../rest/http.js';
import { SIGNATURE_HEADER, parseableBody, signatureWellFormed, verifySignature } from '../../providers/whatsapp/inbound.js';
import { openProviderSecrets } from '../channels/channel-secrets.js';
import { twilioWebhook } from './twilio.routes.js';
import { storeInboundWebhook } from './inbound.store.js';
import { fetchWebhookCall, json, text, webhookResponse, type WebhookAnswer, type WebhookCall } from './webhook-call.js';

/** Where providers post replies and statuses (CONTRACT §6); no API key: each is verified its provider's way. */
export const WEBHOOKS_PREFIX = '/webhooks/';

/** The most a provider webhook may carry. */
export const INBOUND_BODY_LIMIT = 1024 * 1024;

/** A channel as a webhook needs it, with its credentials opened; kept for a few seconds between webhooks. */
interface InboundChannel {
  channel: Pick<Channel, 'id' | 'workspaceId' | 'provider' | 'status'>;
  secrets: Record<string, string>;
}

/** Whether two secrets are equal, in time that depends on neither (both are hashed to one length first). */
const sameSecret = (given: string, expected: string) =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());

const refusal = (status: number, message: string) => json(status, { status: 'error', message });
const UNAVAILABLE = json(503, { status: 'error', message: 'Service unavailable' }, { 'retry-after': '1' });

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

/**
 * Serves provider webhooks under /webhooks/ (Twilio's through twilio.routes.ts): null for any
 * other path. Checks in the contract's order — an unknown, inactive or other-provider channel is
 * 404; a bad or missing signature 401 (Twilio: 403); a body over 1 MiB 413; a verified body that
 * cannot be read 400 — then stores the event raw, with the delivery that will process it, in one
 * statement before answering 200. Each refusal is logged, never with the body.
 */
export function inboundRoutes(deps: AppDeps) {
  const channelOf = channelCache(deps);

  /** The stored event and its processing, in one statement: both or neither. */
  async function store(channel: InboundChannel['channel'], provider: ChannelProvider, headers: Record<string, string>, body: Buffer): Promise<void> {
    await storeInboundWebhook(deps.db, channel, provider, headers, body);
    deps.onMessageQueued?.();
  }

  function refuse(provider: string, outcome: string, status: number, message: string, channelId: string): WebhookAnswer {
    inboundReceived.labels(provider, outcome).inc();
    deps.logger.info({ provider, channelId, outcome, status }, 'inbound webhook refused');
    return refusal(status, message);
  }

  async function whatsapp(request: WebhookCall, channelId: string): Promise<WebhookAnswer> {
    const found = isUuid(channelId) ? await channelOf(channelId.toLowerCase()) : null;
    if (!found || found.channel.status !== 'active' || found.channel.provider !== 'whatsapp_cloud') {
      return refuse('whatsapp_cloud', 'not_found', 404, 'Channel not found.', channelId);
    }
    if (request.method === 'GET') {
      request.label('GET /webhooks/whatsapp/{channelId}');
      const params = request.url.searchParams;
      const token = found.secrets.verifyToken;
      if (params.get('hub.mode') !== 'subscribe' || !token || !sameSecret(params.get('hub.verify_token') ?? '', token)) {
        return refuse('whatsapp_cloud', 'forbidden', 403, 'The verify token does not match this channel’s.', channelId);
      }
      inboundReceived.labels('whatsapp_cloud', 'verified').inc();
      return text(200, params.get('hub.challenge') ?? '');
    }
    request.label('POST /webhooks/whatsapp/{channelId}');
    const signature = request.header(SIGNATURE_HEADER);
    if (!signatureWellFormed(signature)) return refuse('whatsapp_cloud', 'bad_signature', 401, 'Missing or malformed X-Hub-Signature-256.', channelId);
    let body: Buffer;
    try {
      body = (await request.body(INBOUND_BODY_LIMIT)) ?? Buffer.alloc(0);
    } catch (error) {
      if (error instanceof HttpError && error.status === 413) return refuse('whatsapp_cloud', 'too_large', 413, 'Request body too large.', channelId);
      throw error;
    }
    if (!verifySignature(signature, body, found.secrets.appSecret ?? '')) {
      return refuse('whatsapp_cloud', 'bad_signature', 401, 'The signature does not match the body.', channelId);
    }
    if (!parseableBody(body)) return refuse('whatsapp_cloud', 'malformed', 400, 'The body is not a JSON object.', channelId);
    await store(found.channel, 'whatsapp_cloud', { 'content-type': request.header('content-type') ?? '' }, body);
    inboundReceived.labels('whatsapp_cloud', 'accepted').inc();
    return text(200, 'OK');
  }

  const twilio = twilioWebhook(deps, { channelOf, refuse, store, bodyLimit: INBOUND_BODY_LIMIT });

  /** Any request under /webhooks/, answered. */
  async function serve(request: WebhookCall): Promise<WebhookAnswer> {
    const { pathname } = request.url;
    const match = /^\/webhooks\/whatsapp\/([^/]+)$/.exec(pathname) ?? /^\/webhooks\/twilio\/([^/]+)(\/status)?$/.exec(pathname);
    if (!match) return json(404, { status: 'error', message: 'Route not found.' });
    const isTwilio = pathname.startsWith('/webhooks/twilio/');
    if (request.method !== 'POST' && (isTwilio || request.method !== 'GET')) {
      return json(405, { status: 'error', message: 'Method not allowed.' }, { allow: isTwilio ? 'POST' : 'GET, POST' });
    }
    try {
      const handled = isTwilio ? twilio(request, match[1]!, match[2] ? 'status' : 'message') : whatsapp(request, match[1]!);
      const answer = await deps.db.health.race(handled);
      return answer === 'unavailable' ? UNAVAILABLE : answer;
    } catch (error) {
      if (isDatabaseUnavailable(error)) return UNAVAILABLE;
      // The provider tries again on anything but a 2xx: nothing was stored.
      deps.logger.error({ err: describeError(error), channelId: match[1] }, 'inbound webhook failed');
      return json(500, INTERNAL_ERROR_BODY);
    }
  }

  return {
    /** A webhook as a fetch Request (the app's routing): null for a path outside /webhooks/. */
    async fetch(request: Request, url: URL): Promise<Response | null> {
      if (!url.pathname.startsWith(WEBHOOKS_PREFIX)) return null;
      return webhookResponse(await serve(fetchWebhookCall(request, url)));
    },
    /** A webhook under /webhooks/, read by `call`. */
    serve,
  };
}

export type InboundRoutes = ReturnType<typeof inboundRoutes>;
