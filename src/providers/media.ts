import { MediaUnavailable } from './provider.js';

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
 * The number of bytes a fetched answer's body yields, when its head states it: its Content-Length,
 * unless the body is decoded on the way (`Content-Encoding: gzip`, `br`…), whose Content-Length
 * counts the encoded bytes. Null when it cannot be known before the body is read.
 */
export function bodyLength(headers: Headers): number | null {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return null;
  const raw = headers.get('content-length')?.trim();
  return raw && /^\d{1,15}$/.test(raw) ? Number(raw) : null;
}
