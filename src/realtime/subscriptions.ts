import type { CredentialHold, Lapse, RequestContext } from '../context/types.js';
import { AuthenticationError, ServiceUnavailableError, TokenExpiredError } from '../errors/domain.js';
import { isListenable, StreamEnd, type Listenable } from '../context/services.js';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

function lapseError(lapse: Lapse): AuthenticationError | null {
  if (lapse === 'expired') return new TokenExpiredError();
  if (lapse === 'revoked') return new AuthenticationError();
  // Only a stream about to start is told its credential could not be checked (a check that fails
  // ends no open stream, src/realtime/credential-watch.ts): it ends without an error, and the
  // subscription is refused (subscribeWhileValid).
  return null;
}

type StreamContext = Pick<RequestContext, 'auth' | 'streams' | 'credentialWatch'>;

/**
 * `source` for as long as the caller's credential holds (src/realtime/credential-watch.ts). Each
 * event is delivered only once the watch says nothing announced since could have revoked the
 * credential; once it lapses, the stream yields one StreamEnd and completes, and `source` is
 * released. A client leaving early (return) and a shutdown (complete, no error) end it too.
 *
 * It sits on every event of every subscriber, so it allocates no more than it must: a next()
 * waiting on a quiet source is woken by the lapse through one callback (not a race against a
 * promise that would keep a reaction per event until the stream ends), and an event that needs
 * no wait is answered as soon as the source gives it.
 */
export function whileCredentialValid<T>(
  ctx: StreamContext,
  source: AsyncIterable<T>,
  hold: CredentialHold,
  lapsed: Promise<Lapse>,
): AsyncIterableIterator<T | StreamEnd> & Partial<Listenable<T, StreamEnd | null>> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  let lapse: Lapse | null = null;
  /** Answers the next() waiting on the source, when the stream must end before the source speaks. */
  let wake: (() => void) | undefined;
  /** Ends a stream that hands its events on (listen), when its credential lapses. */
  let stopListening: (() => void) | undefined;
  void lapsed.then((why) => {
    lapse = why;
    wake?.();
    stopListening?.();
  });

  let unregister = () => {};
  const release = async () => {
    if (ended) return;
    ended = true;
    unregister();
    hold.release();
    wake?.();
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

  /** What the source gave, once the credential is known to hold. */
  const deliver = (result: IteratorResult<T>): IteratorResult<T | StreamEnd> | Promise<IteratorResult<T | StreamEnd>> => {
    if (ended || lapse) return finish();
    if (result.done) return release().then(() => DONE);
    const clear = hold.clear();
    if (clear === true) return result;
    if (clear === false) return finish();
    return clear.then((held) => (!held ? finish() : ended ? DONE : result));
  };

  /**
   * The same stream, handed on as events come instead of read (when the source can): each event
   * once the credential is known to hold, in order — one waiting for a check holds those after it —
   * then `end` once, with the StreamEnd of a lapsed credential or null.
   */
  const listen = (event: (event: T) => void, end: (last: StreamEnd | null) => void) => {
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      const error = !ended && lapse ? lapseError(lapse) : null;
      end(error ? new StreamEnd(error) : null);
      void release();
    };
    stopListening = close;
    const backlog: T[] = [];
    let checking = false;
    const advance = () => {
      while (!checking && backlog.length && !closed) {
        if (ended || lapse) return close();
        const clear = hold.clearOr(checked);
        if (clear === true) {
          event(backlog.shift()!);
          continue;
        }
        if (clear === false) return close();
        checking = true;
      }
    };
    /** The check the first event of the backlog waited for has answered. */
    const checked = (held: boolean) => {
      checking = false;
      if (closed) return;
      if (!held || ended || lapse) return close();
      event(backlog.shift()!);
      advance();
    };
    (iterator as unknown as Listenable<T>).listen((arrived) => {
      if (closed) return;
      backlog.push(arrived);
      if (!checking) advance();
    }, close);
  };

  return {
    ...(isListenable(iterator) ? { listen } : {}),
    next() {
      if (ended) return Promise.resolve(DONE);
      if (lapse) return finish();
      return new Promise<IteratorResult<T | StreamEnd>>((resolve, reject) => {
        let settled = false;
        const settle = () => {
          if (settled) return false;
          settled = true;
          wake = undefined;
          return true;
        };
        wake = () => {
          if (settle()) resolve(finish());
        };
        iterator.next().then(
          (result) => {
            if (settle()) resolve(deliver(result));
          },
          (error: unknown) => {
            // A failing source ends the stream too; nothing would call return() to stop the watch.
            if (settle()) void release().finally(() => reject(error));
          },
        );
      });
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
export async function subscribeWhileValid<T>(
  ctx: StreamContext,
  source: () => AsyncIterable<T> | Promise<AsyncIterable<T>>,
): Promise<AsyncIterableIterator<T | StreamEnd>> {
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
    // Before the stream starts: the whole request is refused, with its HTTP status over HTTP.
    const refusal = why === 'unchecked' ? new ServiceUnavailableError() : why === 'expired' ? new TokenExpiredError() : new AuthenticationError();
    refusal.refusesRequest = true;
    throw refusal;
  }
  try {
    return whileCredentialValid(ctx, await source(), hold, lapsed);
  } catch (error) {
    hold.release();
    throw error;
  }
}
