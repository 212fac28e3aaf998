import { describe, expect, it } from "vitest";
import {
  formatDuration,
  formatSeconds,
  TOOL_OUTCOME_WORDS,
} from "../../../src/channels/shared/tool-line-format.js";

describe("tool line pieces", () => {
  it("says how long a call took in the unit that reads best", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(-5)).toBe("0 ms");
    expect(formatDuration(3_200)).toBe("3.2 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
    expect(formatDuration(120_000)).toBe("2 min");
  });

  it("gives seconds with one decimal", () => {
    expect(formatSeconds(4)).toBe("0.0 s");
    expect(formatSeconds(3_250)).toBe("3.3 s");
  });

  it("has a word for every way a call can fail to succeed", () => {
    expect(TOOL_OUTCOME_WORDS).toEqual({
      error: "failed",
      denied: "denied",
      interrupted: "interrupted",
      not_started: "not run",
    });
  });
});
