import { webhookHeaders } from '../../lib/webhook-signature.js';
import { OutboundTargetError, type OutboundClient } from '../../lib/outbound-http.js';
import type { OutboundProvider, SendJob, SendOutcome } from '../provider.js';

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

/**
 * POSTs a body signed the Standard Webhooks way under a stable id, through the guarded client
 * (src/lib/outbound-http.ts). Any non-2xx answer (a redirect included: none is followed), a
 * refused target, a network error or a timeout is a reason to try again; null when it was taken.
 */
export async function postSigned(client: OutboundClient, url: string, secret: string, id: string, body: string, timeoutMs: number): Promise<string | null> {
  let response: Awaited<ReturnType<OutboundClient['fetch']>>;
  try {
    response = await client.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'connect-gateway', ...webhookHeaders(secret, id, body) },
      body,
    });
  } catch (error) {
    if (error instanceof OutboundTargetError) return `webhook target refused: ${error.message}`;
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message;
    return `webhook unreachable: ${reason}`;
  }
  await response.body?.cancel();
  if (response.status >= 300 && response.status < 400) return `webhook answered HTTP ${response.status} (redirects are not followed)`;
  if (response.status < 200 || response.status >= 300) return `webhook answered HTTP ${response.status}`;
  return null;
}

/**
 * POSTs the message to the channel's webhook URL; `webhook-id` is the delivery id. Every failure is
 * retried. A channel without a webhook URL has no upstream: accepting the message is sending it.
 */
export function webhookProvider(options: { timeoutMs: number; client: OutboundClient }): OutboundProvider {
  return {
    name: 'webhook',
    async send(job): Promise<SendOutcome> {
      if (!job.channel.webhookUrl) return { kind: 'sent', providerIds: [] };
      const failure = await postSigned(
        options.client,
        job.channel.webhookUrl,
        job.channel.webhookSecret ?? '',
        job.deliveryId,
        JSON.stringify(deliveryPayload(job)),
        options.timeoutMs,
      );
      return failure ? { kind: 'retry', reason: failure } : { kind: 'sent', providerIds: [] };
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
