/**
 * What history keeps of tool-call arguments that never parsed: a preview cut between whole
 * characters, so the stored record holds no half of an emoji.
 */
import { describe, expect, it } from "vitest";
import { MANGLED_PREVIEW_CHARS, mangledArgumentsRecord } from "../../src/engine/tool-results.js";

describe("mangledArgumentsRecord", () => {
  it("cuts the preview before an emoji the limit would split", () => {
    const raw = `${"a".repeat(MANGLED_PREVIEW_CHARS - 1)}😀b`;
    expect(JSON.parse(mangledArgumentsRecord(raw))).toEqual({
      unparsed_arguments_preview: `${"a".repeat(MANGLED_PREVIEW_CHARS - 1)}… [${raw.length} chars, truncated]`,
    });
  });
});
