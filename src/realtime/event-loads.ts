import type { EventLoads } from '../context/services.js';

/**
 * What subscriptions load for an event, shared by every subscriber of one app. The bus hands the
 * same event object to each subscriber (src/realtime/bus.ts), so the row an event is resolved to is
 * loaded once per distinct Prisma query (the selection a document makes), however many subscribers
 * receive it: a crowd of subscribers costs one read per event and selection, not one per
 * subscriber. The loads are held by the event (a WeakMap of the app's own) and go with it once the
 * last subscriber has taken it.
 *
 * Only what every subscriber may see is loaded this way: the row by its id, its fields resolved
 * for each subscriber by the schema as for any query (an encrypted message's content stays
 * hidden), after the subscriber's own filter has checked the event is of its workspace and channel.
 *
 * A load that fails fails for the event: every cohort that asks for it later receives the same
 * error, and none loads it again (docs/graphql.md, "Subscriptions"). It fails when the database is
 * out of reach or its pool has no connection to spare, and the event's other cohorts ask within
 * milliseconds, when that is still so: loading again for each of them would multiply the reads
 * exactly while the pool is short. The next event loads afresh.
 */
export function createEventLoads(): EventLoads {
  const loads = new WeakMap<object, Map<string, Promise<unknown>>>();
  return {
    load<T>(event: object, query: unknown, load: () => Promise<T>): Promise<T> {
      let byQuery = loads.get(event);
      if (!byQuery) loads.set(event, (byQuery = new Map()));
      const key = JSON.stringify(query);
      let loaded = byQuery.get(key) as Promise<T> | undefined;
      if (!loaded) {
        loaded = load();
        byQuery.set(key, loaded);
        // Kept when it fails: every cohort of the event receives its error (each awaits it).
        loaded.catch(() => {});
      }
      return loaded;
    },
  };
}
