import { describe, expect, it } from "vitest";
import { LogAllowance } from "../../src/tools/mcp/log-allowance.js";

describe("LogAllowance", () => {
  it("passes a burst at once, then a rate, and the next line that passes says how many were left out", () => {
    let now = 0;
    const allowance = new LogAllowance(3, 2, () => now);
    expect([1, 2, 3].map(() => allowance.take().pass)).toEqual([true, true, true]);
    expect(allowance.take()).toEqual({ pass: false, notLogged: 1 });
    expect(allowance.take()).toEqual({ pass: false, notLogged: 2 });
    now = 500; // half a second at 2 a second: one more line
    expect(allowance.take()).toEqual({ pass: true, notLogged: 2 });
    expect(allowance.take().pass).toBe(false);
    now = 60_000; // a long quiet spell refills the burst, no more
    expect([1, 2, 3, 4].map(() => allowance.take().pass)).toEqual([true, true, true, false]);
  });
});
