import type { Channel, ChannelType, PrismaClient } from '../../generated/prisma/client.js';
import type { Sealer } from '../../lib/sealed.js';
import { requireSealer } from '../secrets/secrets.service.js';
import { sealProviderSecrets } from './channel-secrets.js';
import type { RequestContext } from '../../context/types.js';
import { NEWEST_FIRST, afterCursor, toPage, type Cursor, type Page } from '../../lib/pagination.js';
import { InputError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';
import { isUuid } from '../../lib/uuid.js';
import { newWebhookSecret } from '../../lib/webhook-signature.js';
import { issueChannelKey } from '../credentials/credentials.service.js';
import { pageArgs } from '../../db/view.js';
import { channelTable } from './channels.sql.js';
import { maxRatePerSecond } from '../../providers/registry.js';

/** A channel's provider and its settings, as the admin commands give them (credentials in clear, sealed when stored). */
export interface ProviderConfig {
  provider: string;
  settings: Record<string, string>;
  secrets: Record<string, string>;
}

/**
 * Creates a channel with its first API key; the key, and the webhook signing secret when the
 * channel has a webhook URL, are returned once. Secrets are stored sealed with `sealer`.
 */
export async function createChannel(
  prisma: PrismaClient,
  input: { workspaceId: string; name: string; type: ChannelType; webhookUrl?: string | undefined; provider?: ProviderConfig | undefined },
  sealer?: Sealer | null,
): Promise<{ channel: Channel; apiKey: string; webhookSecret: string | null }> {
  const webhookSecret = input.webhookUrl ? newWebhookSecret() : null;
  const provider = input.provider;
  const data = {
    workspaceId: input.workspaceId,
    name: input.name,
    type: input.type,
    webhookUrl: input.webhookUrl ?? null,
    webhookSecret: webhookSecret && requireSealer(sealer).seal(webhookSecret),
    ...(provider
      ? {
          provider: provider.provider,
          providerSettings: provider.settings,
          providerSecrets: Object.keys(provider.secrets).length ? sealProviderSecrets(provider.secrets, sealer) : null,
        }
      : {}),
  };
  if (provider) await refuseTakenInboundAddress(prisma, provider, null);
  try {
    return await prisma.$transaction(async (tx) => {
      const channel = await tx.channel.create({ data });
      const { token } = await issueChannelKey(tx, channel);
      return { channel, apiKey: token, webhookSecret };
    });
  } catch (error) {
    throw takenInboundAddress(error, provider) ?? error;
  }
}

/** Changes a channel's provider settings and credentials (a rotation included); credentials are stored sealed. */
export async function configureChannel(prisma: PrismaClient, id: string, config: ProviderConfig, sealer?: Sealer | null): Promise<Channel> {
  const channel = await channelById(prisma, id);
  if (channel.status === 'active') await refuseTakenInboundAddress(prisma, config, channel.id);
  try {
    return await prisma.channel.update({
      where: { id },
      data: {
        provider: config.provider,
        providerSettings: config.settings,
        providerSecrets: Object.keys(config.secrets).length ? sealProviderSecrets(config.secrets, sealer) : null,
      },
    });
  } catch (error) {
    throw takenInboundAddress(error, config) ?? error;
  }
}

/** The refusal of an inbound address another active email channel has (docs/operating-safely.md, Staying up: an address belongs to one). */
function inboundAddressTaken(address: string, holder: string | null): InputError {
  return new InputError(`the inbound address ${address} is already that of active channel ${holder ?? '(another)'}: an inbound address belongs to one active channel`);
}

/**
 * Refuses an email channel's inbound address when another active channel has it, whatever the
 * case it was written in: the database's unique index enforces the same (see
 * `takenInboundAddress`), this names the channel that holds it.
 */
async function refuseTakenInboundAddress(prisma: PrismaClient, config: ProviderConfig, self: string | null): Promise<void> {
  const address = config.settings.inboundAddress;
  if (!address) return;
  const [holder] = await prisma.$queryRaw<{ id: string }[]>`
    SELECT id FROM channels
     WHERE inbound_address = lower(${address}) AND status = 'active' AND id IS DISTINCT FROM ${self}::uuid`;
  if (holder) throw inboundAddressTaken(address, holder.id);
}

/** The unique index's refusal (a channel given the address at the same moment), as the same one line. */
function takenInboundAddress(error: unknown, config: ProviderConfig | undefined): InputError | null {
  const address = config?.settings.inboundAddress;
  // The channel's other unique keys are fresh ids and token hashes: with an address given, its index is the one a write can meet.
  if (!address || !isUniqueViolation(error)) return null;
  return inboundAddressTaken(address, null);
}

export async function channelById(prisma: PrismaClient, id: string): Promise<Channel> {
  const channel = isUuid(id) ? await prisma.channel.findUnique({ where: { id } }) : null;
  if (!channel) throw new InputError(`No channel has id ${id}.`);
  return channel;
}

/** The most a channel's `max_rate_per_second` may be set to. */
export const MAX_RATE_PER_SECOND = 10_000;

/**
 * Sets a channel's own `max_rate_per_second`, or (null) goes back to its provider's default; a
 * broadcast's rate is at most its channel's (docs/broadcasts.md#pacing), so every broadcast of the
 * channel not yet ended is lowered to the new rate where it was above it. The rate the channel
 * now has, and whether it is its provider's default.
 */
export async function setChannelMaxRate(prisma: PrismaClient, id: string, rate: number | null): Promise<{ channel: Channel; ratePerSecond: number; isDefault: boolean }> {
  await channelById(prisma, id);
  return prisma.$transaction(async (tx) => {
    const channel = await tx.channel.update({ where: { id }, data: { maxRatePerSecond: rate } });
    const ratePerSecond = maxRatePerSecond(channel);
    await tx.$executeRaw`
      UPDATE broadcasts SET rate_per_second = ${ratePerSecond}, updated_at = now()
       WHERE channel_id = ${id}::uuid AND finished_at IS NULL AND rate_per_second > ${ratePerSecond}`;
    return { channel, ratePerSecond, isDefault: rate === null };
  });
}

/** Gives a channel a new webhook signing secret, stored sealed, and returns it (it is shown only now). */
export async function rotateWebhookSecret(prisma: PrismaClient, id: string, sealer?: Sealer | null): Promise<{ channel: Channel; secret: string }> {
  const channel = await channelById(prisma, id);
  if (!channel.webhookUrl) throw new InputError(`Channel ${id} has no webhook URL; its messages are not delivered by webhook.`);
  const secret = newWebhookSecret();
  return { channel: await prisma.channel.update({ where: { id }, data: { webhookSecret: requireSealer(sealer).seal(secret) } }), secret };
}

export async function deactivateChannel(prisma: PrismaClient, id: string): Promise<Channel> {
  await channelById(prisma, id);
  return prisma.channel.update({ where: { id }, data: { status: 'inactive' } });
}

/** GET /channels: the channels the credential can act as, newest first; never needs X-Channel-Uuid. */
export async function listChannels(ctx: RequestContext, params: { limit: number; cursor?: Cursor | undefined }): Promise<Page<Channel>> {
  const rows = await ctx.prisma.channel.findMany({
    ...pageArgs<Channel>({ columns: channelTable.columns }),
    where: {
      AND: [{ workspaceId: ctx.auth.workspace.id, status: 'active', id: { in: ctx.auth.channels.map((c) => c.id) } }, afterCursor(params.cursor)],
    },
    orderBy: NEWEST_FIRST,
    take: params.limit + 1,
  });
  return toPage(rows as Channel[], params.limit);
}
