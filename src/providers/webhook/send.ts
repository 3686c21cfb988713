import { webhookHeaders } from '../../lib/webhook-signature.js';
import { OutboundTargetError, type OutboundClient } from '../../lib/outbound-http.js';
import type { OutboundProvider, ProviderReply, SendJob, SendOutcome } from '../provider.js';

/** The payload a channel's webhook receives. The body goes as given: ciphertext stays ciphertext. */
export function deliveryPayload(job: SendJob) {
  const { message, recipient } = job;
  return {
    type: 'message.outbound',
    deliveryId: job.deliveryId,
    attempt: job.attempt,
    message: {
      id: message.id,
      conversationId: message.conversationId,
      channelId: job.channel.id,
      type: message.type,
      body: message.body,
      isEncrypted: message.isEncrypted,
      mediaUrls: message.mediaUrls,
      silent: message.silent,
      createdAt: message.createdAt.toISOString(),
    },
    contact: { id: recipient.id, name: recipient.name, email: recipient.email, phoneNumber: recipient.phone, isGroup: recipient.isGroup },
  };
}

/** How a signed POST ended: `failure` null when taken, else the reason to try again; `reply` when the receiver answered. */
interface Posted {
  failure: string | null;
  reply?: ProviderReply;
}

/**
 * POSTs a body signed the Standard Webhooks way under a stable id, through the guarded client
 * (src/lib/outbound-http.ts). Any non-2xx answer (a redirect included: none is followed), a
 * refused target, a network error or a timeout is a reason to try again.
 */
async function post(client: OutboundClient, url: string, secret: string, id: string, body: string, timeoutMs: number): Promise<Posted> {
  let response: Awaited<ReturnType<OutboundClient['fetch']>>;
  try {
    response = await client.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'connect-gateway', ...webhookHeaders(secret, id, body) },
      body,
    });
  } catch (error) {
    if (error instanceof OutboundTargetError) return { failure: `webhook target refused: ${error.message}` };
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message;
    return { failure: `webhook unreachable: ${reason}` };
  }
  await response.body?.cancel();
  const reply: ProviderReply = { status: response.status, retryAfter: response.headers.get('retry-after') };
  if (response.status >= 300 && response.status < 400) return { failure: `webhook answered HTTP ${response.status} (redirects are not followed)`, reply };
  if (response.status < 200 || response.status >= 300) return { failure: `webhook answered HTTP ${response.status}`, reply };
  return { failure: null };
}

/** `post`, for an answer that needs only the reason to try again: null when it was taken. */
export async function postSigned(client: OutboundClient, url: string, secret: string, id: string, body: string, timeoutMs: number): Promise<string | null> {
  return (await post(client, url, secret, id, body, timeoutMs)).failure;
}

/**
 * POSTs the message to the channel's webhook URL; `webhook-id` is the delivery id. Every failure is
 * retried. A channel without a webhook URL has no upstream: accepting the message is sending it
 * (local delivery, docs/delivery.md; its log lines say `provider: "local"`).
 */
export function webhookProvider(options: { timeoutMs: number; client: OutboundClient }): OutboundProvider {
  return {
    name: 'webhook',
    async send(job): Promise<SendOutcome> {
      if (!job.channel.webhookUrl) return { kind: 'sent', providerIds: [] };
      const { failure, reply } = await post(
        options.client,
        job.channel.webhookUrl,
        job.channel.webhookSecret ?? '',
        job.deliveryId,
        JSON.stringify(deliveryPayload(job)),
        options.timeoutMs,
      );
      // The receiver's answer goes with the reason: a 429 is a rate-limit answer (docs/broadcasts.md#rate-limit-answers).
      return failure ? { kind: 'retry', reason: failure, ...(reply ? { reply } : {}) } : { kind: 'sent', providerIds: [] };
    },
  };
}

/** One workspace event for one webhook endpoint, with the body stored when the change committed. */
export interface EventJob {
  /** Stable across attempts and workers: one per event and endpoint. */
  deliveryId: string;
  url: string;
  /** The endpoint's signing secret, opened. */
  secret: string;
  body: string;
}

/** Sends events to webhook endpoints: null when taken, else the reason to try again. */
export interface EventProvider {
  readonly name: string;
  deliver(job: EventJob): Promise<string | null>;
}

export function eventWebhookProvider(options: { timeoutMs: number; client: OutboundClient }): EventProvider {
  return { name: 'event-webhook', deliver: (job) => postSigned(options.client, job.url, job.secret, job.deliveryId, job.body, options.timeoutMs) };
}
