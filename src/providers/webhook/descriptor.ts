import type { ProviderDescriptor } from '../provider.js';
import { webhookProvider } from './send.js';

/**
 * The default: a signed POST of each message to the channel's webhook URL, or, for a channel
 * without one, the message accepted as sent (docs/providers.md). Replies come in through the
 * Connect API itself, so it has no inbound side.
 */
export const webhook: ProviderDescriptor = {
  name: 'webhook',
  label: 'webhook',
  settings: {},
  secrets: {},
  cliHelp: '',
  // A receiver of the gateway's own signed POSTs.
  limits: { defaultRatePerSecond: 100 },
  outbound: (tools) => webhookProvider({ timeoutMs: tools.timeoutMs, client: tools.guarded }),
};
