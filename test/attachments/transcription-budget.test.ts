import { describe, expect, it } from "vitest";
import { TranscriptionBudget } from "../../src/attachments/transcription-budget.js";

describe("TranscriptionBudget", () => {
  it("allows so many per person in any hour, counting only what was allowed", () => {
    let now = 0;
    const budget = new TranscriptionBudget(2, () => now);
    expect([budget.take("slack:U1"), budget.take("slack:U1"), budget.take("slack:U1")]).toEqual([
      true,
      true,
      false,
    ]);
    expect(budget.take("slack:U2")).toBe(true);
    now = 59 * 60_000;
    // Refusals are not counted: the two allowed at 0 leave the hour first.
    expect(budget.take("slack:U1")).toBe(false);
    now = 60 * 60_000 + 1;
    expect([budget.take("slack:U1"), budget.take("slack:U1"), budget.take("slack:U1")]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
