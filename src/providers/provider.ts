import type { z } from 'zod';
import type { Channel } from '../generated/prisma/client.js';
import type { OutboundClient } from '../lib/outbound-http.js';
import type { EmailStore } from './smtp/email.js';

/**
 * What a channel's provider does, in terms neither side owns: the outbox worker hands it a
 * message and gets an outcome back; a webhook route hands it a request and gets provider-neutral
 * inbound events back. A provider knows nothing of contacts or conversations; the domain knows
 * nothing of any one provider: each is a folder under src/providers/ exporting one
 * `ProviderDescriptor`, and src/providers/registry.ts lists them (docs/providers.md).
 */

/** A provider's name as channels store it (`channels.provider`): its descriptor's `name`. */
export type ProviderName = string;

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

/**
 * What a provider answered a send, when it answered: its HTTP status, its own error code, and its
 * `Retry-After` header as given. The delivery worker reads a rate-limit answer from it — HTTP 429,
 * or a code among the descriptor's `limits.rateLimitedCodes` (docs/broadcasts.md#rate-limit-answers).
 */
export interface ProviderReply {
  status: number;
  code?: string;
  retryAfter?: string | null;
}

/** How an attempt to send ended. */
export type SendOutcome =
  /** Taken by the provider, under these ids (one per part the message was sent as); `warning`: something to log (never a secret or a body). */
  | { kind: 'sent'; providerIds: string[]; warning?: string }
  /** Not taken, for a reason that may pass (network, timeout, 429, 5xx): the outbox tries again later. */
  | { kind: 'retry'; reason: string; reply?: ProviderReply }
  /**
   * Refused for good: the message fails with the provider's code and text as its failure reason.
   * `optedOut`: the provider refused because the recipient opted out of the channel with it.
   */
  | { kind: 'failed'; code: string; text: string; optedOut?: boolean; reply?: ProviderReply };

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
  /** Show the contact that the team is typing, too (a provider with `typingIndicator`). */
  typing?: boolean;
}

/** How reporting a read ended: taken, to be tried again, or refused for good. */
export type ReceiptOutcome = { kind: 'sent' } | { kind: 'retry'; reason: string } | { kind: 'failed'; code: string; text: string };

/** Sends a channel's messages. Never throws for a provider's answer: every answer is an outcome. */
export interface OutboundProvider {
  readonly name: ProviderName;
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
  /** The whole message is an opt-out keyword (`out`) or an opt-in keyword (`in`) of the provider. */
  optOut?: 'out' | 'in';
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
  /** The provider failed the message because the recipient opted out of the channel with it. */
  optedOut?: boolean;
}

export type InboundEvent = InboundMessage | InboundStatus;

/** A stored inbound event as a parser reads it. */
export interface InboundRaw {
  body: Buffer;
  headers: Record<string, string>;
  receivedAt: Date;
  channel: Pick<Channel, 'providerSettings'>;
  /** The stored event's id (an email's attachments are read back from it). */
  eventId?: string;
}

/**
 * Reads a provider's stored webhook into events, in groups by the channel they are for: a group
 * without `route` is the receiving channel's; one with a route belongs to the workspace's channel
 * whose `routeSetting` has that value (one webhook URL may serve several channels of a provider).
 */
export interface InboundParser {
  routeSetting?: string;
  /** The credential that signs the webhook: a group is routed only to a channel with the same one. */
  routeSecret?: string;
  parse(raw: InboundRaw): InboundGroup[] | Promise<InboundGroup[]>;
}

export interface InboundGroup {
  route?: string;
  events: InboundEvent[];
  /** Why an item of the group is not taken, one reason each (never its content): logged and counted, nothing applied. */
  unsupported?: string[];
}

/** What a process gives every provider when it builds them: clients, timeouts and the operator's settings. */
export interface ProviderTools {
  /** How long a provider API or webhook receiver may take to answer. */
  timeoutMs: number;
  /** The client for URLs the gateway did not choose (webhook receivers, media links): WEBHOOK_PRIVATE_TARGETS applies. */
  guarded: OutboundClient;
  /** The client for provider APIs, whose URLs are the operator's own settings. */
  api: OutboundClient;
  /** The gateway's public base URL (PUBLIC_URL): callbacks a provider is told to call. */
  publicUrl: string;
  /** The process's settings (src/env.ts): a provider reads its own (an API's base URL) by name. */
  settings: Readonly<Record<string, unknown>>;
  /** Stored inbound emails and their threads, which the domain keeps (src/modules/inbound/email.store.ts). */
  email?: EmailStore | undefined;
}

/** A provider setting as an admin flag: its flag name and its rule. */
export interface SettingSpec {
  flag: string;
  schema: z.ZodType<string>;
  /** The value of a channel that never set it; without one, the setting is required. */
  default?: string;
}

/** A channel as a webhook route finds it, with its credentials opened. */
export interface InboundChannel {
  channel: Pick<Channel, 'id' | 'workspaceId' | 'provider' | 'status'>;
  secrets: Record<string, string>;
}

/** What the app supplies every provider's webhook route: the channel lookup, the refusal, the body, the store. */
export interface WebhookParts {
  /** The active channel of `provider` a path names, or null (an unknown, inactive or other-provider channel is a 404). */
  channelOf(id: string | undefined, provider: ProviderName): Promise<InboundChannel | null>;
  refuse(provider: ProviderName, outcome: string, status: number, message: string, channelId: string | undefined): Response;
  /** Counts a webhook's outcome that is not a refusal (a verification handshake answered). */
  count(provider: ProviderName, outcome: string): void;
  /** The body within the webhook body limit (docs/providers.md, Inbound), or the 413 refusal. */
  body(request: Request, provider: ProviderName, channelId: string): Promise<{ bytes: Buffer } | { refused: Response }>;
  /** Stores the verified event with the delivery that will process it, and counts it accepted. */
  store(channel: InboundChannel['channel'], provider: ProviderName, headers: Record<string, string>, body: Buffer): Promise<void>;
  /** The gateway's public base URL (PUBLIC_URL): the URL providers sign. */
  publicUrl: string;
}

/** A webhook request as its route sees it. */
export interface WebhookCall {
  request: Request;
  url: URL;
  /** Path parameters as the route's pattern matched them. */
  params: Record<string, string | undefined>;
}

/**
 * A provider webhook, declared once: the route table serves it and the OpenAPI document lists it
 * with the signature it must carry. No credential: the route checks the provider's signature
 * itself, since only it knows the channel and so the secret.
 */
export interface WebhookDeclaration<Parts = WebhookParts> {
  method: 'GET' | 'POST';
  /** The absolute path, with `:name` path parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  params: z.ZodObject;
  query?: z.ZodObject;
  /** The header carrying the provider's signature, described for the document; none for a verification handshake. */
  signature?: { header: string; description: string };
  /** The body a provider posts. */
  body?: { contentType: string; description: string };
  /** Every answer, by status. */
  responses: { [status: number]: { description: string; contentType?: string } };
  /** Answers a call, with what the app supplies every webhook route. */
  handler(call: WebhookCall, parts: Parts): Promise<Response>;
}

/** What a provider needs of a recipient: a phone with an E.164 form, or an email address. */
export type AddressKind = 'phone' | 'email';

/**
 * A provider, whole: everything the gateway knows of it is here, and a provider is added by
 * writing its folder and listing its descriptor in src/providers/registry.ts (docs/architecture.md,
 * "Adding a provider").
 */
export interface ProviderDescriptor {
  /** Stored in `channels.provider` and given to `--provider`. */
  name: ProviderName;
  /** How a refusal names the provider to a caller ("WhatsApp", "SMS"). */
  label: string;
  /** The channel type the provider carries; undefined: any. */
  channelType?: 'whatsapp' | 'sms' | 'email' | 'webchat';
  /** Settings that may be shown (listings), by key, with their admin flags. */
  settings: Record<string, SettingSpec>;
  /** Credentials, stored sealed and never shown. */
  secrets: Record<string, SettingSpec>;
  /** Settings that may be shown, derived from the credentials (a URL with its password masked). */
  shown?: (secrets: Record<string, string>) => Record<string, string>;
  /** The admin commands' help for the provider's flags. */
  cliHelp: string;
  /** What a recipient must have to be reached (never a group); undefined: anyone the channel's webhook receiver can find. */
  reaches?: AddressKind;
  /**
   * How long after the contact's last inbound message a free-form text may still be sent;
   * afterwards only templates go (docs/providers.md, Outbound). Undefined: no window.
   */
  textWindowMs?: number;
  /** Whether the provider is told when the team read a conversation (its outbound provider's `markRead`). */
  readReceipts?: boolean;
  /**
   * The provider can show the contact that the team is typing (`markRead` with `typing`), on
   * channels whose `setting` is `on` (docs/inbox.md, "Typing on WhatsApp").
   */
  typingIndicator?: { setting: string };
  /** The outbound request, built once per process. */
  outbound(tools: ProviderTools): OutboundProvider;
  /** Reading inbound events: the stored event's parser and the webhook routes that store them. */
  inbound?: {
    parser(tools: ProviderTools): InboundParser;
    webhooks: WebhookDeclaration[];
    /** What the operator gives the provider so replies arrive (a URL to paste, an address), printed by the admin commands. */
    address(publicUrl: string, channel: { id: string; providerSettings?: unknown }): string | null;
  };
  /** Fetching an inbound message's files with the channel's credentials. */
  media?(tools: ProviderTools): MediaFetcher;
  /**
   * The provider's limits: its default send rate (a channel's `max_rate_per_second` unless the
   * channel sets its own), and its error codes that mean "rate limited" — beside HTTP 429, which
   * means it for every provider — or "the person opted out" (docs/broadcasts.md#pacing).
   */
  limits?: {
    defaultRatePerSecond?: number;
    rateLimitedCodes?: readonly string[];
    optedOutCodes?: readonly string[];
  };
}

/** A file a provider holds for an inbound message, opened for streaming. */
export interface OpenedMedia {
  body: ReadableStream<Uint8Array>;
  contentType: string | null;
  /** The number of bytes `body` yields, when the provider's answer states it; null otherwise (never a size declared elsewhere). */
  length: number | null;
}

/** The provider could not hand the file over: the media endpoint answers 502 with this message. */
export class MediaUnavailable extends Error {
  override name = 'MediaUnavailable';
}

export interface MediaFetcher {
  /** Opens the file `ref` names with the channel's credentials; at most `limitBytes` are ever read. */
  open(channel: ProviderChannel, ref: string, limitBytes: number): Promise<OpenedMedia>;
}
