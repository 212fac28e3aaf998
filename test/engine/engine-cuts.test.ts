/**
 * The engine's own cuts — a result's preview, a call's status-line reason, an attached file's
 * name — leave off a character whole: a cut between an emoji's two halves would leave half of it,
 * which platforms reject or show as garbage.
 */
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { attachedFilesOf } from "../../src/engine/attached-files.js";
import { preview, REASON_MAX_CHARS, statusReason } from "../../src/engine/tool-results.js";

describe("the engine's cuts never leave half an emoji", () => {
  it("a preview", () => {
    // The cut at 299 falls between the emoji's two halves: the whole emoji is left off.
    expect(preview(`${"p".repeat(298)}😀 tail`)).toBe(`${"p".repeat(298)}…`);
  });

  it("a status-line reason", () => {
    // The cut at REASON_MAX_CHARS - 1 falls between the emoji's two halves.
    const before = "s".repeat(REASON_MAX_CHARS - 2);
    expect(statusReason(`${before}😀 tail\nsecond line`)).toBe(`${before}…`);
  });

  it("an attached file's name", () => {
    // The cut at 79 falls between the emoji's two halves: the whole emoji is left off.
    const history: ConversationMessage[] = [
      {
        role: "user",
        content: "see the file",
        meta: { by: "U1" },
        attachments: [{ kind: "saved-file", path: "files/a.pdf", name: `${"n".repeat(78)}😀.pdf`, bytes: 1 }],
      },
    ];
    expect(attachedFilesOf(history, "U1")).toBe(`${"n".repeat(78)}…`);
  });
});
