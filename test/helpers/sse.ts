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
          if (event === 'next' && data) received.push(JSON.parse(data));
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
