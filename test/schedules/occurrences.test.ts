import { Cron } from "croner";
import { describe, expect, it, vi } from "vitest";
import {
  cronProblem,
  MISSED_COUNT_CAP,
  missedOccurrences,
  nextOccurrence,
  nextOccurrences,
  shortestGap,
} from "../../src/schedules/occurrences.js";
import type { TaskSchedule } from "../../src/schedules/scheduled-task.js";

const cron = (expression: string, timezone: string, extra: Partial<TaskSchedule> = {}): TaskSchedule =>
  ({ type: "cron", expression, timezone, ...extra }) as TaskSchedule;
const iso = (ms: readonly number[]) => ms.map((m) => new Date(m).toISOString());
const at = (text: string) => Date.parse(text);

describe("cron occurrences", () => {
  it("reads the times in the schedule's timezone", () => {
    const runs = nextOccurrences(cron("0 9 * * 1-5", "Europe/Berlin"), at("2026-12-04T12:00:00Z"), 3);
    // Friday noon → Monday, Tuesday, Wednesday 09:00 CET (08:00 UTC).
    expect(iso(runs)).toEqual([
      "2026-12-07T08:00:00.000Z",
      "2026-12-08T08:00:00.000Z",
      "2026-12-09T08:00:00.000Z",
    ]);
    const tokyo = nextOccurrence(cron("0 9 * * *", "Asia/Tokyo"), at("2026-11-30T23:00:00Z"));
    expect(new Date(tokyo!).toISOString()).toBe("2026-12-01T00:00:00.000Z");
  });

  it("moves with daylight saving: summer and winter times keep the local hour", () => {
    const runs = nextOccurrences(cron("0 9 * * *", "Europe/Berlin"), at("2026-03-28T00:00:00Z"), 2);
    // 28 March is still CET (UTC+1), 29 March is CEST (UTC+2).
    expect(iso(runs)).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z"]);
  });

  it("runs a local time skipped by the spring-forward once, at the first valid moment", () => {
    const runs = nextOccurrences(cron("30 2 * * *", "Europe/Berlin"), at("2026-03-28T00:00:00Z"), 3);
    expect(iso(runs)).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z", // 02:30 does not exist on 29 March: 03:00 CEST
      "2026-03-30T00:30:00.000Z",
    ]);
  });

  it("runs a local time repeated by the fall-back once", () => {
    const runs = nextOccurrences(cron("30 1 * * *", "America/New_York"), at("2026-10-31T12:00:00Z"), 2);
    // 1 November 01:30 happens twice (EDT, then EST): one run, then 2 November in EST.
    expect(iso(runs)).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
  });

  it("honours until and max_runs", () => {
    const daily = cron("0 12 * * *", "UTC", { until: "2026-12-03T12:00:00.000Z" });
    expect(iso(nextOccurrences(daily, at("2026-12-01T00:00:00Z"), 5))).toEqual([
      "2026-12-01T12:00:00.000Z",
      "2026-12-02T12:00:00.000Z",
      "2026-12-03T12:00:00.000Z",
    ]);
    const three = cron("0 12 * * *", "UTC", { maxRuns: 3 });
    expect(nextOccurrences(three, at("2026-12-01T00:00:00Z"), 5, 1)).toHaveLength(2);
    expect(nextOccurrence(three, at("2026-12-01T00:00:00Z"), 3)).toBeUndefined();
  });

  it("a one-shot is due once, and only while it has not run", () => {
    const once: TaskSchedule = { type: "once", at: "2026-12-01T09:00:00.000Z" };
    expect(nextOccurrence(once, at("2026-12-01T08:00:00Z"))).toBe(at("2026-12-01T09:00:00Z"));
    expect(nextOccurrence(once, at("2026-12-01T08:00:00Z"), 1)).toBeUndefined();
    expect(nextOccurrence(once, at("2026-12-01T09:00:00Z"))).toBeUndefined();
  });

  it("says what is wrong with an expression or a timezone", () => {
    expect(cronProblem("0 9 * * 1-5", "Europe/Berlin")).toBeUndefined();
    expect(cronProblem("*/5 * * * * *", "UTC")).toBeUndefined();
    expect(cronProblem("0 9 * *", "UTC")).toContain("5 fields");
    expect(cronProblem("61 * * * *", "UTC")).toContain("minute");
    expect(cronProblem("0 9 * * *", "Mars/Olympus")).toContain("unknown timezone");
  });

  it("measures the shortest gap between runs", () => {
    expect(shortestGap(cron("*/5 * * * *", "UTC"), at("2026-12-01T00:00:00Z")).ms).toBe(300_000);
    expect(shortestGap(cron("0 9,10 * * *", "UTC"), at("2026-12-01T00:00:00Z")).ms).toBe(3_600_000);
    expect(shortestGap({ type: "once", at: "2026-12-02T00:00:00.000Z" }, 0).ms).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(shortestGap(cron("0,1 * * * *", "UTC", { maxRuns: 1 }), 0).ms).toBe(Number.POSITIVE_INFINITY);
    expect(shortestGap(cron("0,30 * * * * *", "UTC"), at("2026-12-01T00:00:00Z")).ms).toBe(30_000);
  });

  it("finds runs that come close across midnight only months ahead, past the next runs it lists", () => {
    // Every third day, at 00:00, 00:59, 23:00 and 23:59: two run days follow each other only where
    // a February of 28 days ends (28 Feb, then 1 Mar), 119 runs after December's first.
    const rare = cron("0,59 0,23 1,4,7,10,13,16,19,22,25,28 * *", "UTC");
    const from = at("2026-12-01T00:00:00Z");
    const runs = nextOccurrences(rare, from, 400);
    const close = runs.findIndex((run, i) => i > 0 && run - runs[i - 1]! < 5 * 60_000);
    expect(close).toBe(119);
    expect(iso(runs.slice(close - 1, close + 1))).toEqual([
      "2027-02-28T23:59:00.000Z",
      "2027-03-01T00:00:00.000Z",
    ]);
    expect(shortestGap(rare, from)).toEqual({ ms: 60_000, atClockChange: false });
  });

  it("finds the newest missed run and counts the earlier ones", () => {
    const hourly = cron("0 * * * *", "UTC");
    expect(
      missedOccurrences(hourly, at("2026-12-01T10:00:00Z"), at("2026-12-01T09:59:00Z"), 0),
    ).toBeUndefined();
    expect(missedOccurrences(hourly, at("2026-12-01T10:00:00Z"), at("2026-12-01T10:00:30Z"), 0)).toEqual({
      latest: at("2026-12-01T10:00:00Z"),
      earlier: 0,
    });
    expect(missedOccurrences(hourly, at("2026-12-01T10:00:00Z"), at("2026-12-02T13:30:00Z"), 0)).toEqual({
      latest: at("2026-12-02T13:00:00Z"),
      earlier: 27,
    });
    const minutely = cron("* * * * *", "UTC");
    const month = missedOccurrences(minutely, at("2026-11-01T00:00:00Z"), at("2026-12-01T00:00:00Z"), 0);
    expect(month).toEqual({ latest: at("2026-12-01T00:00:00Z"), earlier: MISSED_COUNT_CAP });
    const bounded = cron("0 * * * *", "UTC", { maxRuns: 5 });
    expect(missedOccurrences(bounded, at("2026-12-01T10:00:00Z"), at("2026-12-02T00:00:00Z"), 1)).toEqual({
      latest: at("2026-12-01T13:00:00Z"),
      earlier: 3,
    });
  });

  it("works out only the runs it counts: a task a few minutes late does not list hundreds ahead", () => {
    const runs = vi.spyOn(Cron.prototype, "nextRuns");
    const one = vi.spyOn(Cron.prototype, "nextRun");
    try {
      const everyTen = cron("*/10 * * * *", "Europe/Berlin");
      for (const runsSoFar of [3, 0]) {
        const bounded = runsSoFar === 3 ? cron("*/10 * * * *", "UTC", { maxRuns: 400 }) : everyTen;
        expect(
          missedOccurrences(bounded, at("2026-12-06T11:30:00Z"), at("2026-12-06T12:00:30Z"), runsSoFar),
        ).toEqual({ latest: at("2026-12-06T12:00:00Z"), earlier: 3 });
      }
      const listed = runs.mock.calls.reduce((sum, [n]) => sum + (n ?? 1), 0) + one.mock.calls.length;
      expect(listed).toBeLessThanOrEqual(2 * 5);
    } finally {
      runs.mockRestore();
      one.mockRestore();
    }
  });

  it("keeps daylight-saving changes as the module comment says (croner's behaviour)", () => {
    const berlin = (expression: string) => cron(expression, "Europe/Berlin");
    const onDay = (runs: readonly number[], day: string) => iso(runs).filter((r) => r.startsWith(day));
    // Spring forward (2027-03-28, 02:00 → 03:00): one skipped minute moves to 03:00; several vanish.
    expect(iso([nextOccurrence(berlin("30 2 * * *"), at("2027-03-27T12:00:00Z"))!])).toEqual([
      "2027-03-28T01:00:00.000Z",
    ]);
    expect(
      onDay(nextOccurrences(berlin("*/15 2 * * *"), at("2027-03-27T00:00:00Z"), 8), "2027-03-28"),
    ).toEqual([]);
    // Fall back (2026-10-25, 03:00 → 02:00): the repeated hour's times run twice.
    expect(
      onDay(nextOccurrences(berlin("0,30 2 * * *"), at("2026-10-24T12:00:00Z"), 6), "2026-10-25"),
    ).toHaveLength(4);
    // The minimum-interval guard sees the repeated hour's one-minute gap from any day of the year,
    // also where the next such night is over a year away (31 Oct 2027 from 26 Oct 2026).
    for (const from of ["2026-07-01T00:00:00Z", "2026-10-24T12:00:00Z", "2026-10-26T05:00:00Z"])
      expect(shortestGap(berlin("0,59 2 * * *"), at(from))).toEqual({ ms: 60_000, atClockChange: true });
    expect(shortestGap(cron("0,59 2 * * *", "UTC"), at("2026-07-01T00:00:00Z")).ms).toBe(59 * 60_000);
    expect(shortestGap(cron("0,59 1 * * *", "America/New_York"), at("2026-11-02T07:00:00Z")).ms).toBe(60_000);
    expect(shortestGap(berlin("0 * * * *"), at("2026-12-01T00:00:00Z")).ms).toBe(3_600_000);
  });
});
