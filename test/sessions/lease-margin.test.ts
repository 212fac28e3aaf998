/**
 * The margin by which a holder gives its lease up before the TTL runs out covers a stopped shell
 * command's kill grace (run_command waits 2 s by default between SIGTERM and SIGKILL) at the default
 * timing, and leaves short test TTLs most of their time for renewals.
 */
import { expect, it } from "vitest";
import { DEFAULT_LEASE_TIMING, lossMarginMs } from "../../src/sessions/lease-lock.js";
import { SHORT_LEASES } from "./helpers/redis-stack.js";

/** run_command's default grace between SIGTERM and SIGKILL (src/tools/shell/run-command.ts). */
const KILL_GRACE_MS = 2_000;

it("at the default timing the lease is given up early enough for a stopped command's kill grace, with slack", () => {
  expect(lossMarginMs(DEFAULT_LEASE_TIMING)).toBeGreaterThanOrEqual(KILL_GRACE_MS + 500);
  // Still after the second renewal would have confirmed it.
  expect(DEFAULT_LEASE_TIMING.ttlMs - lossMarginMs(DEFAULT_LEASE_TIMING)).toBeGreaterThan(
    2 * DEFAULT_LEASE_TIMING.renewMs,
  );
});

it("a short TTL keeps most of its time: a fifth at most is given up early", () => {
  for (const timing of [SHORT_LEASES, { ttlMs: 1_000, renewMs: 300 }]) {
    const margin = lossMarginMs(timing);
    expect(margin).toBeGreaterThan(0);
    expect(margin).toBeLessThanOrEqual(timing.ttlMs / 5);
    expect(timing.ttlMs - margin).toBeGreaterThan(2 * timing.renewMs);
  }
});
