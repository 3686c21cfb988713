import { createSourceEventStream, execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import { operationReads, type CallerRead } from '../graphql/caller-reads.js';
import { isListenable, StreamEnd } from '../context/services.js';
import type { GraphQLContext, StreamSink } from '../graphql/builder.js';
import { DirectStream, FanOut, SharedResult, Turns, type StreamSource } from './delivery.js';

/** What is told of each event: whether its result was executed or shared, and how many subscribers receive it. */
export type ExecutionObserver = (executed: boolean, subscribers: number) => void;

/**
 * A subscriber's cohort: the subscribers that cannot see different data, so that an event executed
 * for one of them is the result of every one. Its key holds the operation (document, name,
 * variables, which hold the fields' arguments), the workspace and the channels of the credential
 * (the acting one and every one it can act as: what the subscription's filter delivers), and then
 * whatever else of the caller the selected fields declare they read (`reads`,
 * src/graphql/caller-reads.ts): the credential's user when any selected field reads it. Nothing
 * else of the caller is read once an event has passed the subscriber's own filter: the
 * credential's scopes and expiry decide whether and for how long the stream runs
 * (src/graphql/scopes.ts, src/realtime/subscriptions.ts), never what an event's result holds, and
 * an encrypted message's content is hidden from everyone alike. `documentId` numbers the documents
 * yoga's parser cache holds (the same text is the same object); `reads` is what the operation's
 * selection declares.
 */
export function cohortKey(args: ExecutionArgs, documentId: (document: DocumentNode) => number, reads: ReadonlySet<CallerRead>): string {
  const { auth } = args.contextValue as GraphQLContext;
  return JSON.stringify([
    documentId(args.document),
    args.operationName ?? null,
    args.variableValues ?? null,
    auth.workspace.id,
    auth.channel?.id ?? null,
    auth.channels.map((channel) => channel.id).sort(),
    reads.has('user') ? (auth.credential.user?.id ?? null) : null,
  ]);
}

/**
 * What makes a subscriber's stream the same as another's of its cohort: its credential,
 * whose hold (src/realtime/subscriptions.ts) decides how long the stream runs — the credential
 * itself, the connection behind it, and when it and its minting credential expire.
 */
function credentialOf(args: ExecutionArgs): string {
  const { auth } = args.contextValue as GraphQLContext;
  return JSON.stringify([auth.credential.id, auth.connectionId, auth.expiresAt?.getTime() ?? null, auth.mintedByExpiresAt?.getTime() ?? null]);
}

/**
 * Subscriptions execute each event once per cohort (a cohort) rather than once per
 * subscriber: the bus hands one event object to every subscriber of the process
 * (src/realtime/bus.ts), each subscriber's stream filters it by its own workspace, channel and
 * arguments and holds it until its credential is known to hold (src/realtime/subscriptions.ts),
 * and the first subscriber of a class to take it executes the selection; the others of that class
 * receive the same result. The end of a stream (its credential lapsed) is each subscriber's own and
 * always executed for it.
 *
 * An envelop `onSubscribe` hook: the subscription's source stream is created as graphql-js does
 * it, per subscriber (its scope and credential checked afresh), and only the per-event execution is
 * shared. Every transport (WebSocket, SSE single and distinct connections) runs it. The subscribers
 * of one class and one credential that have a sink share one source as well (a FanOut,
 * src/realtime/delivery.ts): a subscriber's own source starts one or, when one runs already, is let
 * go; an event is then filtered and held once for all of them, and only its write is per
 * subscriber. A subscriber without a sink (a reserved graphql-sse stream) receives the shared
 * results through its transport's pipeline, where the result hooks of other plugins (masking) see
 * them. `observe` counts executions and results.
 *
 * Everything it keeps — the fan-outs, each event's results by class, the documents' numbers, the
 * turns of its slices — belongs to the plugin, made once per app: two apps in one process share
 * nothing.
 */
export function sharedSubscriptionExecution(options: { observe: ExecutionObserver; direct: DirectDelivery }): Plugin {
  const { observe, direct } = options;
  const turns = new Turns();
  /** The fan-outs of this app's subscribers written to directly, by cohort and credential. */
  const fanOuts = new Map<string, FanOut>();
  /** Each event's results, by cohort: held by the event, gone with it once every subscriber has taken it. */
  const results = new WeakMap<object, Map<string, SharedResult>>();
  /** A number for each document yoga's parser cache holds, and what each of its operations reads of the caller. */
  const documents = new WeakMap<DocumentNode, { id: number; reads: Map<string | null, Set<CallerRead>> }>();
  let nextDocumentId = 0;
  const documentOf = (document: DocumentNode) => {
    let known = documents.get(document);
    if (!known) documents.set(document, (known = { id: ++nextDocumentId, reads: new Map() }));
    return known;
  };
  const documentId = (document: DocumentNode) => documentOf(document).id;
  const readsOf = (args: ExecutionArgs) => {
    const { reads } = documentOf(args.document);
    const name = args.operationName ?? null;
    let found = reads.get(name);
    if (!found) reads.set(name, (found = operationReads(args.schema, args.document, name)));
    return found;
  };
  const executeFor = (args: ExecutionArgs, event: unknown, subscribers: number): SharedResult => {
    observe(true, subscribers);
    return new SharedResult(
      Promise.resolve().then(() => execute({ ...args, rootValue: event }) as ExecutionResult | Promise<ExecutionResult>),
      turns,
    );
  };
  const subscribe = async (args: ExecutionArgs) => {
    const source = await createSourceEventStream(args);
    if (!isAsyncIterable(source)) return source;
    const key = cohortKey(args, documentId, readsOf(args));
    /** The result of `event` for this subscriber's class, received by `subscribers` subscribers. */
    const resultOf = (event: unknown, subscribers = 1): SharedResult => {
      if (event === null || typeof event !== 'object' || event instanceof StreamEnd) return executeFor(args, event, subscribers);
      let byClass = results.get(event);
      if (!byClass) results.set(event, (byClass = new Map()));
      const shared = byClass.get(key);
      if (shared) {
        observe(false, subscribers);
        return shared;
      }
      const result = executeFor(args, event, subscribers);
      byClass.set(key, result);
      return result;
    };
    const sink = direct.sinkOf(args.contextValue as GraphQLContext);
    if (!sink) return mapAsyncIterator(source as AsyncIterable<unknown>, (event) => resultOf(event).promise);
    const iterator: StreamSource = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    if (!isListenable<unknown, StreamEnd | null>(iterator)) return DirectStream.reading(iterator, resultOf, sink);
    // Subscribers of one class and credential share one source: this one's own, freshly checked,
    // starts a fan-out or is let go for the one already running.
    const group = `${key}\n${credentialOf(args)}`;
    let fanOut = fanOuts.get(group);
    if (fanOut?.open) void iterator.return?.();
    else {
      const created: FanOut = new FanOut(
        iterator,
        resultOf,
        () => {
          if (fanOuts.get(group) === created) fanOuts.delete(group);
        },
        turns,
      );
      fanOuts.set(group, (fanOut = created));
    }
    const joined = fanOut;
    const stream: DirectStream = new DirectStream(resultOf, sink, () => joined.leave(stream));
    joined.join(stream);
    return stream;
  };
  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribe as never);
    },
  };
}

/**
 * Results written to subscribers' connections directly, serialised once per cohort
 * (src/realtime/delivery.ts), for the transports that give a subscriber a sink: a WebSocket
 * (its `streamSink`) and an event stream on `/graphql` (graphql-sse's distinct connections mode,
 * src/realtime/sse.ts `eventStreamAnswers`).
 */
export interface DirectDelivery {
  sinkOf(context: GraphQLContext): StreamSink | undefined;
}
