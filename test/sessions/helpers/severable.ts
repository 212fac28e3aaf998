/**
 * A coordination a test can sever from the others mid-test, as a process cut off from Redis: once
 * severed, its lease renewals hang (neither succeed nor fail, so its own deadline gives the lease
 * up) and its failover scan finds nothing (so another process is the one that takes over).
 */
import type { Coordination } from "../../../src/store/coordination/coordination.js";

export interface Severable {
  /** What the session layer sees the coordination through (a RedisStackSetup's `wrap`). */
  readonly wrap: (c: Coordination) => Coordination;
  /** Cut it off: renewals hang, failover scans find nothing. */
  sever(): void;
  /** Connect it again: renewals and scans go through. */
  mend(): void;
}

export interface SeverableHooks {
  /** Called with what each `items` read returned (severed or not). */
  readonly onItems?: (items: readonly string[]) => void;
}

/** A severable view of a coordination, connected until `sever` is called. */
export function severable(hooks: SeverableHooks = {}): Severable {
  let cut = false;
  const wrap = (c: Coordination): Coordination =>
    new Proxy(c, {
      get(inner, prop) {
        const value = Reflect.get(inner, prop, inner);
        if (prop === "renew")
          return (...args: Parameters<Coordination["renew"]>) =>
            cut ? new Promise<boolean>(() => undefined) : inner.renew(...args);
        if (prop === "unleasedMembers")
          return async (...args: Parameters<Coordination["unleasedMembers"]>) =>
            cut ? [] : inner.unleasedMembers(...args);
        if (prop === "items" && hooks.onItems) {
          const onItems = hooks.onItems;
          return async (...args: Parameters<Coordination["items"]>) => {
            const items = await inner.items(...args);
            onItems(items);
            return items;
          };
        }
        return typeof value === "function" ? value.bind(inner) : value;
      },
    });
  return {
    wrap,
    sever: () => {
      cut = true;
    },
    mend: () => {
      cut = false;
    },
  };
}
