/**
 * A save_skill card shows the whole skill, and a card cuts a long text, posting the whole of it
 * beside itself up to 4,000,000 characters as it shows them (card-attachment.ts). Twenty copied
 * files of 256 KB make a card of some 5.4 million: such a save is refused, on its card and when
 * run, naming the limit, and one exactly at the limit — hidden characters written out counted —
 * is posted whole beside its card.
 */
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { approvalCard } from "../../src/approvals/approval-card.js";
import type { PendingApproval } from "../../src/approvals/pending-item.js";
import { postCardWithAttachment } from "../../src/channels/shared/card-attachment.js";
import type { Card } from "../../src/core/card.js";
import type { ToolPreview } from "../../src/core/tool.js";
import { createSaveSkillTool } from "../../src/skills/save-skill-tool.js";
import { SAVED_FILE_MAX_BYTES } from "../../src/skills/skill-bundled-files.js";
import { pendingFields } from "../approvals/pending-fields.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";
import { SKILL_CALL_CONTEXT, skillsFixture } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => fixture?.cleanup());

const LIMIT = 4_000_000;

/** The approval card of a save_skill preview. */
function cardOf(preview: ToolPreview): Card {
  const item: PendingApproval = {
    ...pendingFields(),
    kind: "approval",
    tool: "save_skill",
    argSummary: preview.summary,
    reason: "save_skill wants to save a skill",
    ...(preview.detail ? { detail: preview.detail } : {}),
    alwaysOptions: [],
  };
  return approvalCard(item);
}

/** What a platform that cuts every code block posts beside `card`. */
async function attachedText(card: Card): Promise<string | undefined> {
  let text: string | undefined;
  await postCardWithAttachment(
    card,
    {
      cuts: () => true,
      post: async () => ({ messageId: "m1" }),
      attach: async (_ref, file) => {
        text = file.text;
      },
      update: async () => undefined,
    },
    pino({ level: "silent" }),
  );
  return text;
}

/**
 * Save arguments copying `count` workspace files of 256 KB, the last `shorter` characters short;
 * the first starts with a zero-width space and a right-to-left isolate, which the card writes out.
 */
function copyingFiles(count: number, shorter: number) {
  const files = [];
  for (let i = 0; i < count; i += 1) {
    const hidden = i === 0 ? "\u200B\u2067" : "";
    const length = SAVED_FILE_MAX_BYTES - Buffer.byteLength(hidden) - (i === count - 1 ? shorter : 0);
    writeFileSync(path.join(fixture.workspace, `part-${i}.txt`), `${hidden}${"x".repeat(length)}`);
    files.push({ path: `part-${i}.txt`, from: `part-${i}.txt` });
  }
  return { name: "big-kit", description: "A big kit", instructions: "Read the parts.", files };
}

describe("a save_skill card too long to read whole", () => {
  it("is refused on its card and when run, naming the limit, writing nothing", async () => {
    fixture = await skillsFixture();
    const tool = createSaveSkillTool(toolWorkspace({ root: fixture.workspace }));
    const args = copyingFiles(20, 0);
    const preview = await tool.preview!(args, SKILL_CALL_CONTEXT);
    expect(preview.summary).toMatch(
      /^Will not save the skill "big-kit": its card would be 5,2\d\d,\d\d\d characters, over the 4,000,000 a card can show whole/,
    );
    expect(preview.detail).toBeUndefined();
    const result = await tool.execute(args, SKILL_CALL_CONTEXT);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/^The skill was not saved: its card would be .* over the 4,000,000/);
    expect(existsSync(path.join(fixture.workspaceSkills, "big-kit"))).toBe(false);
  });

  it("is shown whole beside its card at the limit, as the card shows it, and refused one character past", async () => {
    fixture = await skillsFixture();
    const tool = createSaveSkillTool(toolWorkspace({ root: fixture.workspace }));
    // Find how long the card of 16 full files is, as shown, then make it exactly the limit.
    const probe = await tool.preview!(copyingFiles(16, 0), SKILL_CALL_CONTEXT);
    const over = Number(/would be ([\d,]+) characters/.exec(probe.summary)?.[1]?.replace(/,/g, ""));
    expect(over).toBeGreaterThan(LIMIT);
    const atLimit = await tool.preview!(copyingFiles(16, over - LIMIT), SKILL_CALL_CONTEXT);
    expect(atLimit.summary).toMatch(/^Save the new skill "big-kit"/);
    const shown = await attachedText(cardOf(atLimit));
    expect(shown?.length).toBe(LIMIT);
    expect(shown).toContain("⟨U+200B⟩[U+2067]xxx");
    const past = await tool.preview!(copyingFiles(16, over - LIMIT - 1), SKILL_CALL_CONTEXT);
    expect(past.summary).toMatch(
      /^Will not save the skill "big-kit": its card would be 4,000,001 characters/,
    );
  });
});
