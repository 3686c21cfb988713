import type { Channel } from '../generated/prisma/client.js';
import { createOutboundClient, type OutboundClient, type Resolver, type TargetPolicy } from '../lib/outbound-http.js';
import type { InboundEvent, OutboundProvider, ProviderName } from './provider.js';
import { acceptProvider, eventWebhookProvider, webhookProvider, type EventProvider } from './webhook/send.js';
import { whatsappProvider } from './whatsapp/send.js';
import { parseWebhook } from './whatsapp/inbound.js';
import { whatsappMedia, type MediaFetcher } from './whatsapp/media.js';
import { twilioProvider } from './twilio/send.js';
import { parseTwilioWebhook, TWILIO_KIND_HEADER } from './twilio/inbound.js';
import { twilioMedia } from './twilio/media.js';
import type { EmailStore } from './smtp/email.js';
import { parseEmail } from './smtp/inbound.js';
import { smtpMedia } from './smtp/media.js';
import { smtpProvider } from './smtp/send.js';
import { DEFAULT_MAX_RATE as webhookRate } from './webhook/rate.js';
import { DEFAULT_MAX_RATE as whatsappRate } from './whatsapp/rate.js';
import { DEFAULT_MAX_RATE as twilioRate } from './twilio/rate.js';
import { DEFAULT_MAX_RATE as smtpRate } from './smtp/rate.js';

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
 * whose `routeSetting` has that value (WhatsApp sends every number of an app to one URL).
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

export type InboundParsers = (provider: ProviderName) => InboundParser;

export interface ProviderOptions {
  /** How long a provider API or webhook receiver may take to answer. */
  timeoutMs: number;
  /** WEBHOOK_PRIVATE_TARGETS, for URLs the gateway did not choose (webhooks, media links). */
  targets: TargetPolicy;
  whatsapp: { baseUrl: string; version: string };
  /** TWILIO_API_URL, and PUBLIC_URL for the status callbacks (defaults: Twilio's API, http://localhost:4000). */
  twilio?: { baseUrl: string; publicUrl: string };
  /** Replaces the system's DNS for guarded targets (tests). */
  resolve?: Resolver;
  /** Email threads and stored emails (src/modules/inbound/email.store.ts): replies thread, attachments are read back. */
  email?: EmailStore;
}

/** Everything the delivery worker and the inbound routes need of the providers, built once per process. */
export interface Providers {
  outbound(channel: Pick<Channel, 'provider' | 'webhookUrl'>): OutboundProvider;
  parsers: InboundParsers;
  media(provider: ProviderName): MediaFetcher | null;
  events: EventProvider;
  close(): Promise<void>;
}

export function createProviders(options: ProviderOptions): Providers {
  // URLs an operator or a person typed go through the target policy; provider APIs are the operator's own settings.
  const guarded: OutboundClient = createOutboundClient({ policy: options.targets, timeoutMs: options.timeoutMs, ...(options.resolve ? { resolve: options.resolve } : {}) });
  const api: OutboundClient = createOutboundClient({ policy: 'allow', timeoutMs: options.timeoutMs });
  const http = { exchange: api.exchange, timeoutMs: options.timeoutMs };
  const webhook = webhookProvider({ timeoutMs: options.timeoutMs, client: guarded });
  const whatsapp = whatsappProvider({ ...options.whatsapp, http });
  const whatsappParser: InboundParser = {
    routeSetting: 'phoneNumberId',
    routeSecret: 'appSecret',
    parse(raw) {
      const own = (raw.channel.providerSettings as Record<string, unknown>).phoneNumberId;
      return [...parseWebhook(raw.body, raw.receivedAt)].map(([number, events]) => (number === '' || number === own ? { events } : { route: number, events }));
    },
  };
  const media = whatsappMedia({ ...options.whatsapp, api, guarded });
  const twilioSettings = options.twilio ?? { baseUrl: 'https://api.twilio.com', publicUrl: 'http://localhost:4000' };
  const twilio = twilioProvider({ ...twilioSettings, http });
  const twilioParser: InboundParser = {
    parse: (raw) => [parseTwilioWebhook(raw.body, raw.headers[TWILIO_KIND_HEADER] === 'status' ? 'status' : 'message', raw.receivedAt)],
  };
  const twilioFiles = twilioMedia({ baseUrl: twilioSettings.baseUrl, guarded });
  const smtp = smtpProvider({ timeoutMs: options.timeoutMs, store: options.email });
  const smtpParser: InboundParser = {
    parse: async (raw) => [{ events: await parseEmail({ ...raw, eventId: raw.eventId ?? '' }) }],
  };
  const emailMedia = smtpMedia(options.email);
  return {
    outbound(channel) {
      if (channel.provider === 'whatsapp_cloud') return whatsapp;
      if (channel.provider === 'twilio') return twilio;
      if (channel.provider === 'smtp') return smtp;
      return channel.webhookUrl ? webhook : acceptProvider;
    },
    parsers(provider) {
      if (provider === 'whatsapp_cloud') return whatsappParser;
      if (provider === 'twilio') return twilioParser;
      if (provider === 'smtp') return smtpParser;
      throw new Error(`no inbound parser for provider ${provider}`);
    },
    media: (provider) => (provider === 'whatsapp_cloud' ? media : provider === 'twilio' ? twilioFiles : provider === 'smtp' ? emailMedia : null),
    events: eventWebhookProvider({ timeoutMs: options.timeoutMs, client: guarded }),
    async close() {
      await Promise.all([guarded.close(), api.close()]);
    },
  };
}

/** Each provider's default broadcast pace, in messages a second (docs/broadcasts.md#pacing). */
const DEFAULT_RATES: Record<ProviderName, number> = {
  webhook: webhookRate,
  whatsapp_cloud: whatsappRate,
  twilio: twilioRate,
  smtp: smtpRate,
};

/** A channel's broadcast pace: its own `max_rate_per_second`, else its provider's default. */
export function maxRatePerSecond(channel: Pick<Channel, 'provider' | 'maxRatePerSecond'>): number {
  return channel.maxRatePerSecond ?? DEFAULT_RATES[channel.provider];
}
