import type { Channel, Contact, Message } from '../../generated/prisma/client.js';
import { webhookHeaders } from '../../lib/webhook-signature.js';
import { OutboundTargetError, createOutboundClient, type OutboundClient, type Resolver, type TargetPolicy } from '../../lib/outbound-http.js';

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
 * POSTs a body signed the Standard Webhooks way under a stable id, through the guarded client
 * (src/lib/outbound-http.ts). Any non-2xx answer (a redirect included: none is followed), a
 * refused target, a network error or a timeout fails the attempt.
 */
async function postSigned(client: OutboundClient, url: string, secret: string, id: string, body: string, timeoutMs: number): Promise<void> {
  let response: Awaited<ReturnType<OutboundClient['fetch']>>;
  try {
    response = await client.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'connect-gateway', ...webhookHeaders(secret, id, body) },
      body,
    });
  } catch (error) {
    if (error instanceof OutboundTargetError) throw new DeliveryFailure(`webhook target refused: ${error.message}`);
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message;
    throw new DeliveryFailure(`webhook unreachable: ${reason}`);
  }
  await response.body?.cancel();
  if (response.status >= 300 && response.status < 400) throw new DeliveryFailure(`webhook answered HTTP ${response.status} (redirects are not followed)`);
  if (response.status < 200 || response.status >= 300) throw new DeliveryFailure(`webhook answered HTTP ${response.status}`);
}

/** POSTs the message to the channel's webhook URL; `webhook-id` is the delivery id. */
export function webhookProvider(options: { timeoutMs: number; client: OutboundClient }): DeliveryProvider {
  return {
    name: 'webhook',
    deliver: (job) =>
      postSigned(
        options.client,
        job.channel.webhookUrl!,
        job.channel.webhookSecret ?? '',
        job.deliveryId,
        JSON.stringify(deliveryPayload(job)),
        options.timeoutMs,
      ),
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

export function eventWebhookProvider(options: { timeoutMs: number; client: OutboundClient }): EventProvider {
  return { name: 'event-webhook', deliver: (job) => postSigned(options.client, job.url, job.secret, job.deliveryId, job.body, options.timeoutMs) };
}

/** The provider of a channel's messages; `events` carries workspace events to webhook endpoints. */
export type ProviderChoice = ((channel: Channel) => DeliveryProvider) & { readonly events: EventProvider };

/**
 * The providers of a process. Deliveries to webhook URLs go through one guarded client whose
 * target policy is `targets` (WEBHOOK_PRIVATE_TARGETS); `resolve` replaces the system's DNS (tests).
 */
export function defaultProviders(options: { timeoutMs: number; targets: TargetPolicy; resolve?: Resolver }): ProviderChoice {
  const client = createOutboundClient({ policy: options.targets, timeoutMs: options.timeoutMs, ...(options.resolve ? { resolve: options.resolve } : {}) });
  const webhook = webhookProvider({ timeoutMs: options.timeoutMs, client });
  return Object.assign((channel: Channel) => (channel.webhookUrl ? webhook : acceptProvider), {
    events: eventWebhookProvider({ timeoutMs: options.timeoutMs, client }),
  });
}
