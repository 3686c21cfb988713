import type { Channel } from '../../generated/prisma/client.js';
import type { Sealer } from '../../lib/sealed.js';
import type { ProviderChannel } from '../../providers/provider.js';
import { requireSealer } from '../secrets/secrets.service.js';

/** A JSON object of strings, as provider settings and credentials are kept. */
function strings(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** A channel's provider credentials, sealed for storage. */
export function sealProviderSecrets(secrets: Record<string, string>, sealer: Sealer | null | undefined): string {
  return requireSealer(sealer).seal(JSON.stringify(secrets));
}

/** A channel's provider credentials, opened. */
export function openProviderSecrets(channel: Pick<Channel, 'providerSecrets'>, sealer: Sealer | null | undefined): Record<string, string> {
  if (!channel.providerSecrets) return {};
  return strings(JSON.parse(requireSealer(sealer).open(channel.providerSecrets)));
}

/** The channel as its provider sees it: settings, and credentials and signing secret opened. */
export function providerChannel(
  channel: Pick<Channel, 'id' | 'name' | 'webhookUrl' | 'webhookSecret' | 'providerSettings' | 'providerSecrets'>,
  sealer: Sealer | null | undefined,
): ProviderChannel {
  return {
    id: channel.id,
    name: channel.name,
    webhookUrl: channel.webhookUrl,
    webhookSecret: channel.webhookSecret ? requireSealer(sealer).open(channel.webhookSecret) : null,
    settings: strings(channel.providerSettings),
    secrets: openProviderSecrets(channel, sealer),
  };
}
