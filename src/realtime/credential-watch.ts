import type { Logger } from 'pino';
import type { EventBus } from '../context/services.js';
import { describeError } from '../errors/log.js';
import type { CredentialCache } from '../context/credential-cache.js';
import type { LiveCredential } from '../context/types.js';
import {
  CREDENTIAL_INVALIDATIONS,
  affectsCredential,
  parseInvalidation,
  type CredentialInvalidation,
} from '../context/credential-invalidation.js';
import type { AuthContext, CredentialHold, CredentialWatch, Lapse } from '../context/types.js';

/**
 * How often a process that hears no announcements from the others checks its open streams'
 * credentials (all of them in one statement). A stream must end within 5 s of its credential
 * being revoked, expiring or losing its channel; the next check is due 4 s after the last began.
 */
export const CREDENTIAL_RECHECK_MS = 4_000;

/** Node's timers fire at once for anything above 2^31 - 1 ms: a later expiry is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

interface Watched {
  auth: AuthContext;
  onLapse: (lapse: Lapse) => void;
  lapsed: boolean;
  /** A check begun after the latest announcement that could affect the credential, until it answers. */
  pending: Promise<void> | undefined;
  /** Fires at the credential's expiry (or its minting credential's). */
  timer: NodeJS.Timeout | undefined;
  /** A WebSocket's own watch (not a stream's): not counted in `size`. */
  socket: boolean;
  /** The batch whose check `pending` waits for. */
  pendingIn: Batch | undefined;
}

/**
 * Credentials waiting for one statement, and what is told once it answers: `answered` after a check
 * that answered; `failed`, when given, after one that failed (without it, the waiter is carried to
 * the next check: what it holds back is never delivered unchecked).
 */
interface Batch {
  targets: Set<Watched>;
  waiting: { answered: () => void; failed?: () => void }[];
}

/**
 * The credentials of the streams this process holds open, and how each learns that its credential
 * lapsed (docs/browser-apps.md: within 5 s, on every process, and no event after it):
 *
 * - a timer at the credential's own expiry, and at its minting credential's (no statement);
 * - announcements of changes (`announce`: revocations through the API; the admin commands through
 *   Redis), heard in this process at once and in the others through Redis, over the same connection
 *   as the domain events: a stream whose credential an announcement could affect delivers nothing
 *   until one statement, begun after it, says the credential still holds. A stream nobody announced
 *   anything about costs no statement;
 * - while this process hears no announcements from the others (no REDIS_URL, or Redis out of reach),
 *   a change made elsewhere (the admin commands on PostgreSQL) could go unheard: then every open
 *   stream's credential is checked in one statement every CREDENTIAL_RECHECK_MS, and each event is
 *   delivered only after a check begun once it arrived (streams receiving the same event share it).
 *
 * A check that fails (the database out of reach, or its pool without a connection to spare) is no
 * revocation: it ends no stream. What waited for it — an event, a stream an announcement concerned —
 * waits for the next check, the next round's (CREDENTIAL_RECHECK_MS) or one asked for sooner, so
 * nothing is delivered unchecked, and a credential revoked meanwhile ends its streams at the first
 * check that answers. A stream about to start is refused instead (503): it never starts unchecked.
 *
 * `alone`: no other process can change a credential while this one runs (the embedded database,
 * which one process at a time may open: the admin commands refuse while the server holds it), so
 * every change is announced here, heard at once: nothing is polled, no event waits for a check.
 */
export function createCredentialWatch(options: {
  /** What the credentials with these ids admit now, in one statement: supplied by the credentials module. */
  live: (ids: readonly string[]) => Promise<Map<string, LiveCredential>>;
  bus: EventBus;
  cache?: CredentialCache | null | undefined;
  logger: Logger;
  recheckMs?: number;
  alone?: boolean;
}): CredentialWatch {
  const { live: liveCredentials, bus, cache, logger, recheckMs = CREDENTIAL_RECHECK_MS, alone = false } = options;
  /** Whether every change that could lapse a credential is heard here. */
  const hearsAll = () => alone || bus.hearing;
  const watched = new Set<Watched>();
  let poll: NodeJS.Timeout | undefined;

  const lapse = (target: Watched, why: Lapse) => {
    if (target.lapsed) return;
    target.lapsed = true;
    watched.delete(target);
    clearTimeout(target.timer);
    updatePoll();
    if (why !== 'unchecked') logger.info({ credentialId: target.auth.credential.id, lapse: why }, 'subscription ended: credential no longer valid');
    target.onLapse(why);
  };

  /** Whether what `live` says of the credential still admits the stream: its acting channel, or any of its channels. */
  const admits = (auth: AuthContext, live: LiveCredential | undefined) =>
    live !== undefined && !live.expired && (auth.channel ? live.channels.has(auth.channel.id) : auth.channels.some((channel) => live.channels.has(channel.id)));

  /**
   * Checks `targets` in one statement: whether it answered. A check that fails (the database out
   * of reach, or its pool without a connection to spare) lapses nothing: it says nothing of the
   * credentials.
   */
  const check = async (targets: Watched[]): Promise<boolean> => {
    const open = targets.filter((target) => !target.lapsed);
    if (!open.length) return true;
    let live: Map<string, LiveCredential>;
    try {
      live = await liveCredentials([...new Set(open.map((target) => target.auth.credential.id))]);
    } catch (error) {
      logger.warn({ err: describeError(error), streams: open.length }, 'subscription credential check failed: the streams wait for the next check');
      return false;
    }
    for (const target of open) {
      const found = live.get(target.auth.credential.id);
      if (!admits(target.auth, found)) lapse(target, found?.expired ? 'expired' : 'revoked');
    }
    return true;
  };

  // Checks asked for before a statement begins share it; what waits on it is told in one loop once
  // it answers (a stream's event: no promise each). One statement runs at a time: what is asked for
  // meanwhile waits for the next, begun once the running one is done, so however many events
  // arrive while the database is slow, their checks cost one statement after another, not one each.
  let batch: Batch | null = null;
  let running: Promise<void> = Promise.resolve();
  /** What a failed check was for, when no check is waiting to begin: checked at the next round. */
  let carried: Batch | null = null;
  let retry: NodeJS.Timeout | undefined;
  let disposed = false;
  /** Whether `pending` is a batch no statement has begun for: one asked for now is begun after now. */
  const notBegun = (pending: Batch | undefined) => pending !== undefined && (pending === batch || pending === carried);

  const run = async (mine: Batch) => {
    if (await check([...mine.targets])) {
      for (const waiter of mine.waiting) waiter.answered();
      return;
    }
    // Carried to the check waiting to begin, if one is; otherwise to the next round's.
    const next = batch ?? (carried ??= { targets: new Set(), waiting: [] });
    for (const waiter of mine.waiting) {
      if (waiter.failed) waiter.failed();
      else next.waiting.push(waiter);
    }
    for (const target of mine.targets) {
      if (target.lapsed) continue;
      next.targets.add(target);
      if (target.pendingIn === mine) target.pendingIn = next;
    }
    if (next === carried && !retry && !disposed) {
      retry = setTimeout(() => {
        retry = undefined;
        if (carried) startBatch();
      }, recheckMs);
      retry.unref();
    }
  };

  /** The batch the next statement checks, begun after the one running (and after this turn). */
  const startBatch = (): Batch => {
    if (batch) return batch;
    const mine: Batch = carried ?? { targets: new Set(), waiting: [] };
    carried = null;
    clearTimeout(retry);
    retry = undefined;
    batch = mine;
    running = running
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        if (batch === mine) batch = null;
        return run(mine);
      })
      .catch((error: unknown) => logger.error({ err: describeError(error) }, 'subscription credential check: a stream could not be told'));
    return mine;
  };

  const checkSoon = (target: Watched, answered?: () => void, failed?: () => void): Batch => {
    const next = startBatch();
    next.targets.add(target);
    if (answered) next.waiting.push(failed ? { answered, failed } : { answered });
    return next;
  };

  /** A check of `target` begun after now, which what it delivers waits for (`pending`) until it answers. */
  const suspect = (target: Watched) => {
    // One that has not begun (asked for earlier, or carried from one that failed) begins after now too.
    if (target.pending && notBegun(target.pendingIn)) return;
    let settle!: () => void;
    const pending = new Promise<void>((resolve) => (settle = resolve));
    target.pending = pending;
    target.pendingIn = checkSoon(target, () => {
      if (target.pending === pending) {
        target.pending = undefined;
        target.pendingIn = undefined;
      }
      settle();
    });
  };

  function updatePoll() {
    const wanted = watched.size > 0 && !hearsAll();
    if (wanted && !poll) {
      poll = setInterval(() => {
        for (const target of watched) suspect(target);
      }, recheckMs);
      poll.unref();
    } else if (!wanted && poll) {
      clearInterval(poll);
      poll = undefined;
    }
  }

  const stopListening = bus.listen(CREDENTIAL_INVALIDATIONS, (message) => {
    const change = parseInvalidation(message);
    for (const target of watched) if (affectsCredential(target.auth, change)) suspect(target);
  });
  const stopHearing = bus.onHearing((hearing) => {
    // Whatever was announced while nobody listened is lost: every credential is checked afresh.
    if (hearing) for (const target of watched) suspect(target);
    updatePoll();
  });

  const arm = (target: Watched) => {
    const { expiresAt, mintedByExpiresAt } = target.auth;
    const ends = Math.min(expiresAt?.getTime() ?? Infinity, mintedByExpiresAt?.getTime() ?? Infinity);
    if (ends === Infinity) return;
    const wait = ends - Date.now();
    if (wait <= 0) {
      lapse(target, expiresAt && expiresAt.getTime() <= Date.now() ? 'expired' : 'revoked');
      return;
    }
    target.timer = setTimeout(() => arm(target), Math.min(wait, LONGEST_TIMER_MS));
    target.timer.unref();
  };

  return {
    async announce(change: CredentialInvalidation) {
      cache?.invalidate(change);
      await bus.announce(CREDENTIAL_INVALIDATIONS, JSON.stringify(change));
    },

    watch(auth, onLapse, options): CredentialHold {
      const target: Watched = { auth, onLapse, lapsed: false, pending: undefined, timer: undefined, socket: options?.socket === true, pendingIn: undefined };
      watched.add(target);
      arm(target);
      updatePoll();
      const hold: CredentialHold = {
        clear() {
          // What clearOr answers at once, or a promise of what it tells later (never synchronously).
          let tell!: (held: boolean) => void;
          const answer = hold.clearOr((held) => tell(held));
          return answer === 'waiting' ? new Promise<boolean>((resolve) => (tell = resolve)) : answer;
        },
        clearOr(wait) {
          if (target.lapsed) return false;
          if (!hearsAll()) {
            checkSoon(target, () => wait(!target.lapsed));
            return 'waiting';
          }
          if (target.pending) {
            void target.pending.then(() => wait(!target.lapsed));
            return 'waiting';
          }
          return true;
        },
        async verify() {
          // A stream never starts unchecked: one whose check failed is refused (503), and its client tries again.
          if (!target.lapsed) await new Promise<void>((resolve) => checkSoon(target, resolve, () => (lapse(target, 'unchecked'), resolve())));
          return !target.lapsed;
        },
        release() {
          if (target.lapsed) return;
          target.lapsed = true;
          watched.delete(target);
          clearTimeout(target.timer);
          updatePoll();
        },
      };
      return hold;
    },

    get size() {
      let streams = 0;
      for (const target of watched) if (!target.socket) streams++;
      return streams;
    },

    dispose() {
      disposed = true;
      stopListening();
      stopHearing();
      clearInterval(poll);
      poll = undefined;
      clearTimeout(retry);
      retry = undefined;
      carried = null;
      for (const target of watched) clearTimeout(target.timer);
      watched.clear();
    },
  };
}
