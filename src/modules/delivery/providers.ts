import type { Channel, Contact, Message } from '../../generated/prisma/client.js';
import { webhookHeaders } from '../../lib/webhook-signature.js';

export interface DeliveryJob {
  /** Stable across attempts and workers: receivers de-duplicate on it. */
  deliveryId: string;
  attempt: number;
  message: Message;
  channel: Channel;
  contact: Contact;
}

/** Hands a message to whatever carries it. Throws to have the attempt retried. */
export interface DeliveryProvider {
  readonly name: string;
  deliver(job: DeliveryJob): Promise<void>;
}

export class DeliveryFailure extends Error {}

/** For channels without an upstream: accepting the message is sending it. */
export const acceptProvider: DeliveryProvider = {
  name: 'accept',
  async deliver() {},
};

/** The payload a channel's webhook receives. The body goes as given: ciphertext stays ciphertext. */
export function deliveryPayload(job: DeliveryJob) {
  const { message, contact } = job;
  return {
    type: 'message.outbound',
    deliveryId: job.deliveryId,
    attempt: job.attempt,
    message: {
      id: message.id,
      conversationId: message.conversationId,
      channelId: message.channelId,
      type: message.type,
      body: message.body,
      isEncrypted: message.isEncrypted,
      mediaUrls: message.mediaUrls,
      silent: message.silent,
      createdAt: message.createdAt.toISOString(),
    },
    contact: { id: contact.id, name: contact.name, email: contact.email, phoneNumber: contact.phone, isGroup: contact.isGroup },
  };
}

/**
 * POSTs a body signed the Standard Webhooks way under a stable id. Any non-2xx
 * answer, network error or timeout fails the attempt; redirects are not followed.
 */
async function postSigned(url: string, secret: string, id: string, body: string, timeoutMs: number): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'connect-gateway', ...webhookHeaders(secret, id, body) },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message;
    throw new DeliveryFailure(`webhook unreachable: ${reason}`);
  }
  await response.body?.cancel();
  if (response.status < 200 || response.status >= 300) throw new DeliveryFailure(`webhook answered HTTP ${response.status}`);
}

/** POSTs the message to the channel's webhook URL; `webhook-id` is the delivery id. */
export function webhookProvider(options: { timeoutMs: number }): DeliveryProvider {
  return {
    name: 'webhook',
    deliver: (job) =>
      postSigned(job.channel.webhookUrl!, job.channel.webhookSecret ?? '', job.deliveryId, JSON.stringify(deliveryPayload(job)), options.timeoutMs),
  };
}

/** One workspace event for one webhook endpoint, with the body stored when the change committed. */
export interface EventJob {
  /** Stable across attempts and workers: one per event and endpoint. */
  deliveryId: string;
  url: string;
  secret: string;
  body: string;
}

/** Sends events to webhook endpoints. Throws to have the attempt retried. */
export interface EventProvider {
  readonly name: string;
  deliver(job: EventJob): Promise<void>;
}

export function eventWebhookProvider(options: { timeoutMs: number }): EventProvider {
  return { name: 'event-webhook', deliver: (job) => postSigned(job.url, job.secret, job.deliveryId, job.body, options.timeoutMs) };
}

/** The provider of a channel's messages; `events` carries workspace events to webhook endpoints. */
export type ProviderChoice = ((channel: Channel) => DeliveryProvider) & { readonly events: EventProvider };

export function defaultProviders(options: { timeoutMs: number }): ProviderChoice {
  const webhook = webhookProvider(options);
  return Object.assign((channel: Channel) => (channel.webhookUrl ? webhook : acceptProvider), { events: eventWebhookProvider(options) });
}
