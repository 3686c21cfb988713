import { z } from 'zod';
import type { ProviderDescriptor } from '../provider.js';
import { parseEmail } from './inbound.js';
import { smtpMedia } from './media.js';
import { smtpProvider } from './send.js';
import { maskSmtpUrl, parseSmtpUrl } from './url.js';

/** An email address as a channel's from- or inbound address. */
const address = (what: string) => z.email(`must be the ${what} address, e.g. support@example.com`).max(254, 'must be at most 254 characters');

/**
 * Email: out through the channel's SMTP relay, in through the gateway's own SMTP listener
 * (SMTP_INBOUND_PORT) at the channel's inbound address (docs/providers.md).
 */
export const smtp: ProviderDescriptor = {
  name: 'smtp',
  label: 'email',
  channelType: 'email',
  settings: {
    fromAddress: { flag: 'from-address', schema: z.string().trim().pipe(address('sender')) },
    // Matched case-insensitively by the SMTP listener; kept lowercased.
    inboundAddress: { flag: 'inbound-address', schema: z.string().trim().toLowerCase().pipe(address('inbound')) },
  },
  secrets: {
    smtpUrl: {
      flag: 'smtp-url',
      schema: z
        .string()
        .trim()
        .max(2048, 'must be at most 2048 characters')
        .refine((value) => parseSmtpUrl(value) !== null, 'must be an smtp:// or smtps:// URL of the relay, e.g. smtps://user:password@smtp.example.com:465'),
    },
  },
  shown: (secrets) => ({ smtpUrl: maskSmtpUrl(secrets.smtpUrl ?? '') }),
  cliHelp: '--smtp-url smtp[s]://user:pass@host:port --from-address A --inbound-address B',
  reaches: 'email',
  // A modest pace most SMTP relays accept without throttling.
  limits: { defaultRatePerSecond: 10 },
  outbound: (tools) => smtpProvider({ timeoutMs: tools.timeoutMs, store: tools.email }),
  inbound: {
    parser: () => ({ parse: async (raw) => [{ events: await parseEmail({ ...raw, eventId: raw.eventId ?? '' }) }] }),
    // Email arrives through the SMTP listener, not at a URL.
    webhooks: [],
    address: (_publicUrl, channel) => ((channel.providerSettings ?? {}) as Record<string, string>).inboundAddress ?? null,
  },
  media: (tools) => smtpMedia(tools.email),
};
