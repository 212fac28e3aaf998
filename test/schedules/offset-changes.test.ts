/**
 * offset-changes.ts: the instants a zone's offset changes in the coming year or so, found with as
 * few offset look-ups as the walk needs (each day's end once, it being the next day's start): the
 * minimum-interval guard runs it on every schedule_task card and call.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { offsetChanges } from "../../src/schedules/offset-changes.js";

const iso = (times: readonly number[]) => times.map((t) => new Date(t).toISOString());

describe("offsetChanges", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("finds each change of the next 400 days to the second, none in a zone without them", () => {
    const from = Date.parse("2026-12-07T00:00:00Z");
    expect(iso(offsetChanges("Europe/Berlin", from))).toEqual([
      "2027-03-28T01:00:00.000Z",
      "2027-10-31T01:00:00.000Z",
    ]);
    expect(iso(offsetChanges("Australia/Lord_Howe", from))).toEqual([
      "2027-04-03T15:00:00.000Z",
      "2027-10-02T15:30:00.000Z",
    ]);
    expect(offsetChanges("Asia/Tokyo", from)).toEqual([]);
  });

  it("looks up each day's end once, not again as the next day's start", () => {
    const lookups = vi.spyOn(Intl.DateTimeFormat.prototype, "formatToParts");
    offsetChanges("Europe/Berlin", Date.parse("2026-12-07T00:00:00Z"));
    // 401 day ends, and two changes halved from a day down to a second (17 halvings each).
    expect(lookups.mock.calls.length).toBeLessThanOrEqual(401 + 2 * 17);
  });
});
