import { z } from 'zod';
import type { InboundParser, ProviderDescriptor, ProviderTools } from '../provider.js';
import { setting, tokenSetting } from '../settings.js';
import { parseWebhook } from './inbound.js';
import { whatsappMedia } from './media.js';
import { whatsappProvider } from './send.js';
import { whatsappAddress, whatsappWebhooks } from './webhooks.js';

/** The Graph API's base and version, from WHATSAPP_API_URL and WHATSAPP_API_VERSION. */
const graphApi = (tools: ProviderTools) => ({
  baseUrl: setting(tools.settings, 'WHATSAPP_API_URL', 'https://graph.facebook.com'),
  version: setting(tools.settings, 'WHATSAPP_API_VERSION', 'v21.0'),
});

/** Meta's WhatsApp Cloud API (docs/providers.md). */
export const whatsappCloud: ProviderDescriptor = {
  name: 'whatsapp_cloud',
  label: 'WhatsApp',
  channelType: 'whatsapp',
  settings: {
    phoneNumberId: { flag: 'phone-number-id', schema: z.string().trim().regex(/^\d{1,64}$/, 'must be the numeric phone number id from Meta’s WhatsApp settings') },
    typingIndicators: { flag: 'typing-indicators', schema: z.enum(['on', 'off'], { error: 'must be on or off' }), default: 'off' },
  },
  secrets: {
    accessToken: { flag: 'access-token', schema: tokenSetting('access token', 4096) },
    appSecret: { flag: 'app-secret', schema: tokenSetting('app secret', 255) },
    verifyToken: { flag: 'verify-token', schema: tokenSetting('verify token', 255) },
  },
  cliHelp: '--phone-number-id P --access-token T --app-secret S --verify-token V [--typing-indicators on|off]',
  reaches: 'phone',
  // Meta's customer-service window: free-form messages only within 24 hours of the contact's last message.
  textWindowMs: 24 * 3600_000,
  readReceipts: true,
  typingIndicator: { setting: 'typingIndicators' },
  limits: {
    // Meta's default throughput for a business phone number.
    defaultRatePerSecond: 80,
    // Meta's rate-limit errors: the number's throughput (130429), the pair of business and
    // recipient (131056), the app or account (80007).
    rateLimitedCodes: ['130429', '131056', '80007'],
  },
  outbound: (tools) => whatsappProvider({ ...graphApi(tools), http: { exchange: tools.api.exchange, timeoutMs: tools.timeoutMs } }),
  inbound: {
    parser(): InboundParser {
      // Meta posts every number of an app to one URL: events for another number go to the channel that has it.
      return {
        routeSetting: 'phoneNumberId',
        routeSecret: 'appSecret',
        parse(raw) {
          const own = (raw.channel.providerSettings as Record<string, unknown>).phoneNumberId;
          return [...parseWebhook(raw.body, raw.receivedAt)].map(([number, events]) => (number === '' || number === own ? { events } : { route: number, events }));
        },
      };
    },
    webhooks: whatsappWebhooks,
    address: (publicUrl, channel) => whatsappAddress(publicUrl, channel.id),
  },
  media: (tools) => whatsappMedia({ ...graphApi(tools), api: tools.api, guarded: tools.guarded }),
};
