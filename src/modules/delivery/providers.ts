import type { Channel, Contact, Message } from '../../generated/prisma/client.js';
import { signWebhook } from '../../lib/webhook-signature.js';

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
 * POSTs the message to the channel's webhook URL, signed the Standard Webhooks way
 * (`webhook-id` is the delivery id, so a receiver can drop a repeated delivery).
 * Any non-2xx answer, network error or timeout fails the attempt.
 */
export function webhookProvider(options: { timeoutMs: number }): DeliveryProvider {
  return {
    name: 'webhook',
    async deliver(job) {
      const url = job.channel.webhookUrl!;
      const body = JSON.stringify(deliveryPayload(job));
      const timestamp = Math.floor(Date.now() / 1000);
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'connect-gateway',
            'webhook-id': job.deliveryId,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signWebhook(job.channel.webhookSecret ?? '', job.deliveryId, timestamp, body),
          },
          body,
          signal: AbortSignal.timeout(options.timeoutMs),
          redirect: 'manual',
        });
      } catch (error) {
        const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : (error as Error).message;
        throw new DeliveryFailure(`webhook unreachable: ${reason}`);
      }
      await response.body?.cancel();
      if (response.status < 200 || response.status >= 300) throw new DeliveryFailure(`webhook answered HTTP ${response.status}`);
    },
  };
}

export type ProviderChoice = (channel: Channel) => DeliveryProvider;

export function defaultProviders(options: { timeoutMs: number }): ProviderChoice {
  const webhook = webhookProvider(options);
  return (channel) => (channel.webhookUrl ? webhook : acceptProvider);
}
