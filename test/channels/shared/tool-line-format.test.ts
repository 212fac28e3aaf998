import { describe, expect, it } from "vitest";
import { formatSeconds, TOOL_OUTCOME_WORDS } from "../../../src/channels/shared/tool-line-format.js";

describe("tool line pieces", () => {
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
