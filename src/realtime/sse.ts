import { createHash, randomUUID } from 'node:crypto';
import { getOperationAST, type ExecutionArgs } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { RequestState, ServerContext } from '../http/state.js';
import type { DocumentStore } from '../modules/documents/documents.service.js';
import type { GraphQLContext } from '../graphql/builder.js';
import { operationPreparer, type PreparedOperation } from '../graphql/operation.js';

/** Where graphql-sse clients connect. */
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
 * graphql-sse's own handler, on yoga's hooks as `@graphql-yoga/plugin-graphql-sse` puts it, but
 * preparing each operation as every transport does (src/graphql/operation.ts): the trusted
 * documents of the caller's workspace, then yoga's envelop. Every request was authenticated by
 * the route table before this plugin sees it, and its operation runs with its own credential. A
 * reservation belongs to the credential that made it: a request naming another's token is
 * refused, so a token that leaks lets nobody push events into, or read, a stream not theirs.
 */
export function singleConnectionSse(documents: DocumentStore): Plugin<Record<string, unknown>, ServerContext> {
  const holders = new Map<string, string>();
  // The library hands its callbacks the Request alone: the request's state is found by it.
  const states = new WeakMap<Request, RequestState>();
  let handler: (request: Request) => Promise<Response>;
  return {
    onYogaInit({ yoga }) {
      const prepare = operationPreparer(yoga as unknown as YogaServerInstance<Record<string, unknown>, GraphQLContext>, documents);
      handler = createHandler(
        {
          authenticate(request) {
            const raw = request.raw;
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
              return [
                JSON.stringify({ status: 'error', message: 'This stream is not yours.' }),
                { status: 403, statusText: 'Forbidden', headers: { 'content-type': 'application/json; charset=utf-8' } },
              ] as const;
            }
            return token;
          },
          async onSubscribe(request, params) {
            const prepared = await prepare(states.get(request.raw)!, params);
            // A refusal is the operation's result: graphql-sse tells a result from arguments by its `data`.
            if (Array.isArray(prepared)) return { data: null, errors: prepared };
            const { args, execute, subscribe } = prepared as PreparedOperation;
            const operation = getOperationAST(args.document, args.operationName);
            return (operation?.operation === 'subscription' ? subscribe : execute)(args as ExecutionArgs) as never;
          },
        },
        yoga.fetchAPI,
      );
    },
    onRequest({ request, url, endResponse, serverContext }) {
      if (url.pathname !== SSE_STREAM_PATH || !serverContext.state) return;
      states.set(request, serverContext.state);
      return handler(request).then(endResponse);
    },
  };
}
