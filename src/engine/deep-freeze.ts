/** Recursive Object.freeze for plain data: snapshots and events are immutable once built. */

/** Freeze `value` and everything reachable from it; returns the same reference. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** A structured copy that is then frozen, so the caller's later mutations cannot reach inside. */
export function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}
