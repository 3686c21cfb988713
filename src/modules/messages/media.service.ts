import type { RequestContext } from '../../context/types.js';
import { readableChannels } from '../../context/request.js';
import { NotFoundError, ProviderUnavailableError } from '../../errors/domain.js';
import { isUuid } from '../../lib/uuid.js';
import type { Sealer } from '../../lib/sealed.js';
import { MediaUnavailable, type OpenedMedia } from '../../providers/provider.js';
import type { Providers } from '../../providers/registry.js';
import { providerChannel } from '../channels/channel-secrets.js';

/** The most a media download may stream (docs/channels.md). */
export const MEDIA_LIMIT_BYTES = 16 * 1024 * 1024;

/** Opens a file through the channel's provider, with the channel's credentials opened by `sealer`. */
export function mediaOpener(providers: Providers | undefined, sealer: Sealer | null | undefined): NonNullable<RequestContext['openMedia']> {
  return (channel, ref, limitBytes) => {
    const fetcher = providers?.media(channel.provider);
    if (!fetcher) throw new MediaUnavailable(`channels of provider ${channel.provider} keep no media`);
    return fetcher.open(providerChannel(channel, sealer), ref, limitBytes);
  };
}

/** A file of an inbound message, opened from its provider for streaming. */
export interface MessageMedia extends OpenedMedia {
  filename: string | null;
}

/**
 * GET /messages/{id}/media/{index}: a file received with an inbound message of a channel the
 * caller reads (docs/inbox.md), fetched from the channel's provider with the channel's
 * credentials. An unknown message or index is a 404; a provider that cannot hand it over (an
 * error, no answer, over the size limit) a 502.
 */
export async function openMessageMedia(ctx: RequestContext, id: string, index: string): Promise<MessageMedia> {
  const channels = readableChannels(ctx.auth);
  const message = isUuid(id)
    ? await ctx.prisma.message.findFirst({
        where: { id: id.toLowerCase(), channelId: { in: channels.map((channel) => channel.id) }, workspaceId: ctx.auth.workspace.id },
        select: { media: true, channelId: true },
      })
    : null;
  if (!message) throw new NotFoundError('Message');
  // The file is fetched with the credentials of the message's own channel.
  const channel = channels.find((candidate) => candidate.id === message.channelId)!;
  const position = /^\d{1,4}$/.test(index) ? Number(index) : -1;
  const item = Array.isArray(message.media) ? (message.media[position] as { ref?: unknown; contentType?: unknown; filename?: unknown } | undefined) : undefined;
  if (!item || typeof item.ref !== 'string') throw new NotFoundError('Media');
  if (!ctx.openMedia) throw new ProviderUnavailableError('This server cannot fetch media from providers.');
  try {
    const opened = await ctx.openMedia(channel, item.ref, MEDIA_LIMIT_BYTES);
    return {
      ...opened,
      body: opened.length === null ? opened.body : exactly(opened.body, opened.length),
      contentType: opened.contentType ?? (typeof item.contentType === 'string' ? item.contentType : null),
      filename: typeof item.filename === 'string' ? item.filename : null,
    };
  } catch (error) {
    if (error instanceof MediaUnavailable) throw new ProviderUnavailableError(`The channel's provider could not hand the file over: ${error.message}.`);
    throw error;
  }
}

/**
 * A body that yields exactly `length` bytes or fails (docs/operating-safely.md, Staying up): the answer's Content-Length
 * is then always the number of bytes sent, and a body that turns out longer or shorter ends the
 * connection (src/lib/end-on-failure.ts) instead of corrupting the next answer on it.
 */
function exactly(body: ReadableStream<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        if (seen === length) return controller.close();
        return controller.error(new MediaUnavailable(`the provider sent ${seen} of the ${length} bytes it announced`));
      }
      seen += value.byteLength;
      if (seen <= length) return controller.enqueue(value);
      reader.cancel().catch(() => {});
      controller.error(new MediaUnavailable(`the provider sent more than the ${length} bytes it announced`));
    },
    cancel(reason) {
      return reader.cancel(reason).catch(() => {});
    },
  });
}
