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
 * A check that fails (the database out of reach) ends the streams it was for without an error:
 * their clients reconnect and authenticate afresh.
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

  const check = async (targets: Watched[]) => {
    const open = targets.filter((target) => !target.lapsed);
    if (!open.length) return;
    let live: Map<string, LiveCredential>;
    try {
      live = await liveCredentials([...new Set(open.map((target) => target.auth.credential.id))]);
    } catch (error) {
      logger.warn({ err: describeError(error) }, 'subscription credential check failed');
      for (const target of open) lapse(target, 'unchecked');
      return;
    }
    for (const target of open) {
      const found = live.get(target.auth.credential.id);
      if (!admits(target.auth, found)) lapse(target, found?.expired ? 'expired' : 'revoked');
    }
  };

  // Checks asked for within one turn of the event loop share one statement, begun after all of them;
  // what waits on it is told in one loop once it answers (a stream's event: no promise each).
  let batch: { targets: Set<Watched>; waiting: (() => void)[]; done: Promise<void> } | null = null;
  const checkSoon = (target: Watched, then?: () => void): Promise<void> => {
    if (!batch) {
      const targets = new Set<Watched>();
      const waiting: (() => void)[] = [];
      const done = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => {
          batch = null;
          return check([...targets]);
        })
        .finally(() => {
          for (const told of waiting) told();
        });
      batch = { targets, waiting, done };
    }
    batch.targets.add(target);
    if (then) batch.waiting.push(then);
    return batch.done;
  };

  const suspect = (target: Watched) => {
    const pending = checkSoon(target).finally(() => {
      if (target.pending === pending) target.pending = undefined;
    });
    target.pending = pending;
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
      const target: Watched = { auth, onLapse, lapsed: false, pending: undefined, timer: undefined, socket: options?.socket === true };
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
            void checkSoon(target, () => wait(!target.lapsed));
            return 'waiting';
          }
          if (target.pending) {
            void target.pending.then(() => wait(!target.lapsed));
            return 'waiting';
          }
          return true;
        },
        async verify() {
          if (!target.lapsed) await checkSoon(target);
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
      stopListening();
      stopHearing();
      clearInterval(poll);
      poll = undefined;
      for (const target of watched) clearTimeout(target.timer);
      watched.clear();
    },
  };
}
