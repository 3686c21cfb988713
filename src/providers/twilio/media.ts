import { OutboundTargetError, type OutboundClient } from '../../lib/outbound-http.js';
import { bodyLength, capped } from '../media.js';
import { MediaUnavailable, type MediaFetcher } from '../provider.js';

/** The most redirects a media download follows (Twilio's media URL answers one, to its CDN). */
export const MEDIA_REDIRECTS = 3;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * Twilio media by URL (`MediaUrlN` of an inbound message): fetched through the guarded client,
 * following at most MEDIA_REDIRECTS redirects by hand so that every hop is checked against the
 * target policy again. The channel's HTTP Basic credentials go only to the Twilio API's origin
 * (TWILIO_API_URL), never to the CDN a redirect points at or any other origin.
 */
export function twilioMedia(options: { baseUrl: string; guarded: OutboundClient }): MediaFetcher {
  const apiOrigin = originOf(options.baseUrl);
  return {
    async open(channel, ref, limitBytes) {
      const authorization = `Basic ${Buffer.from(`${channel.settings.accountSid ?? ''}:${channel.secrets.authToken ?? ''}`).toString('base64')}`;
      let url = ref;
      for (let hop = 0; ; hop++) {
        const headers: Record<string, string> = originOf(url) === apiOrigin ? { authorization } : {};
        let response: Awaited<ReturnType<OutboundClient['fetch']>>;
        try {
          response = await options.guarded.fetch(url, { headers });
        } catch (error) {
          if (error instanceof OutboundTargetError) throw new MediaUnavailable(`the media's address was refused (${error.message})`);
          throw new MediaUnavailable(`the provider could not be reached (${(error as Error).message})`);
        }
        if (REDIRECTS.has(response.status)) {
          await response.body?.cancel();
          const location = response.headers.get('location');
          if (!location) throw new MediaUnavailable(`the provider answered HTTP ${response.status} without a location`);
          if (hop >= MEDIA_REDIRECTS) throw new MediaUnavailable(`the provider redirected more than ${MEDIA_REDIRECTS} times`);
          try {
            url = new URL(location, url).toString();
          } catch {
            throw new MediaUnavailable('the provider redirected to an address that is not a URL');
          }
          continue;
        }
        if (response.status !== 200) {
          await response.body?.cancel();
          throw new MediaUnavailable(`the provider answered HTTP ${response.status}`);
        }
        const declared = bodyLength(response.headers as unknown as Headers);
        if (declared !== null && declared > limitBytes) {
          await response.body?.cancel();
          throw new MediaUnavailable(`the media is larger than ${limitBytes} bytes`);
        }
        if (!response.body) throw new MediaUnavailable('the provider answered the media without a body');
        return { body: capped(response.body as ReadableStream<Uint8Array>, limitBytes), contentType: response.headers.get('content-type'), length: declared };
      }
    },
  };
}
