import type { Channel } from '../generated/prisma/client.js';
import { createOutboundClient, type Resolver, type TargetPolicy } from '../lib/outbound-http.js';
import type { InboundParser, MediaFetcher, OutboundProvider, ProviderDescriptor, ProviderName, ProviderTools, WebhookDeclaration } from './provider.js';
import type { EmailStore } from './smtp/email.js';
import { smtp } from './smtp/descriptor.js';
import { twilio } from './twilio/descriptor.js';
import { eventWebhookProvider, type EventProvider } from './webhook/send.js';
import { webhook } from './webhook/descriptor.js';
import { whatsappCloud } from './whatsapp/descriptor.js';

/** Every provider a channel can have: one descriptor each, from its folder (docs/architecture.md, "Adding a provider"). */
export const PROVIDERS: readonly ProviderDescriptor[] = [webhook, whatsappCloud, twilio, smtp];

/** The provider a channel has by default. */
export const DEFAULT_PROVIDER = webhook.name;

/** The descriptor of `name` among `list`, or undefined. */
export function findProvider(name: string, list: readonly ProviderDescriptor[] = PROVIDERS): ProviderDescriptor | undefined {
  return list.find((descriptor) => descriptor.name === name);
}

/** Every provider's webhook routes, in the list's order. */
export function providerWebhooks(list: readonly ProviderDescriptor[] = PROVIDERS): WebhookDeclaration[] {
  return list.flatMap((descriptor) => descriptor.inbound?.webhooks ?? []);
}

export type InboundParsers = (provider: ProviderName) => InboundParser;

export interface ProviderOptions {
  /** How long a provider API or webhook receiver may take to answer. */
  timeoutMs: number;
  /** WEBHOOK_PRIVATE_TARGETS, for URLs the gateway did not choose (webhooks, media links). */
  targets: TargetPolicy;
  /** PUBLIC_URL: callbacks a provider is told to call (default http://localhost:4000). */
  publicUrl?: string;
  /** The process's settings (src/env.ts), from which each provider reads its own (an API's base URL); unset ones take their defaults. */
  settings?: Readonly<Record<string, unknown>>;
  /** Replaces the system's DNS for guarded targets (tests). */
  resolve?: Resolver;
  /** Email threads and stored emails (src/modules/inbound/email.store.ts): replies thread, attachments are read back. */
  email?: EmailStore;
}

/** Everything the delivery worker, the inbound routes and the services need of the providers, built once per process. */
export interface Providers {
  /** The descriptors these were built from. */
  readonly list: readonly ProviderDescriptor[];
  outbound(channel: Pick<Channel, 'provider'>): OutboundProvider;
  parsers: InboundParsers;
  media(provider: ProviderName): MediaFetcher | null;
  events: EventProvider;
  close(): Promise<void>;
}

/** Builds each listed provider once; a channel whose provider is not listed is sent as the default provider's. */
export function createProviders(options: ProviderOptions, list: readonly ProviderDescriptor[] = PROVIDERS): Providers {
  // URLs an operator or a person typed go through the target policy; provider APIs are the operator's own settings.
  const guarded = createOutboundClient({ policy: options.targets, timeoutMs: options.timeoutMs, ...(options.resolve ? { resolve: options.resolve } : {}) });
  const api = createOutboundClient({ policy: 'allow', timeoutMs: options.timeoutMs });
  const tools: ProviderTools = {
    timeoutMs: options.timeoutMs,
    guarded,
    api,
    publicUrl: options.publicUrl ?? 'http://localhost:4000',
    settings: options.settings ?? {},
    email: options.email,
  };
  const built = new Map(
    list.map((descriptor) => [
      descriptor.name,
      { outbound: descriptor.outbound(tools), parser: descriptor.inbound?.parser(tools) ?? null, media: descriptor.media?.(tools) ?? null },
    ]),
  );
  const fallback = built.get(DEFAULT_PROVIDER) ?? { outbound: webhook.outbound(tools), parser: null, media: null };
  return {
    list,
    outbound: (channel) => (built.get(channel.provider) ?? fallback).outbound,
    parsers(provider) {
      const parser = built.get(provider)?.parser;
      if (!parser) throw new Error(`no inbound parser for provider ${provider}`);
      return parser;
    },
    media: (provider) => built.get(provider)?.media ?? null,
    events: eventWebhookProvider({ timeoutMs: options.timeoutMs, client: guarded }),
    async close() {
      await Promise.all([guarded.close(), api.close()]);
    },
  };
}

/** A provider's broadcast pace when its descriptor states none, in messages a second (docs/broadcasts.md#pacing). */
const FALLBACK_RATE_PER_SECOND = 1;

/**
 * A channel's broadcast pace: its own `max_rate_per_second`, else its provider's default
 * (`limits.defaultRatePerSecond` in the descriptor); a provider not listed is paced as the default provider.
 */
export function maxRatePerSecond(channel: Pick<Channel, 'provider' | 'maxRatePerSecond'>, list: readonly ProviderDescriptor[] = PROVIDERS): number {
  if (channel.maxRatePerSecond != null) return channel.maxRatePerSecond;
  const descriptor = findProvider(channel.provider, list) ?? findProvider(DEFAULT_PROVIDER, list);
  return descriptor?.limits?.defaultRatePerSecond ?? FALLBACK_RATE_PER_SECOND;
}
