import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ActivityEvent, ActivityUser, EventBus, Presence } from '../../context/services.js';
import { Subscription } from '../../realtime/bus.js';

/** How long a `typing: true` lasts unless renewed. */
export const TYPING_LAPSE_MS = 6000;
/** How often a process tells the others whom it holds viewing. */
export const VIEWING_HEARTBEAT_MS = 1500;
/** How long another process's viewer counts without being heard again (its process died). */
export const VIEWING_LAPSE_MS = 4000;
/** The most events one activity subscriber may leave unread before it is cut off. */
const MAX_PENDING = 1000;

/** What travels between processes, on the bus's `activity` announcements. */
type Message =
  | { origin: string; kind: 'typing'; workspaceId: string; conversationId: string; user: ActivityUser; typing: boolean; at: number }
  | { origin: string; kind: 'viewing'; viewers: { workspaceId: string; conversationId: string; user: ActivityUser }[] }
  | { origin: string; kind: 'left'; workspaceId: string; conversationId: string; user: ActivityUser };

const ANNOUNCEMENTS = 'activity';

/** One user's state in one conversation, as this process knows it. */
interface UserState {
  user: ActivityUser;
  workspaceId: string;
  /** This process's subscriptions of the user on the conversation. */
  local: number;
  /** Other processes holding the user viewing: until when each counts. */
  remote: Map<string, number>;
  typingUntil: number;
  /** What was last told to subscribers. */
  told: { typing: boolean; viewing: boolean };
}

/**
 * Presence and typing (docs/inbox.md): state of this app instance only, nothing stored. Each
 * process holds its own viewers and tells the others over the bus's announcements (Redis; in the
 * process alone without it): a viewer's arrival and departure at once, and every
 * VIEWING_HEARTBEAT_MS whom it still holds, so that a process that dies stops counting within
 * VIEWING_LAPSE_MS. Typing lapses TYPING_LAPSE_MS after its last `true`, on every process alike.
 */
export function createPresence(options: { bus: EventBus; logger: Logger; now?: () => number }): Presence {
  const { bus, logger } = options;
  const now = options.now ?? Date.now;
  const origin = randomUUID();
  /** By conversation, then user. */
  const states = new Map<string, Map<string, UserState>>();
  const feeds = new Map<string, Set<Subscription<ActivityEvent>>>();

  const stateOf = (workspaceId: string, conversationId: string, user: ActivityUser): UserState => {
    let users = states.get(conversationId);
    if (!users) states.set(conversationId, (users = new Map()));
    let state = users.get(user.id);
    if (!state) users.set(user.id, (state = { user, workspaceId, local: 0, remote: new Map(), typingUntil: 0, told: { typing: false, viewing: false } }));
    state.user = user;
    return state;
  };

  const viewing = (state: UserState, at: number) => state.local > 0 || [...state.remote.values()].some((until) => until > at);

  /** Tells the conversation's subscribers when the user's state changed (or always, for a typing report). */
  const settle = (conversationId: string, state: UserState, always = false) => {
    const at = now();
    for (const [key, until] of state.remote) if (until <= at) state.remote.delete(key);
    const current = { typing: state.typingUntil > at, viewing: viewing(state, at) };
    const changed = current.typing !== state.told.typing || current.viewing !== state.told.viewing;
    state.told = current;
    if (changed || always) {
      const event: ActivityEvent = { conversationId, workspaceId: state.workspaceId, user: state.user, ...current, at: new Date(at) };
      for (const feed of [...(feeds.get(conversationId) ?? [])]) feed.push(event);
    }
    if (!current.typing && !current.viewing && state.local === 0 && state.remote.size === 0) {
      const users = states.get(conversationId);
      users?.delete(state.user.id);
      if (users?.size === 0) states.delete(conversationId);
    }
  };

  const send = (message: Message) => {
    bus.announce(ANNOUNCEMENTS, JSON.stringify(message)).catch(() => {});
  };

  const stopListening = bus.listen(ANNOUNCEMENTS, (raw) => {
    let message: Message;
    try {
      message = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    // This process's own announcements were applied when made.
    if (message?.origin === origin) return;
    if (message.kind === 'typing') {
      const state = stateOf(message.workspaceId, message.conversationId, message.user);
      state.typingUntil = message.typing ? now() + TYPING_LAPSE_MS : 0;
      settle(message.conversationId, state, true);
    } else if (message.kind === 'viewing') {
      const until = now() + VIEWING_LAPSE_MS;
      for (const viewer of message.viewers ?? []) {
        const state = stateOf(viewer.workspaceId, viewer.conversationId, viewer.user);
        state.remote.set(message.origin, until);
        settle(viewer.conversationId, state);
      }
    } else if (message.kind === 'left') {
      const state = stateOf(message.workspaceId, message.conversationId, message.user);
      state.remote.delete(message.origin);
      settle(message.conversationId, state);
    }
  });

  /** Whom this process holds viewing, for the others. */
  const heldViewers = () => {
    const viewers: { workspaceId: string; conversationId: string; user: ActivityUser }[] = [];
    for (const [conversationId, users] of states) {
      for (const state of users.values()) if (state.local > 0) viewers.push({ workspaceId: state.workspaceId, conversationId, user: state.user });
    }
    return viewers;
  };

  // Lapses: typing not renewed, viewers of processes no longer heard; and this process's heartbeat.
  let beat = 0;
  const timer = setInterval(() => {
    const at = now();
    for (const [conversationId, users] of [...states]) {
      for (const state of [...users.values()]) {
        const lapsed = (state.told.typing && state.typingUntil <= at) || [...state.remote.values()].some((until) => until <= at);
        if (lapsed) settle(conversationId, state);
      }
    }
    beat += 250;
    if (beat >= VIEWING_HEARTBEAT_MS) {
      beat = 0;
      const viewers = heldViewers();
      if (viewers.length) send({ origin, kind: 'viewing', viewers });
    }
  }, 250);
  timer.unref();

  return {
    reportTyping({ workspaceId, conversationId, user, typing }) {
      const state = stateOf(workspaceId, conversationId, user);
      state.typingUntil = typing ? now() + TYPING_LAPSE_MS : 0;
      settle(conversationId, state, true);
      send({ origin, kind: 'typing', workspaceId, conversationId, user, typing, at: now() });
    },
    watch({ workspaceId, conversationId, viewer }) {
      let set = feeds.get(conversationId);
      if (!set) feeds.set(conversationId, (set = new Set()));
      const feed: Subscription<ActivityEvent> = new Subscription<ActivityEvent>(MAX_PENDING, () => {
        set.delete(feed);
        if (set.size === 0) feeds.delete(conversationId);
        if (!viewer) return;
        const state = stateOf(workspaceId, conversationId, viewer);
        state.local = Math.max(0, state.local - 1);
        if (state.local === 0) send({ origin, kind: 'left', workspaceId, conversationId, user: viewer });
        settle(conversationId, state);
      }, undefined);
      // What is known now, first: every user typing or viewing.
      const at = now();
      for (const state of states.get(conversationId)?.values() ?? []) {
        if (state.workspaceId !== workspaceId) continue;
        const current = { typing: state.typingUntil > at, viewing: viewing(state, at) };
        if (current.typing || current.viewing) feed.push({ conversationId, workspaceId, user: state.user, ...current, at: new Date(at) });
      }
      set.add(feed);
      if (viewer) {
        const state = stateOf(workspaceId, conversationId, viewer);
        state.local += 1;
        if (state.local === 1) send({ origin, kind: 'viewing', viewers: [{ workspaceId, conversationId, user: viewer }] });
        settle(conversationId, state);
      }
      return feed;
    },
    dispose() {
      clearInterval(timer);
      stopListening();
      const viewers = heldViewers();
      for (const viewer of viewers) send({ origin, kind: 'left', ...viewer });
      for (const set of [...feeds.values()]) for (const feed of [...set]) void feed.return();
      feeds.clear();
      states.clear();
      logger.debug({ viewers: viewers.length }, 'presence disposed');
    },
  };
}
