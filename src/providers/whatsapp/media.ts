import type { OutboundClient } from '../../lib/outbound-http.js';
import type { ProviderChannel } from '../provider.js';

/** A file a provider holds for an inbound message, opened for streaming. */
export interface OpenedMedia {
  body: ReadableStream<Uint8Array>;
  contentType: string | null;
  /** The size the provider declared, when it did. */
  length: number | null;
}

/** The provider could not hand the file over: the media endpoint answers 502 with this message. */
export class MediaUnavailable extends Error {
  override name = 'MediaUnavailable';
}

export interface MediaFetcher {
  /** Opens the file `ref` names with the channel's credentials; at most `limitBytes` are ever read. */
  open(channel: ProviderChannel, ref: string, limitBytes: number): Promise<OpenedMedia>;
}

/**
 * A stream that errors once more than `limit` bytes went through it: the answer is cut, never the
 * memory blown. The source is then cancelled without a reason (given one, the HTTP client would
 * raise it again on a stream nobody listens to).
 */
export function capped(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      seen += value.byteLength;
      if (seen <= limit) return controller.enqueue(value);
      reader.cancel().catch(() => {});
      controller.error(new MediaUnavailable(`the media is larger than ${limit} bytes`));
    },
    cancel(reason) {
      return reader.cancel(reason).catch(() => {});
    },
  });
}

/**
 * WhatsApp media by id: `GET {base}/{version}/{media id}` with the channel's access token answers
 * the file's URL, type and size; the URL (a provider-given link, fetched through the guarded
 * client) is then read with the same token.
 */
export function whatsappMedia(options: { baseUrl: string; version: string; api: OutboundClient; guarded: OutboundClient }): MediaFetcher {
  return {
    async open(channel, ref, limitBytes) {
      const authorization = `Bearer ${channel.secrets.accessToken ?? ''}`;
      const infoUrl = `${options.baseUrl.replace(/\/+$/, '')}/${options.version}/${encodeURIComponent(ref)}`;
      const info = await request(options.api, infoUrl, authorization);
      const described = (await info.json().catch(() => null)) as { url?: unknown; mime_type?: unknown; file_size?: unknown } | null;
      if (typeof described?.url !== 'string') throw new MediaUnavailable('WhatsApp gave no URL for the media');
      const declared = typeof described.file_size === 'number' ? described.file_size : null;
      if (declared !== null && declared > limitBytes) throw new MediaUnavailable(`the media is larger than ${limitBytes} bytes`);
      const file = await request(options.guarded, described.url, authorization);
      const length = Number(file.headers.get('content-length'));
      if (Number.isFinite(length) && length > limitBytes) {
        await file.body?.cancel();
        throw new MediaUnavailable(`the media is larger than ${limitBytes} bytes`);
      }
      if (!file.body) throw new MediaUnavailable('WhatsApp answered the media without a body');
      return {
        body: capped(file.body as ReadableStream<Uint8Array>, limitBytes),
        contentType: file.headers.get('content-type') ?? (typeof described.mime_type === 'string' ? described.mime_type : null),
        length: Number.isFinite(length) && file.headers.has('content-length') ? length : declared,
      };
    },
  };
}

async function request(client: OutboundClient, url: string, authorization: string) {
  let response: Awaited<ReturnType<OutboundClient['fetch']>>;
  try {
    response = await client.fetch(url, { headers: { authorization } });
  } catch (error) {
    throw new MediaUnavailable(`the provider could not be reached (${(error as Error).message})`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new MediaUnavailable(`the provider answered HTTP ${response.status}`);
  }
  return response;
}
