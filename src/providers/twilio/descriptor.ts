import { z } from 'zod';
import type { ProviderDescriptor } from '../provider.js';
import { e164Setting, setting, tokenSetting } from '../settings.js';
import { parseTwilioWebhook, TWILIO_KIND_HEADER } from './inbound.js';
import { twilioMedia } from './media.js';
import { twilioProvider } from './send.js';
import { twilioAddress, twilioWebhooks } from './webhooks.js';

/** Twilio Programmable Messaging, SMS and MMS (docs/providers.md). */
export const twilio: ProviderDescriptor = {
  name: 'twilio',
  label: 'SMS',
  channelType: 'sms',
  settings: {
    accountSid: { flag: 'account-sid', schema: z.string().trim().regex(/^AC[0-9a-f]{32}$/, 'must be the Account SID from the Twilio console (AC and 32 hex digits)') },
    from: { flag: 'from', schema: e164Setting('sending number') },
  },
  secrets: {
    authToken: { flag: 'auth-token', schema: tokenSetting('auth token', 255) },
  },
  cliHelp: '--account-sid AC… --auth-token T --from +E164',
  reaches: 'phone',
  limits: {
    // Twilio's rate for a long code number: one message a second.
    defaultRatePerSecond: 1,
    // Twilio's "Too Many Requests".
    rateLimitedCodes: ['20429'],
  },
  outbound: (tools) =>
    twilioProvider({
      baseUrl: setting(tools.settings, 'TWILIO_API_URL', 'https://api.twilio.com'),
      publicUrl: tools.publicUrl,
      http: { exchange: tools.api.exchange, timeoutMs: tools.timeoutMs },
    }),
  inbound: {
    parser: () => ({
      parse: (raw) => [parseTwilioWebhook(raw.body, raw.headers[TWILIO_KIND_HEADER] === 'status' ? 'status' : 'message', raw.receivedAt)],
    }),
    webhooks: twilioWebhooks,
    address: (publicUrl, channel) => twilioAddress(publicUrl, channel.id),
  },
  media: (tools) => twilioMedia({ baseUrl: setting(tools.settings, 'TWILIO_API_URL', 'https://api.twilio.com'), guarded: tools.guarded }),
};
