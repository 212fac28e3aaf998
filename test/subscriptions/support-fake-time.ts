/**
 * Subscription service tests on faked time: setTimeout, clearTimeout and Date are faked from
 * 2026-11-30 09:00 UTC, so the debounce, retries and the wake budget's hour move only when a test
 * moves them. Here so the service test files open, settle and close their harness the same way.
 */
import { vi } from "vitest";
import { type Harness, openHarness } from "./support.js";

/** Fakes setTimeout, clearTimeout and Date, starting at 2026-11-30 09:00 UTC. */
export function startFakeTime(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  vi.setSystemTime(new Date("2026-11-30T09:00:00Z"));
}

/** A harness (as `openHarness` with these options) opened once time is faked. */
export async function openOnFakeTime(options?: Parameters<typeof openHarness>[0]): Promise<Harness> {
  startFakeTime();
  return openHarness(options);
}

/** Closes a harness from `openOnFakeTime` and puts real timers back. */
export async function closeOnFakeTime(h: Harness): Promise<void> {
  await h.close();
  vi.useRealTimers();
}

/** Moves faked time by `ms`, then waits for the service's work that started to end. */
export async function settle(h: Harness, ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await h.service.settled();
}

/** The texts of each batch the sink was woken with, in order. */
export function woken(h: Harness): string[][] {
  return h.sink.wakes.map((w) => w.batch.entries.map((e) => e.text));
}
