import type { RequestContext } from '../context/types.js';
import { describeError } from '../errors/log.js';
import { credentialStillValid } from '../modules/credentials/credentials.service.js';
import { AuthenticationError } from '../errors/domain.js';

/**
 * How often an open subscription re-checks its credential while no event arrives. A stream
 * must end within 5 s of its credential being revoked, expiring or losing its channel; the
 * next check is scheduled when the last one has answered, so the interval leaves room for it.
 */
export const CREDENTIAL_RECHECK_MS = 4_000;

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * `source` for as long as the caller's credential holds. The credential is checked before each
 * event is delivered and every `intervalMs` in between; once it lapses, the stream completes and
 * `source` is released. A client leaving early (return) stops the checks as well.
 */
export function whileCredentialValid<T>(
  ctx: Pick<RequestContext, 'prisma' | 'auth' | 'logger' | 'streams'>,
  source: AsyncIterable<T>,
  intervalMs = CREDENTIAL_RECHECK_MS,
): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  let settleLapsed!: () => void;
  // Settles when the stream ends, so that a next() waiting on a quiet source returns at once.
  const lapsed = new Promise<IteratorReturnResult<undefined>>((resolve) => (settleLapsed = () => resolve(DONE)));

  const holds = async () => {
    try {
      return await credentialStillValid(ctx.prisma, ctx.auth);
    } catch (error) {
      // A credential that cannot be checked is not trusted; the client reconnects and authenticates afresh.
      ctx.logger.warn({ err: describeError(error) }, 'subscription credential check failed');
      return false;
    }
  };

  let unregister = () => {};
  const end = async (lapse: boolean) => {
    if (ended) return;
    ended = true;
    unregister();
    clearTimeout(timer);
    settleLapsed();
    if (lapse) ctx.logger.info({ credentialId: ctx.auth.credential.id }, 'subscription ended: credential no longer valid');
    await iterator.return?.();
  };

  const schedule = () => {
    timer = setTimeout(async () => {
      if (await holds()) {
        if (!ended) schedule();
      } else {
        await end(true);
      }
    }, intervalMs);
    timer.unref();
  };
  schedule();
  // A shutdown ends the stream with `complete`: the client reconnects to another server.
  if (ctx.streams) unregister = ctx.streams.add(() => void end(false));

  return {
    async next() {
      if (ended) return DONE;
      let result: IteratorResult<T>;
      try {
        result = await Promise.race([iterator.next(), lapsed]);
      } catch (error) {
        // A failing source ends the stream too; nothing would call return() to stop the checks.
        await end(false);
        throw error;
      }
      if (ended) return DONE;
      if (result.done) {
        await end(false);
        return DONE;
      }
      if (!(await holds())) {
        await end(true);
        return DONE;
      }
      // The periodic check may have ended the stream while this one ran.
      return ended ? DONE : result;
    },
    async return() {
      await end(false);
      return DONE;
    },
    async throw(error: unknown) {
      await end(false);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * A subscription's stream: the credential is checked afresh before `source` is
 * subscribed (the request may have been authenticated from a copy kept for
 * AUTH_CACHE_MS, and a stream never starts on one), then held by
 * `whileCredentialValid`. A credential that no longer holds is refused with 401.
 */
export async function subscribeWhileValid<T>(
  ctx: Pick<RequestContext, 'prisma' | 'auth' | 'logger' | 'streams'>,
  source: () => AsyncIterable<T>,
): Promise<AsyncIterableIterator<T>> {
  if (!(await credentialStillValid(ctx.prisma, ctx.auth))) throw new AuthenticationError();
  return whileCredentialValid(ctx, source());
}
