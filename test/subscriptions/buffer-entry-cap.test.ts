/**
 * A buffered message's text capped for storage: cut between whole characters, the marker
 * counting what was not kept.
 */
import { describe, expect, it } from "vitest";
import { capEntryText } from "../../src/subscriptions/buffer-entry.js";

describe("capEntryText", () => {
  it("cuts before an emoji the cap would split and counts it as not kept", () => {
    expect(capEntryText({ text: "abc😀d" }, 4)).toEqual({ text: "abc… [3 more characters not kept]" });
  });
});
