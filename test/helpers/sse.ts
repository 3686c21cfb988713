import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';

type Fetch = (path: string, init: RequestInit) => Promise<Response>;

/**
 * Subscribes over GraphQL over Server-Sent Events ("distinct connections" mode) and
 * yields each `next` payload's data.
 */
export async function subscribeSse<TData, TVariables>(
  fetchFn: Fetch,
  headers: Record<string, string>,
  document: TypedDocumentNode<TData, TVariables>,
  variables?: TVariables,
) {
  const response = await fetchFn('/graphql', {
    method: 'POST',
    headers: { ...headers, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ query: print(document), variables }),
  });
  if (!response.ok || !response.body) throw new Error(`subscription refused: HTTP ${response.status} ${await response.text()}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const received: { data?: TData; errors?: unknown[] }[] = [];
  /** When each of `received` arrived (epoch ms). */
  const arrivals: number[] = [];

  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === 'next' && data) {
            received.push(JSON.parse(data));
            arrivals.push(Date.now());
          }
        }
      }
    } catch {
      // cancelled by close()
    }
  })();

  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    received,
    arrivals,
    /** Waits until `count` events arrived (or fails after `ms`). */
    async waitFor(count: number, ms = 5000) {
      const deadline = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${received.length}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    /** Ends the subscription the way a client going away does: by dropping the stream. */
    async close() {
      await reader.cancel();
      await pump;
    },
  };
}

/** When the server ended a stream, and whether with `complete`. */
export interface SseEnd {
  at: number;
  completed: boolean;
}

/**
 * `subscribeSse` with the moment the server ends the stream (`ended`), and each `next` payload's
 * errors as well as its data in `received`. Waits a moment after subscribing, so that the server
 * registers the subscriber before anything is published.
 */
export async function observeSse<TData, TVariables>(
  fetchFn: Fetch,
  headers: Record<string, string>,
  document: TypedDocumentNode<TData, TVariables>,
  variables?: TVariables,
) {
  let markEnded!: (end: SseEnd) => void;
  const ended = new Promise<SseEnd>((resolve) => (markEnded = resolve));
  const decoder = new TextDecoder();
  let text = '';
  const observed: Fetch = async (path, init) => {
    const response = await fetchFn(path, init);
    if (!response.body) return response;
    const observer = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        text += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
      flush: () => markEnded({ at: Date.now(), completed: /^event: complete$/m.test(text) }),
    });
    return new Response(response.body.pipeThrough(observer), { status: response.status, headers: response.headers });
  };
  const subscription = await subscribeSse(observed, headers, document, variables);
  await new Promise((resolve) => setTimeout(resolve, 150));
  return {
    ...subscription,
    ended,
    /** Resolves with the end once the server ended the stream; fails while it is still open after `ms`. */
    async endsWithin(ms: number): Promise<SseEnd> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the stream was still open after ${ms} ms`)), ms)));
      try {
        return await Promise.race([ended, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
