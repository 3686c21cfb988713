import type { DomainEvent, EventBus } from '../../context/services.js';

/** The most often a broadcastUpdated subscription is given the broadcast's view (docs/broadcasts.md#following-and-steering-it). */
export const UPDATE_INTERVAL_MS = 1000;

/** What a broadcastUpdated subscription is given: the event that prompted it (its view is loaded for it). */
export type BroadcastUpdate = Extract<DomainEvent, { type: 'message.updated' | 'broadcast.updated' }>;

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * The changes of one broadcast as a subscription streams them: first the broadcast as it is now,
 * then — while its messages' statuses change (`message.updated` naming it) or it changes itself
 * (`broadcast.updated`) — at most one every `intervalMs`, the latest change of each interval
 * given at its end, and at once a last one when it ends (finished or canceled), after which the
 * stream completes. A broadcast that has ended already gives the one and completes. Nothing is
 * queued beyond the latest change: a busy broadcast's thousands of status changes a second cost
 * one result a second.
 */
export function broadcastUpdates(
  bus: EventBus,
  broadcast: { id: string; workspaceId: string; channelId: string; ended: boolean },
  intervalMs = UPDATE_INTERVAL_MS,
): AsyncIterableIterator<BroadcastUpdate> {
  const now: BroadcastUpdate = { type: 'broadcast.updated', broadcastId: broadcast.id, workspaceId: broadcast.workspaceId, channelId: broadcast.channelId, ended: broadcast.ended };
  /** Results ready to be taken, in order. */
  const ready: BroadcastUpdate[] = [now];
  let waiting: ((result: IteratorResult<BroadcastUpdate>) => void) | undefined;
  let ended = broadcast.ended;
  let latest: BroadcastUpdate | null = null;
  let timer: NodeJS.Timeout | undefined;
  let lastAt = Date.now();
  const sources: AsyncIterator<unknown>[] = [];

  const give = (update: BroadcastUpdate) => {
    lastAt = Date.now();
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve({ done: false, value: update });
    } else ready.push(update);
  };
  const stop = () => {
    if (ended && !sources.length) return;
    ended = true;
    clearTimeout(timer);
    latest = null;
    for (const source of sources.splice(0)) void source.return?.();
    if (!ready.length && waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve(DONE);
    }
  };
  const flush = () => {
    timer = undefined;
    if (latest) give(latest);
    latest = null;
  };
  const arrive = (event: BroadcastUpdate) => {
    if (ended) return;
    if (event.type === 'broadcast.updated' && event.ended) {
      give(event);
      return stop();
    }
    latest = event;
    if (timer) return;
    const wait = lastAt + intervalMs - Date.now();
    if (wait <= 0) flush();
    else timer = setTimeout(flush, wait);
  };

  if (!ended) {
    const mine = (event: { workspaceId: string; broadcastId?: string | null }) => event.workspaceId === broadcast.workspaceId && event.broadcastId === broadcast.id;
    const statuses = bus.subscribe('message.updated', mine);
    const changes = bus.subscribe('broadcast.updated', mine);
    sources.push(statuses, changes);
    // A source cut off (its subscriber fell behind) ends the stream; the client subscribes again.
    statuses.listen(arrive, stop);
    changes.listen(arrive, stop);
  }

  return {
    next() {
      const update = ready.shift();
      if (update) return Promise.resolve({ done: false, value: update });
      if (ended) return Promise.resolve(DONE);
      return new Promise((resolve) => (waiting = resolve));
    },
    return() {
      ready.length = 0;
      stop();
      return Promise.resolve(DONE);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
