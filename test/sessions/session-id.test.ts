import { describe, expect, it } from "vitest";
import { newSessionId } from "../../src/sessions/session-id.js";

describe("newSessionId", () => {
  it("sorts by creation time (as strings, like the store's index), whatever the random part", () => {
    const times = [0, 1, 35, 36, 1_000, Date.UTC(2026, 11, 2), Date.UTC(2059, 0, 1)];
    const ids = times.map((t) => newSessionId(t));
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{8}[0-9a-f]{16}$/);
  });

  it("is unique for sessions begun in the same millisecond", () => {
    const ids = new Set(Array.from({ length: 1_000 }, () => newSessionId(5)));
    expect(ids.size).toBe(1_000);
  });
});
