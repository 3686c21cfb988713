import { createHash, randomUUID } from 'node:crypto';
import { useGraphQLSSE } from '@graphql-yoga/plugin-graphql-sse';
import type { Plugin } from 'graphql-yoga';

/** Where graphql-sse clients connect (the plugin's default). */
export const SSE_STREAM_PATH = '/graphql/stream';

const STREAM_TOKEN_HEADER = 'x-graphql-event-stream-token';

/** Reservations this process keeps at once; the oldest is forgotten first. */
const MAX_RESERVATIONS = 100_000;

/** Whose a reservation is: the credential and host of the request that made it, hashed. */
const holderOf = (headers: Headers) => createHash('sha256').update(`${headers.get('authorization') ?? ''}\n${headers.get('host') ?? ''}`).digest('base64url');

/**
 * GraphQL over Server-Sent Events in graphql-sse's single connection mode (CONTRACT §8): a client
 * reserves a stream (`PUT /graphql/stream`, answered with a token), holds it open (`GET` with the
 * token), and runs its operations on it (`POST` with the token in `X-GraphQL-Event-Stream-Token`,
 * `DELETE` to stop one), so one browser tab holds one connection for all its subscriptions. The
 * distinct connections mode stays on `/graphql` itself.
 *
 * Every request was authenticated by the route table before this plugin sees it, and its
 * operations run with its own credential through yoga's envelop (the same limits, masking and
 * context as any request). A reservation belongs to the credential that made it: a request
 * naming another's token is refused, so a token that leaks lets nobody push events into a stream
 * that is not theirs or read one.
 */
export function singleConnectionSse(): Plugin {
  const holders = new Map<string, string>();
  return useGraphQLSSE({
    endpoint: SSE_STREAM_PATH,
    authenticate(request) {
      const raw = request.raw as Request;
      const holder = holderOf(raw.headers);
      if (request.method === 'PUT') {
        const token = randomUUID();
        holders.set(token, holder);
        if (holders.size > MAX_RESERVATIONS) holders.delete(holders.keys().next().value!);
        return token;
      }
      const token = request.headers.get(STREAM_TOKEN_HEADER) ?? new URL(raw.url).searchParams.get('token');
      if (!token) return null;
      if (holders.get(token) !== holder) {
        return [JSON.stringify({ status: 'error', message: 'This stream is not yours.' }), { status: 403, statusText: 'Forbidden', headers: { 'content-type': 'application/json; charset=utf-8' } }] as const;
      }
      return token;
    },
  }) as Plugin;
}
