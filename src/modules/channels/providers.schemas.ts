import { z } from 'zod';
import type { ChannelProvider, ChannelType } from '../../generated/prisma/client.js';
import { maskSmtpUrl, parseSmtpUrl } from '../../providers/smtp/url.js';

/** A provider setting as an admin flag: its flag name and its rule. */
interface SettingSpec {
  flag: string;
  schema: z.ZodType<string>;
}

export interface ProviderSpec {
  /** The channel type the provider carries; undefined: any. */
  channelType?: ChannelType;
  /** Settings that may be shown (listings). */
  settings: Record<string, SettingSpec>;
  /** Credentials, stored sealed and never shown. */
  secrets: Record<string, SettingSpec>;
  /** Settings that may be shown, derived from the credentials (an SMTP URL with its password masked). */
  shown?: (secrets: Record<string, string>) => Record<string, string>;
}

const token = (what: string, max: number) =>
  z
    .string()
    .trim()
    .min(1, `must not be blank`)
    .max(max, `must be at most ${max} characters`)
    .regex(/^[\x21-\x7e]+$/, `must be the ${what} as given, without spaces`);

/** Every provider a channel can have, with the settings each needs (CONTRACT §6). */
/** An email address as a channel's from- or inbound address. */
const address = (what: string) => z.email(`must be the ${what} address, e.g. support@example.com`).max(254, 'must be at most 254 characters');

export const PROVIDERS: Record<'webhook' | 'whatsapp_cloud' | 'twilio' | 'smtp', ProviderSpec> = {
  webhook: { settings: {}, secrets: {} },
  whatsapp_cloud: {
    channelType: 'whatsapp',
    settings: {
      phoneNumberId: { flag: 'phone-number-id', schema: z.string().trim().regex(/^\d{1,64}$/, 'must be the numeric phone number id from Meta’s WhatsApp settings') },
    },
    secrets: {
      accessToken: { flag: 'access-token', schema: token('access token', 4096) },
      appSecret: { flag: 'app-secret', schema: token('app secret', 255) },
      verifyToken: { flag: 'verify-token', schema: token('verify token', 255) },
    },
  },
  twilio: {
    channelType: 'sms',
    settings: {
      accountSid: { flag: 'account-sid', schema: z.string().trim().regex(/^AC[0-9a-f]{32}$/, 'must be the Account SID from the Twilio console (AC and 32 hex digits)') },
      from: {
        flag: 'from',
        schema: z
          .string()
          .trim()
          .regex(/^\+[1-9]\d{1,14}$/, 'must be the sending number in E.164 form (+14155550100)'),
      },
    },
    secrets: {
      authToken: { flag: 'auth-token', schema: token('auth token', 255) },
    },
  },
  smtp: {
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
  },
};

export type ProviderName = keyof typeof PROVIDERS;

export const providerSchema = z.enum(Object.keys(PROVIDERS) as [ProviderName, ...ProviderName[]], {
  error: `must be one of ${Object.keys(PROVIDERS).join(', ')}`,
});

/** Every provider flag, of every provider: the admin commands take them all and check which belong. */
export const PROVIDER_FLAGS: string[] = [
  ...new Set(Object.values(PROVIDERS).flatMap((spec) => [...Object.values(spec.settings), ...Object.values(spec.secrets)].map((setting) => setting.flag))),
];

/**
 * A provider's settings and credentials from admin flags, over the `current` ones when the provider
 * stays (a rotation may give only what changes). A flag of another provider, a missing required
 * one, a bad value or a provider that does not carry the channel's type is a one-line message.
 */
export function providerConfig(
  provider: ProviderName,
  channelType: ChannelType,
  flags: Record<string, string | undefined>,
  current?: { provider: ChannelProvider; settings: Record<string, string>; secrets: Record<string, string> },
): { ok: true; settings: Record<string, string>; secrets: Record<string, string> } | { ok: false; message: string } {
  const spec = PROVIDERS[provider];
  if (spec.channelType && spec.channelType !== channelType) {
    return { ok: false, message: `--provider ${provider} carries ${spec.channelType} channels, not ${channelType} ones (use --type ${spec.channelType})` };
  }
  const own = new Set([...Object.values(spec.settings), ...Object.values(spec.secrets)].map((setting) => setting.flag));
  const foreign = PROVIDER_FLAGS.filter((flag) => flags[flag] !== undefined && !own.has(flag));
  if (foreign.length) return { ok: false, message: `--${foreign[0]} is not a setting of provider ${provider}` };
  const keep = current?.provider === provider ? current : undefined;
  const read = (specs: Record<string, SettingSpec>, kept: Record<string, string> | undefined) => {
    const values: Record<string, string> = {};
    for (const [key, { flag, schema }] of Object.entries(specs)) {
      const given = flags[flag];
      if (given === undefined) {
        const previous = kept?.[key];
        if (previous === undefined) return `--${flag} is required for provider ${provider}`;
        values[key] = previous;
        continue;
      }
      const parsed = schema.safeParse(given);
      if (!parsed.success) return `--${flag} ${parsed.error.issues[0]!.message}`;
      values[key] = parsed.data;
    }
    return values;
  };
  const settings = read(spec.settings, keep?.settings);
  if (typeof settings === 'string') return { ok: false, message: settings };
  const secrets = read(spec.secrets, keep?.secrets);
  if (typeof secrets === 'string') return { ok: false, message: secrets };
  return { ok: true, settings: { ...settings, ...spec.shown?.(secrets) }, secrets };
}

/** Where a channel's provider sends replies and statuses (printed for the operator to paste), or null. */
export function inboundUrl(publicUrl: string, channel: { id: string; provider: ChannelProvider; providerSettings?: unknown }): string | null {
  if (channel.provider === 'whatsapp_cloud') return `${publicUrl}/webhooks/whatsapp/${channel.id}`;
  // Messages come here; statuses to the same URL + `/status`, which every sent message names itself.
  if (channel.provider === 'twilio') return `${publicUrl}/webhooks/twilio/${channel.id}`;
  // Email arrives at an address, through the SMTP listener (SMTP_INBOUND_PORT), not at a URL.
  if (channel.provider === 'smtp') return ((channel.providerSettings ?? {}) as Record<string, string>).inboundAddress ?? null;
  return null;
}
