import { z } from 'zod';
import type { ChannelType } from '../../generated/prisma/client.js';
import type { ProviderDescriptor, SettingSpec } from '../../providers/provider.js';
import { PROVIDERS, findProvider } from '../../providers/registry.js';

/** `--provider`: one of the listed providers' names. */
export function providerSchema(list: readonly ProviderDescriptor[] = PROVIDERS) {
  const names = list.map((descriptor) => descriptor.name);
  return z.string().refine((name) => names.includes(name), { error: `must be one of ${names.join(', ')}` });
}

/** Every provider flag, of every listed provider: the admin commands take them all and check which belong. */
export function providerFlags(list: readonly ProviderDescriptor[] = PROVIDERS): string[] {
  return [...new Set(list.flatMap((spec) => [...Object.values(spec.settings), ...Object.values(spec.secrets)].map((setting) => setting.flag)))];
}

/**
 * A provider's settings and credentials from admin flags, over the `current` ones when the provider
 * stays (a rotation may give only what changes). A flag of another provider, a missing required
 * one, a bad value or a provider that does not carry the channel's type is a one-line message.
 */
export function providerConfig(
  spec: ProviderDescriptor,
  channelType: ChannelType,
  flags: Record<string, string | undefined>,
  current?: { provider: string; settings: Record<string, string>; secrets: Record<string, string> },
  list: readonly ProviderDescriptor[] = PROVIDERS,
): { ok: true; settings: Record<string, string>; secrets: Record<string, string> } | { ok: false; message: string } {
  const provider = spec.name;
  if (spec.channelType && spec.channelType !== channelType) {
    return { ok: false, message: `--provider ${provider} carries ${spec.channelType} channels, not ${channelType} ones (use --type ${spec.channelType})` };
  }
  const own = new Set([...Object.values(spec.settings), ...Object.values(spec.secrets)].map((setting) => setting.flag));
  const foreign = providerFlags(list).filter((flag) => flags[flag] !== undefined && !own.has(flag));
  if (foreign.length) return { ok: false, message: `--${foreign[0]} is not a setting of provider ${provider}` };
  const keep = current?.provider === provider ? current : undefined;
  const read = (specs: Record<string, SettingSpec>, kept: Record<string, string> | undefined) => {
    const values: Record<string, string> = {};
    for (const [key, { flag, schema }] of Object.entries(specs)) {
      const given = flags[flag];
      if (given === undefined) {
        const previous = kept?.[key] ?? specs[key]!.default;
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

/** Where a channel's provider sends replies and statuses (a URL or an address, printed for the operator to paste), or null. */
export function inboundUrl(
  publicUrl: string,
  channel: { id: string; provider: string; providerSettings?: unknown },
  list: readonly ProviderDescriptor[] = PROVIDERS,
): string | null {
  return findProvider(channel.provider, list)?.inbound?.address(publicUrl, channel) ?? null;
}
