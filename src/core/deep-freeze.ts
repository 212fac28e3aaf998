/**
 * Recursive Object.freeze for plain data: snapshots and events are immutable once built.
 *
 * Every object this module has frozen all the way down is remembered (in a WeakSet), so a value
 * that is already deeply frozen is neither walked again nor copied again: a turn's request
 * snapshot shares the history's frozen messages instead of cloning the whole history each turn.
 * Leaves (objects holding only primitives) are not remembered: a frozen leaf is deeply frozen by
 * definition, checking it costs what walking it does, and a WeakSet entry per small object was
 * most of what freezing a turn's request and events cost.
 */

/** Objects with object children, known to be frozen together with everything reachable from them. */
const deeplyFrozen = new WeakSet<object>();

/** Whether `value` is a primitive, an object this module has deep-frozen, or a frozen leaf. */
export function isDeeplyFrozen(value: unknown): boolean {
  if (value === null || typeof value !== "object" || deeplyFrozen.has(value)) return true;
  return Object.isFrozen(value) && holdsOnlyPrimitives(value);
}

function holdsOnlyPrimitives(value: object): boolean {
  const keys = ownKeysOf(value);
  const count = keys ? keys.length : (value as unknown[]).length;
  for (let i = 0; i < count; i++) if (isObject(childAt(value, keys, i))) return false;
  return true;
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === "object";
}

/**
 * Children are read by index (`childAt`) rather than through Object.values or for…of, which
 * allocate a list or an iterator per object: freezing walks every object of every turn's request
 * and events. Arrays by index alone, since Object.keys would make a string per element.
 */
function ownKeysOf(value: object): string[] | undefined {
  return Array.isArray(value) ? undefined : Object.keys(value);
}

function childAt(value: object, keys: string[] | undefined, index: number): unknown {
  return keys ? (value as Record<string, unknown>)[keys[index]!] : (value as unknown[])[index];
}

/**
 * Freeze `value` and everything reachable from it; returns the same reference. Objects that were
 * frozen elsewhere (shallowly) are still walked, so their children end up frozen too.
 */
export function deepFreeze<T>(value: T): T {
  freezeAll(value);
  return value;
}

/**
 * `list` followed by `added`, as a new deep-frozen list. `list` must be one this module deep-froze,
 * so only the added items are walked: a long history's next snapshot costs a copy, not a walk.
 */
export function frozenConcat<T>(list: readonly T[], added: readonly T[]): readonly T[] {
  if (!isDeeplyFrozen(list)) throw new Error("frozenConcat: the list is not deep-frozen");
  for (const item of added) freezeAll(item);
  // A spread, not list.concat(added): concat leaves its fast path on a frozen list (several times slower).
  const joined = Object.freeze([...list, ...added]);
  if (deeplyFrozen.has(list) || added.some(isObject)) deeplyFrozen.add(joined);
  return joined;
}

/**
 * `base` with some fields replaced, as a new deep-frozen object. `base` must be one this module
 * deep-froze, so the fields it keeps are shared without a look; the replacing values are copied
 * as `frozenCopy` copies (the caller's later mutations cannot reach inside).
 */
export function frozenWith<T extends object>(base: T, changes: Partial<T>): T {
  if (!isDeeplyFrozen(base)) throw new Error("frozenWith: the base is not deep-frozen");
  const copy = { ...base };
  for (const key in changes) setField(copy as Record<string, unknown>, key, frozenCopy(changes[key]));
  deeplyFrozen.add(Object.freeze(copy));
  return copy;
}

/**
 * An object is remembered before its first object child is walked, so a cycle back to it ends
 * there (every object on a cycle has an object child); if freezing fails part-way (a typed array
 * with elements cannot be frozen), it is forgotten again.
 */
function freezeAll(value: unknown): void {
  if (!isObject(value) || deeplyFrozen.has(value)) return;
  Object.freeze(value);
  let remembered = false;
  try {
    const keys = ownKeysOf(value);
    const count = keys ? keys.length : (value as unknown[]).length;
    for (let i = 0; i < count; i++) {
      const child = childAt(value, keys, i);
      if (!isObject(child)) continue;
      if (!remembered) {
        deeplyFrozen.add(value);
        remembered = true;
      }
      freezeAll(child);
    }
  } catch (error) {
    if (remembered) deeplyFrozen.delete(value);
    throw error;
  }
}

/**
 * A deep-frozen copy, so the caller's later mutations cannot reach inside. Parts of `value` that
 * are already deep-frozen are shared rather than copied (nobody can change them); plain objects
 * and arrays are copied and frozen as they are built (no second walk over the copy); anything else
 * (Date, Map, …) goes through structuredClone, which also rejects what cannot be data (functions,
 * symbols).
 */
export function frozenCopy<T>(value: T): T {
  return isDeeplyFrozen(value) ? value : (copyFrozen(value, new Map()) as T);
}

/**
 * `fresh`, an object the caller has just built and hands over, frozen in place as `frozenCopy`
 * would copy it: its deep-frozen fields are shared and the others copied, so it ends deep-frozen
 * without a copy of the object itself.
 */
export function frozenFields<T extends object>(fresh: T): T {
  const fields = fresh as Record<string, unknown>;
  let holdsObjects = false;
  for (const key of Object.keys(fields)) {
    const value = frozenCopy(fields[key]);
    if (value !== fields[key]) setField(fields, key, value);
    if (isObject(value)) holdsObjects = true;
  }
  Object.freeze(fresh);
  if (holdsObjects) deeplyFrozen.add(fresh);
  return fresh;
}

/**
 * `target[key] = value` as a field of its own: an own `__proto__` key (JSON.parse makes one from
 * `{"__proto__": …}`) assigned plainly would set the copy's prototype instead, so the copy would
 * lose the field and inherit whatever that object holds.
 */
function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function copyFrozen(value: unknown, copies: Map<object, unknown>): unknown {
  if (typeof value === "function" || typeof value === "symbol") return structuredClone(value);
  if (!isObject(value) || isDeeplyFrozen(value)) return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  const keys = ownKeysOf(value);
  const prototype = Object.getPrototypeOf(value);
  if (keys && prototype !== Object.prototype && prototype !== null) {
    const cloned = deepFreeze(structuredClone(value));
    copies.set(value, cloned);
    return cloned;
  }
  const copy: Record<string, unknown> | unknown[] = keys ? {} : [];
  copies.set(value, copy);
  let holdsObjects = false;
  const count = keys ? keys.length : (value as unknown[]).length;
  for (let i = 0; i < count; i++) {
    const copied = copyFrozen(childAt(value, keys, i), copies);
    if (isObject(copied)) holdsObjects = true;
    if (keys) setField(copy as Record<string, unknown>, keys[i]!, copied);
    else (copy as unknown[]).push(copied);
  }
  Object.freeze(copy);
  // Every child is deep-frozen or a copy frozen the same way (a copy still being built, on a
  // cycle, is frozen before frozenCopy returns), so the copy is remembered like deepFreeze's.
  if (holdsObjects) deeplyFrozen.add(copy);
  return copy;
}
