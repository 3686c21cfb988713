import type { AppDeps } from '../../context/deps.js';
import { publicUrl } from '../../env.js';
import { isUuid } from '../../lib/uuid.js';
import { inboundReceived } from '../../metrics/process.js';
import { HttpError, json, readBody } from '../../http/exchange.js';
import type { InboundChannel, WebhookParts } from '../../providers/provider.js';
import { openProviderSecrets } from '../channels/channel-secrets.js';
import { storeInboundWebhook } from './inbound.store.js';

/** The most a provider webhook may carry. */
export const INBOUND_BODY_LIMIT = 1024 * 1024;

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

/** What the webhook routes share, made once per app. */
export function webhookParts(deps: AppDeps): WebhookParts {
  const cached = channelCache(deps);
  const parts: WebhookParts = {
    async channelOf(id, provider) {
      const found = id && isUuid(id) ? await cached(id.toLowerCase()) : null;
      return found && found.channel.status === 'active' && found.channel.provider === provider ? found : null;
    },
    count(provider, outcome) {
      inboundReceived.labels(provider, outcome).inc();
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
      inboundReceived.labels(provider, 'accepted').inc();
      deps.onMessageQueued?.();
    },
    publicUrl: publicUrl(deps.env),
  };
  return parts;
}

