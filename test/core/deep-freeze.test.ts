/** deepFreeze / frozenCopy / frozenConcat / frozenWith / frozenFields: everything reachable ends up frozen; deep-frozen parts are shared, not copied. */
import { describe, expect, it } from "vitest";
import {
  deepFreeze,
  frozenConcat,
  frozenCopy,
  frozenFields,
  frozenWith,
  isDeeplyFrozen,
} from "../../src/core/deep-freeze.js";
import { isDeepFrozen } from "../engine/helpers/harness.js";

describe("deepFreeze", () => {
  it("freezes everything reachable, also below an object someone else froze shallowly", () => {
    const inner = { list: [{ n: 1 }] };
    const value = { shallow: Object.freeze({ inner }), plain: { x: 1 } };
    expect(deepFreeze(value)).toBe(value);
    expect(isDeepFrozen(value)).toBe(true);
    expect(Object.isFrozen(inner.list[0])).toBe(true);
    expect(isDeeplyFrozen(value)).toBe(true);
    expect(isDeeplyFrozen(inner)).toBe(true);
    expect(isDeeplyFrozen("text")).toBe(true);
    expect(isDeeplyFrozen({})).toBe(false);
    expect(isDeeplyFrozen(Object.freeze({ open: {} }))).toBe(false);
  });

  it("takes a frozen object holding only primitives for deeply frozen, and shares it when copying", () => {
    const leaf = Object.freeze({ id: "U1", name: "Ada" });
    const list = Object.freeze(["a", "b"]);
    expect(isDeeplyFrozen(leaf)).toBe(true);
    expect(isDeeplyFrozen(list)).toBe(true);
    expect(isDeeplyFrozen({ id: "U1" })).toBe(false);
    const copy = frozenCopy({ leaf, list, open: { id: "U2" } });
    expect(copy.leaf).toBe(leaf);
    expect(copy.list).toBe(list);
    expect(isDeepFrozen(copy)).toBe(true);
    expect(frozenConcat(list, ["c"])).toEqual(["a", "b", "c"]);
  });

  it("handles a cycle that passes through an array", () => {
    const a: { items: unknown[] } = { items: [] };
    a.items.push({ back: a });
    deepFreeze(a);
    expect([a, a.items, a.items[0]].every((part) => Object.isFrozen(part))).toBe(true);
    expect(isDeeplyFrozen(a)).toBe(true);
    expect(isDeeplyFrozen(a.items[0])).toBe(true);
  });

  it("handles cycles", () => {
    const a: Record<string, unknown> = { name: "a" };
    const b = { name: "b", a };
    a.b = b;
    deepFreeze(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(b)).toBe(true);
    expect(isDeeplyFrozen(b)).toBe(true);
  });

  it("does not take a value it failed to freeze for deeply frozen", () => {
    const value = { bytes: new Uint8Array([1, 2]) };
    expect(() => deepFreeze(value)).toThrow(TypeError);
    expect(isDeeplyFrozen(value)).toBe(false);
    expect(isDeeplyFrozen(value.bytes)).toBe(false);
  });
});

describe("frozenCopy", () => {
  it("keeps an own __proto__ key (as JSON.parse makes it) a field, never the copy's prototype", () => {
    const parsed = JSON.parse('{"name":"a","__proto__":{"admin":true}}') as Record<string, unknown>;
    const copy = frozenCopy({ args: parsed }).args as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.admin).toBeUndefined();
    expect(Object.keys(copy)).toEqual(["name", "__proto__"]);
    expect(Object.getOwnPropertyDescriptor(copy, "__proto__")?.value).toEqual({ admin: true });
    expect(Object.isFrozen(copy)).toBe(true);
  });

  it("shares deep-frozen parts and copies the rest, so the caller's later mutations never reach it", () => {
    const history = deepFreeze([{ role: "user", content: "hi" }]);
    const loose = { role: "user", content: "later", meta: { at: "t" } };
    const input = { history, loose, list: [loose], when: new Date(0) };
    const copy = frozenCopy(input);
    expect(copy).not.toBe(input);
    expect(copy.history).toBe(history);
    expect(copy.loose).not.toBe(loose);
    expect(copy.list[0]).toBe(copy.loose);
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(input.when);
    loose.content = "changed";
    loose.meta.at = "changed";
    input.list.push({ role: "user", content: "x", meta: { at: "x" } });
    expect(copy.loose).toEqual({ role: "user", content: "later", meta: { at: "t" } });
    expect(copy.list).toHaveLength(1);
    expect(isDeepFrozen(copy)).toBe(true);
    expect(Object.isFrozen(loose)).toBe(false);
    expect(frozenCopy(copy)).toBe(copy);
  });

  it("copies cycles and rejects what is not data, as structuredClone does", () => {
    const a: Record<string, unknown> = { name: "a" };
    a.self = a;
    const copy = frozenCopy(a);
    expect(copy.self).toBe(copy);
    expect(copy).not.toBe(a);
    expect(() => frozenCopy({ run: () => 1 })).toThrow();
  });
});

describe("frozenConcat", () => {
  it("joins a deep-frozen list and new items into a new deep-frozen list, freezing the new items", () => {
    const list = deepFreeze([{ n: 1 }]);
    const added = [{ n: 2, nested: { deep: true } }];
    const joined = frozenConcat(list, added);
    expect(joined).toEqual([{ n: 1 }, { n: 2, nested: { deep: true } }]);
    expect(joined).not.toBe(list);
    expect(list).toHaveLength(1);
    expect(Object.isFrozen(joined)).toBe(true);
    expect(Object.isFrozen(added[0]!.nested)).toBe(true);
    expect(isDeeplyFrozen(joined)).toBe(true);
  });

  it("refuses a list that was not deep-frozen (its items might still change)", () => {
    expect(() => frozenConcat([{ n: 1 }], [])).toThrow(/not deep-frozen/);
    expect(() => frozenConcat(Object.freeze([{ n: 1 }]), [])).toThrow(/not deep-frozen/);
  });
});

describe("frozenWith", () => {
  it("replaces fields of a deep-frozen object: kept fields shared, new values copied and frozen", () => {
    const base = deepFreeze({ id: "r1", user: { id: "U1" }, items: ["a"] });
    const replacement = { id: "U2", tags: ["x"] };
    const changed = frozenWith(base, { user: replacement });
    expect(changed).toEqual({ id: "r1", user: { id: "U2", tags: ["x"] }, items: ["a"] });
    expect(changed.items).toBe(base.items);
    expect(changed.user).not.toBe(replacement);
    replacement.tags.push("later");
    expect(changed.user).toEqual({ id: "U2", tags: ["x"] });
    expect(isDeepFrozen(changed)).toBe(true);
    expect(isDeeplyFrozen(changed)).toBe(true);
    expect(base.user).toEqual({ id: "U1" });
  });

  it("keeps a replacing __proto__ key (as JSON.parse makes it) a field, never the copy's prototype", () => {
    const base = deepFreeze({ id: "r1" });
    const changes = JSON.parse('{"__proto__":{"admin":true}}') as Partial<Record<string, unknown>>;
    const changed = frozenWith(base as Record<string, unknown>, changes);
    expect(Object.getPrototypeOf(changed)).toBe(Object.prototype);
    expect(changed.admin).toBeUndefined();
    expect(Object.keys(changed)).toEqual(["id", "__proto__"]);
    expect(Object.getOwnPropertyDescriptor(changed, "__proto__")?.value).toEqual({ admin: true });
  });

  it("refuses a base that is not deep-frozen", () => {
    const shallow = Object.freeze({ user: { id: "U1" } });
    expect(() => frozenWith(shallow, { user: { id: "U2" } })).toThrow(/not deep-frozen/);
  });
});

describe("frozenFields", () => {
  it("freezes the object it is handed in place, sharing its deep-frozen fields and copying the rest", () => {
    const target = deepFreeze({ platform: "telegram", extra: { chat: 1 } });
    const files = [{ path: "a.txt" }];
    const fresh = { target, files, sentAt: "t" };
    const frozen = frozenFields(fresh);
    expect(frozen).toBe(fresh);
    expect(frozen.target).toBe(target);
    expect(frozen.files).not.toBe(files);
    expect(isDeepFrozen(frozen)).toBe(true);
    expect(isDeeplyFrozen(frozen)).toBe(true);
    // The caller's own list stays as it was, and its later changes never reach the frozen object.
    expect(Object.isFrozen(files)).toBe(false);
    files.push({ path: "b.txt" });
    expect(frozen.files).toEqual([{ path: "a.txt" }]);
    expect(frozenCopy(frozen)).toBe(frozen);
  });

  it("keeps an own __proto__ key a field", () => {
    const fresh = JSON.parse('{"__proto__":{"admin":true}}') as Record<string, unknown>;
    const frozen = frozenFields(fresh);
    expect(Object.getPrototypeOf(frozen)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(frozen, "__proto__")?.value).toEqual({ admin: true });
    expect(Object.isFrozen(frozen)).toBe(true);
  });
});
