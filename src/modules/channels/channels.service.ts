import type { Channel, ChannelType, PrismaClient } from '../../generated/prisma/client.js';
import type { RequestContext } from '../../context/types.js';
import { NEWEST_FIRST, afterCursor, toPage, type Cursor, type Page } from '../../lib/pagination.js';
import { InputError } from '../../errors/domain.js';
import { isUuid } from '../../lib/uuid.js';
import { newWebhookSecret } from '../../lib/webhook-signature.js';
import { issueChannelKey } from '../credentials/credentials.service.js';
import type { ChannelView } from './channels.schemas.js';

export function channelView(channel: Channel): ChannelView {
  return { id: channel.id, name: channel.name, type: channel.type, status: channel.status };
}

/** Creates a channel with its first API key; the key is returned once. */
export async function createChannel(
  prisma: PrismaClient,
  input: { workspaceId: string; name: string; type: ChannelType; webhookUrl?: string | undefined },
): Promise<{ channel: Channel; apiKey: string }> {
  return prisma.$transaction(async (tx) => {
    const channel = await tx.channel.create({
      data: {
        workspaceId: input.workspaceId,
        name: input.name,
        type: input.type,
        webhookUrl: input.webhookUrl ?? null,
        webhookSecret: input.webhookUrl ? newWebhookSecret() : null,
      },
    });
    const { token } = await issueChannelKey(tx, channel);
    return { channel, apiKey: token };
  });
}

export async function channelById(prisma: PrismaClient, id: string): Promise<Channel> {
  const channel = isUuid(id) ? await prisma.channel.findUnique({ where: { id } }) : null;
  if (!channel) throw new InputError(`No channel has id ${id}.`);
  return channel;
}

/** Gives a channel a new webhook signing secret and returns it (it is shown only now). */
export async function rotateWebhookSecret(prisma: PrismaClient, id: string): Promise<{ channel: Channel; secret: string }> {
  const channel = await channelById(prisma, id);
  if (!channel.webhookUrl) throw new InputError(`Channel ${id} has no webhook URL; its messages are not delivered by webhook.`);
  const secret = newWebhookSecret();
  return { channel: await prisma.channel.update({ where: { id }, data: { webhookSecret: secret } }), secret };
}

export async function deactivateChannel(prisma: PrismaClient, id: string): Promise<Channel> {
  await channelById(prisma, id);
  return prisma.channel.update({ where: { id }, data: { status: 'inactive' } });
}

/** GET /channels: the channels the credential can act as, newest first; never needs X-Channel-Uuid. */
export async function listChannels(ctx: RequestContext, params: { limit: number; cursor?: Cursor | undefined }): Promise<Page<Channel>> {
  const rows = await ctx.prisma.channel.findMany({
    where: {
      AND: [{ workspaceId: ctx.auth.workspace.id, status: 'active', id: { in: ctx.auth.channels.map((c) => c.id) } }, afterCursor(params.cursor)],
    },
    orderBy: NEWEST_FIRST,
    take: params.limit + 1,
  });
  return toPage(rows, params.limit);
}
