/**
 * What a channel's provider does, in terms neither side owns: the outbox worker hands it a
 * message and gets an outcome back; a webhook route hands it a request and gets provider-neutral
 * inbound events back. A provider knows nothing of contacts or conversations; the domain knows
 * nothing of WhatsApp, Twilio or SMTP.
 */

export type ProviderName = 'webhook' | 'whatsapp_cloud' | 'twilio' | 'smtp';

/**
 * When a provider says something happened, from its timestamp in whole seconds (WhatsApp's Unix
 * time, an email's `Date` header) and when the gateway received it: the moment within the stamped
 * second nearest the receipt — the receipt itself when it falls in that second, the second's last
 * millisecond when it came later, its first when the provider's clock runs ahead. So a reply that
 * arrives in the second of the gateway's own message is ordered after it (the conversation's last
 * message, its unread count), events stamped with one second keep the order they arrived in
 * (whichever of them came late), and every event keeps the provider's second. A stamp finer than
 * a second is kept as it is.
 */
export function providerTime(stamp: Date, receivedAt: Date): Date {
  if (stamp.getMilliseconds() !== 0) return stamp;
  const from = stamp.getTime();
  return new Date(Math.min(Math.max(receivedAt.getTime(), from), from + 999));
}

/** How an attempt to send ended. */
export type SendOutcome =
  /** Taken by the provider, under these ids (one per part the message was sent as); `warning`: something to log (never a secret or a body). */
  | { kind: 'sent'; providerIds: string[]; warning?: string }
  /** Not taken, for a reason that may pass (network, timeout, 429, 5xx): the outbox tries again later. */
  | { kind: 'retry'; reason: string }
  /** Refused for good: the message fails with the provider's code and text as its failure reason. */
  | { kind: 'failed'; code: string; text: string };

/** A message as a provider sends it. The body goes as stored: an encrypted message's ciphertext stays ciphertext. */
export interface OutboundMessage {
  id: string;
  conversationId: string;
  type: 'text' | 'template';
  body: string;
  isEncrypted: boolean;
  mediaUrls: string[];
  silent: boolean;
  createdAt: Date;
  /** For a template message: the template as the provider knows it, and the values of its placeholders. */
  template: { name: string; language: string; parameters: string[] } | null;
}

export interface OutboundRecipient {
  id: string;
  name: string;
  email: string | null;
  /** E.164, when the contact has one. */
  phone: string | null;
  isGroup: boolean;
}

/** The channel as its provider sees it: its settings and, opened, its credentials. */
export interface ProviderChannel {
  id: string;
  name: string;
  webhookUrl: string | null;
  /** The webhook signing secret, opened. */
  webhookSecret: string | null;
  settings: Record<string, string>;
  secrets: Record<string, string>;
}

export interface SendJob {
  /** Stable across attempts and workers: receivers de-duplicate on it. */
  deliveryId: string;
  attempt: number;
  message: OutboundMessage;
  recipient: OutboundRecipient;
  channel: ProviderChannel;
  /**
   * The ids of the parts an earlier attempt already sent, in order: an attempt sends only the
   * parts after them, so a retry never sends a part twice.
   */
  sentParts: string[];
  /**
   * Records a part the provider took, before the next is sent, and renews the attempt's lease.
   * Throws when the lease was lost to another worker: the provider must stop sending, and
   * lets the error through.
   */
  recordPart(providerId: string, part: number): Promise<void>;
}

/** A read receipt: the provider's id of the latest inbound message the team read. */
export interface ReadReceiptJob {
  deliveryId: string;
  channel: ProviderChannel;
  providerMessageId: string;
}

/** How reporting a read ended: taken, to be tried again, or refused for good. */
export type ReceiptOutcome = { kind: 'sent' } | { kind: 'retry'; reason: string } | { kind: 'failed'; code: string; text: string };

/** Sends a channel's messages. Never throws for a provider's answer: every answer is an outcome. */
export interface OutboundProvider {
  /** Its name in delivery log lines: a channel's provider, or `local` for a channel without an upstream (docs/delivery.md). */
  readonly name: ProviderName | 'local';
  send(job: SendJob): Promise<SendOutcome>;
  /** Reports that the inbound message was read, for a provider that takes read receipts. */
  markRead?(job: ReadReceiptJob): Promise<ReceiptOutcome>;
}

/** A file received with an inbound message, fetched from the provider when asked for. */
export interface InboundMedia {
  contentType: string | null;
  filename: string | null;
  /** Where the provider keeps it (a media id, a URL): never shown. */
  ref: string;
}

/** A message a person sent to the channel. */
export interface InboundMessage {
  kind: 'message';
  /** The provider's id of the message: a repeat of it is the same message. */
  providerId: string;
  from: { phone?: string; email?: string; name?: string };
  at: Date;
  body: string;
  media: InboundMedia[];
  /** Provider ids of messages this one answers, nearest first (an email's In-Reply-To, then its References). */
  thread?: string[];
  /** What the provider says of the message beyond its text, kept with it (an email's Message-ID, References, Subject). */
  meta?: Record<string, unknown>;
}

/** How far an outbound message got, as the provider reports it. */
export interface InboundStatus {
  kind: 'status';
  providerId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  at: Date;
  /** For `failed`: the provider's code and text. */
  error?: { code: string; text: string };
}

export type InboundEvent = InboundMessage | InboundStatus;
