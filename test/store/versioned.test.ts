/** Versioned records: what is written, and how unreadable data fails. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fromVersioned, SCHEMA_VERSION, StoredDataError, toVersioned } from "../../src/store/versioned.js";

const spec = { kind: "session", schema: z.object({ id: z.string(), turns: z.number().int() }) };

describe("versioned records", () => {
  it("wraps data as { v, kind, data } and reads it back validated", () => {
    expect(SCHEMA_VERSION).toBe(1);
    const record = toVersioned("session", { id: "s1", turns: 2 });
    expect(record).toEqual({ v: 1, kind: "session", data: { id: "s1", turns: 2 } });
    expect(fromVersioned(JSON.parse(JSON.stringify(record)), spec)).toEqual({ id: "s1", turns: 2 });
  });

  it("refuses data from a newer build, saying which versions are involved", () => {
    const attempt = () => fromVersioned({ v: 3, kind: "session", data: {} }, spec);
    expect(attempt).toThrow(StoredDataError);
    expect(attempt).toThrow(
      "stored session was written by a newer Coworker (schema v3); this build reads v1 — upgrade Coworker to use this data",
    );
  });

  it.each([
    [undefined, "stored session has no schema version: it was not written by Coworker, or it is corrupt"],
    ["a string", "stored session has no schema version"],
    [{ kind: "session", data: {} }, "stored session has no schema version"],
    [
      { v: 0, kind: "session", data: {} },
      "stored session has an unknown schema version (0); this build reads v1",
    ],
    [{ v: "1", kind: "session", data: {} }, 'stored session has an unknown schema version ("1")'],
    [{ v: 1.5, kind: "session", data: {} }, "stored session has an unknown schema version (1.5)"],
    [{ v: 1, kind: "approval", data: {} }, 'stored session holds a record of kind "approval" instead'],
    [{ v: 1, kind: "session", data: { id: "s1", turns: "two" } }, "stored session is corrupt: turns: "],
    [{ v: 1, kind: "session" }, "stored session is corrupt: (root): "],
  ])("rejects %j", (raw, message) => {
    expect(() => fromVersioned(raw, spec)).toThrow(message);
  });

  it("names where the record came from", () => {
    expect(() =>
      fromVersioned({ v: 9, kind: "session", data: {} }, { ...spec, where: 'key "slack:T1"' }),
    ).toThrow('stored session (key "slack:T1") was written by a newer Coworker (schema v9)');
  });
});
