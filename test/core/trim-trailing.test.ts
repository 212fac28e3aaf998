import { describe, expect, it } from "vitest";
import { trimTrailing } from "../../src/core/trim-trailing.js";

describe("trimTrailing", () => {
  it("drops only the run of the character at the end", () => {
    expect(trimTrailing("a\n\nb\n\n\n", "\n")).toBe("a\n\nb");
    expect(trimTrailing("/usr/bin//", "/")).toBe("/usr/bin");
    expect(trimTrailing("////", "/")).toBe("");
    expect(trimTrailing("", "\n")).toBe("");
    expect(trimTrailing("abc", "\n")).toBe("abc");
  });

  it("keeps a long run that does not reach the end", () => {
    // /\n+$/ took minutes here: every position of the run was read to the run's end.
    const run = "\n".repeat(200_000);
    expect(trimTrailing(`${run}x\n`, "\n")).toBe(`${run}x`);
  });
});
