import { describe, expect, it } from "vitest";
import { IdIndex } from "../../src/core/id-index.js";

describe("IdIndex", () => {
  it("files ids under their keys, each key apart", () => {
    const index = new IdIndex();
    index.add("telegram:1", "a");
    index.add("telegram:1", "b");
    index.add("slack:U1", "a");
    expect([...(index.idsOf("telegram:1") ?? [])]).toEqual(["a", "b"]);
    expect([...(index.idsOf("slack:U1") ?? [])]).toEqual(["a"]);
    expect(index.idsOf("slack:U2")).toBeUndefined();
  });

  it("keeps an id once however often it is filed", () => {
    const index = new IdIndex();
    index.add("k", "a");
    index.add("k", "a");
    expect(index.idsOf("k")?.size).toBe(1);
  });

  it("drops a key with its last id, and ignores ids it never had", () => {
    const index = new IdIndex();
    index.add("k", "a");
    index.add("k", "b");
    index.remove("k", "a");
    expect([...(index.idsOf("k") ?? [])]).toEqual(["b"]);
    index.remove("k", "zzz");
    index.remove("other", "b");
    expect([...(index.idsOf("k") ?? [])]).toEqual(["b"]);
    index.remove("k", "b");
    expect(index.idsOf("k")).toBeUndefined();
  });
});
