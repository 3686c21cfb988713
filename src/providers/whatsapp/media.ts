import type { OutboundClient } from '../../lib/outbound-http.js';
import { bodyLength, capped } from '../media.js';
import { MediaUnavailable, type MediaFetcher } from '../provider.js';

/**
 * Meta's hosts a media answer may name (the Graph API answers `https://lookaside.fbsbx.com/…`):
 * the channel's access token is sent to these over HTTPS, and to the Graph API's own origin.
 */
const META_MEDIA_HOST = /(?:^|\.)(?:fbsbx\.com|facebook\.com|fbcdn\.net|whatsapp\.net)$/;

/** Whether the channel's access token may go to `url`: the Graph API's origin (WHATSAPP_API_URL), or a Meta media host over HTTPS. */
export function metaOrigin(url: string, apiOrigin: string | null): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.origin === apiOrigin) return true;
  return parsed.protocol === 'https:' && parsed.port === '' && META_MEDIA_HOST.test(parsed.hostname);
}

/**
 * WhatsApp media by id: `GET {base}/{version}/{media id}` with the channel's access token answers
 * the file's URL, type and size; the URL (a provider-given link, fetched through the guarded
 * client) is then read, with the same token only when it is Meta's (docs/operating-safely.md, Staying up): whatever a
 * media answer names, the token goes nowhere else. The Graph API's `file_size` refuses a file
 * too large before it is fetched, but never becomes the answer's length.
 */
export function whatsappMedia(options: { baseUrl: string; version: string; api: OutboundClient; guarded: OutboundClient }): MediaFetcher {
  let apiOrigin: string | null = null;
  try {
    apiOrigin = new URL(options.baseUrl).origin;
  } catch {
    apiOrigin = null;
  }
  return {
    async open(channel, ref, limitBytes) {
      const authorization = `Bearer ${channel.secrets.accessToken ?? ''}`;
      const infoUrl = `${options.baseUrl.replace(/\/+$/, '')}/${options.version}/${encodeURIComponent(ref)}`;
      const info = await request(options.api, infoUrl, { authorization });
      const described = (await info.json().catch(() => null)) as { url?: unknown; mime_type?: unknown; file_size?: unknown } | null;
      if (typeof described?.url !== 'string') throw new MediaUnavailable('WhatsApp gave no URL for the media');
      const declared = typeof described.file_size === 'number' ? described.file_size : null;
      if (declared !== null && declared > limitBytes) throw new MediaUnavailable(`the media is larger than ${limitBytes} bytes`);
      const file = await request(options.guarded, described.url, metaOrigin(described.url, apiOrigin) ? { authorization } : {});
      const length = bodyLength(file.headers as unknown as Headers);
      if (length !== null && length > limitBytes) {
        await file.body?.cancel();
        throw new MediaUnavailable(`the media is larger than ${limitBytes} bytes`);
      }
      if (!file.body) throw new MediaUnavailable('WhatsApp answered the media without a body');
      return {
        body: capped(file.body as ReadableStream<Uint8Array>, limitBytes),
        contentType: file.headers.get('content-type') ?? (typeof described.mime_type === 'string' ? described.mime_type : null),
        length,
      };
    },
  };
}

async function request(client: OutboundClient, url: string, headers: Record<string, string>) {
  let response: Awaited<ReturnType<OutboundClient['fetch']>>;
  try {
    response = await client.fetch(url, { headers });
  } catch (error) {
    throw new MediaUnavailable(`the provider could not be reached (${(error as Error).message})`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new MediaUnavailable(`the provider answered HTTP ${response.status}`);
  }
  return response;
}
