/**
 * StartOverMap: values kept by key up to the limit; a new key past it empties the map first,
 * while replacing a kept key does not.
 */
import { describe, expect, it } from "vitest";
import { StartOverMap } from "../../../src/channels/shared/start-over-map.js";

describe("StartOverMap", () => {
  it("keeps entries up to its limit, then starts over with the next new key", () => {
    const map = new StartOverMap<string, number>(3);
    map.set("a", 1);
    map.set("b", 2);
    map.set("c", 3);
    map.set("c", 30);
    expect([map.get("a"), map.get("b"), map.get("c")]).toEqual([1, 2, 30]);
    map.set("d", 4);
    expect([map.get("a"), map.get("b"), map.get("c"), map.get("d")]).toEqual([
      undefined,
      undefined,
      undefined,
      4,
    ]);
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => new StartOverMap(0)).toThrow(RangeError);
    expect(() => new StartOverMap(1.5)).toThrow(RangeError);
  });
});
