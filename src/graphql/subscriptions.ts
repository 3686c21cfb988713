import type { CredentialHold, Lapse, RequestContext } from '../context/types.js';
import { AuthenticationError, ServiceUnavailableError, TokenExpiredError } from '../errors/domain.js';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * What a stream yields once its credential has lapsed, in place of an event: the subscription
 * field's resolver throws its error (src/graphql/scopes.ts), so the client receives one result
 * whose `errors` carry TOKEN_EXPIRED or UNAUTHENTICATED, and then the stream completes.
 */
export class StreamEnd {
  constructor(readonly error: AuthenticationError) {}
}

function lapseError(lapse: Lapse): AuthenticationError | null {
  if (lapse === 'expired') return new TokenExpiredError();
  if (lapse === 'revoked') return new AuthenticationError();
  // A credential that could not be checked ends the stream without an error: the client reconnects.
  return null;
}

type StreamContext = Pick<RequestContext, 'auth' | 'streams' | 'credentialWatch'>;

/**
 * `source` for as long as the caller's credential holds (src/context/credential-watch.ts). Each
 * event is delivered only once the watch says nothing announced since could have revoked the
 * credential; once it lapses, the stream yields one StreamEnd and completes, and `source` is
 * released. A client leaving early (return) and a shutdown (complete, no error) end it too.
 */
export function whileCredentialValid<T>(ctx: StreamContext, source: AsyncIterable<T>, hold: CredentialHold, lapsed: Promise<Lapse>): AsyncIterableIterator<T | StreamEnd> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  let lapse: Lapse | null = null;
  let settleEnded!: () => void;
  // Settles when the stream must end, so that a next() waiting on a quiet source answers at once.
  const ending = new Promise<'ending'>((resolve) => (settleEnded = () => resolve('ending')));
  void lapsed.then((why) => {
    lapse = why;
    settleEnded();
  });

  let unregister = () => {};
  const release = async () => {
    if (ended) return;
    ended = true;
    unregister();
    hold.release();
    settleEnded();
    await iterator.return?.();
  };
  // A shutdown ends the stream with `complete`: the client reconnects to another server.
  if (ctx.streams) unregister = ctx.streams.add(() => void release());

  /** The stream's last result once its credential lapsed: its error, then completion. */
  const finish = async (): Promise<IteratorResult<T | StreamEnd>> => {
    const error = !ended && lapse ? lapseError(lapse) : null;
    await release();
    return error ? { done: false, value: new StreamEnd(error) } : DONE;
  };

  return {
    async next() {
      if (ended) return DONE;
      if (lapse) return finish();
      let result: IteratorResult<T> | 'ending';
      try {
        result = await Promise.race([iterator.next(), ending]);
      } catch (error) {
        // A failing source ends the stream too; nothing would call return() to stop the watch.
        await release();
        throw error;
      }
      if (result === 'ending' || ended) return finish();
      if (result.done) {
        await release();
        return DONE;
      }
      if (!(await hold.clear())) return finish();
      return ended ? DONE : result;
    },
    async return() {
      await release();
      return DONE;
    },
    async throw(error: unknown) {
      await release();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * A subscription's stream, held by the caller's credential: the credential is checked afresh
 * before `source` is subscribed (the request may have been authenticated from a copy kept for
 * AUTH_CACHE_MS, and a stream never starts on one), then watched by `whileCredentialValid`. A
 * credential that no longer holds is refused with 401 (TOKEN_EXPIRED once expired).
 */
export async function subscribeWhileValid<T>(ctx: StreamContext, source: () => AsyncIterable<T> | Promise<AsyncIterable<T>>): Promise<AsyncIterableIterator<T | StreamEnd>> {
  const watch = ctx.credentialWatch;
  if (!watch) throw new Error('a subscription needs the credential watch of its app');
  let settleLapsed!: (lapse: Lapse) => void;
  const lapsed = new Promise<Lapse>((resolve) => (settleLapsed = resolve));
  let why: Lapse | undefined;
  const hold = watch.watch(ctx.auth, (lapse) => {
    why = lapse;
    settleLapsed(lapse);
  });
  if (!(await hold.verify())) {
    if (why === 'unchecked') throw new ServiceUnavailableError();
    throw why === 'expired' ? new TokenExpiredError() : new AuthenticationError();
  }
  try {
    return whileCredentialValid(ctx, await source(), hold, lapsed);
  } catch (error) {
    hold.release();
    throw error;
  }
}
