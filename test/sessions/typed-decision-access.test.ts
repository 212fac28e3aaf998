/**
 * `approve <id>` / `deny <id>` can be typed in any conversation, but decide only as a press of the
 * card's button in the card's own conversation would: on its platform, by someone who may still use
 * the bot there (mayActIn), and on the approvers configured now — not the ones the card was raised
 * under. A refusal says nothing of the card.
 */
import { describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import type { SessionManagerOptions } from "../../src/sessions/session-manager.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import {
  ANA,
  BOSS,
  type Harness,
  makeHarness,
  message,
  pressCard,
  tempDir,
  thread,
} from "./helpers/harness.js";
import { parkAtWriteCard } from "./helpers/parked-card.js";
import { ToolRuns } from "./helpers/test-tools.js";

const SECRET = thread("1700000000.000100", "C_SECRET");
const ANAS_DM: ThreadTarget = {
  platform: "slack",
  workspace: "T1",
  channel: "D_ANA",
  thread: "1700000000.000900",
};
const NOT_WHERE_ASKED =
  "You can't decide this request: you may not use Coworker in the conversation it was asked in.";

/** A harness whose turn in the #secret thread waits on a write_note card; resolves with the card's id. */
async function cardInSecret(overrides: Partial<SessionManagerOptions>): Promise<{ h: Harness; id: string }> {
  const h = await makeHarness({
    steps: [toolStep(["w1", "write_note", { text: "the launch date" }]), textStep("done")],
    overrides,
  });
  await h.manager.receive(message("write the note", { user: ANA, target: SECRET }));
  const out = h.outputs.for(SECRET);
  const card = await h.outputs.until(
    () => out.latestCards.find((c) => c.kind === "approval" && c.buttons.length > 0),
    "the card",
  );
  return { h, id: card.pendingId };
}

/** The access checks asked for, as "user@channel". */
function recordingAccess(may: (userId: string, target: ThreadTarget) => boolean | Promise<boolean>) {
  const asked: string[] = [];
  const mayActIn = async (userId: string, target: ThreadTarget) => {
    asked.push(`${userId}@${target.channel}`);
    return may(userId, target);
  };
  return { asked, mayActIn };
}

describe("typed decisions are checked against the card's conversation", () => {
  it("refuses Ana's approve from her DM once she may no longer use the bot in #secret; the call does not run", async () => {
    const access = recordingAccess((userId, target) => !(userId === ANA.id && target.channel === "C_SECRET"));
    const { h, id } = await cardInSecret({ mayActIn: access.mayActIn });
    const reply = await h.manager.command(ANAS_DM, ANA, "approve", [id]);
    expect(reply).toBe(NOT_WHERE_ASKED);
    expect(reply).not.toMatch(/write_note|launch/);
    expect(access.asked).toEqual(["U_ANA@C_SECRET"]);
    // The typed form through receive() is refused the same way.
    expect((await h.manager.receive(message(`deny ${id}`, { user: ANA, target: ANAS_DM }))).status).toBe(
      "command",
    );
    expect(h.outputs.for(ANAS_DM).texts.at(-1)).toBe(NOT_WHERE_ASKED);
    expect(h.runs.count("w1")).toBe(0);
    expect(h.outputs.for(SECRET).card(id)?.buttons.length).toBeGreaterThan(0);
  });

  it("lets Ana decide from her DM while she may still use the bot in #secret", async () => {
    const access = recordingAccess(() => true);
    const { h, id } = await cardInSecret({ mayActIn: access.mayActIn });
    expect(await h.manager.command(ANAS_DM, ANA, "approve", [id])).toMatch(/^Approved by Ana/);
    await h.manager.idle();
    expect(access.asked).toEqual(["U_ANA@C_SECRET"]);
    expect(h.runs.count("w1")).toBe(1);
    expect(h.outputs.for(SECRET).card(id)?.buttons).toEqual([]);
  });

  it("still takes a typed approve in the card's own thread", async () => {
    const access = recordingAccess(() => true);
    const { h, id } = await cardInSecret({ mayActIn: access.mayActIn });
    expect((await h.manager.receive(message(`approve ${id}`, { user: ANA, target: SECRET }))).status).toBe(
      "command",
    );
    await h.manager.idle();
    expect(h.runs.count("w1")).toBe(1);
  });

  it("refuses, without deciding, when the platform cannot say whether the person may act there", async () => {
    const { h, id } = await cardInSecret({
      mayActIn: async () => {
        throw new Error("users.info failed");
      },
    });
    expect(await h.manager.command(ANAS_DM, ANA, "approve", [id])).toMatch(
      /^Could not check whether you may still use Coworker in the conversation this request was asked in/,
    );
    expect(h.runs.count("w1")).toBe(0);
  });

  it("refuses an approver on another platform, who could press no button of the card", async () => {
    const { h, id } = await cardInSecret({
      approvals: { approvers: ["slack:U_BOSS", "telegram:42"], ttlMs: 60 * 60 * 1000 },
    });
    const telegramDm: ThreadTarget = { platform: "telegram", workspace: "", channel: "42" };
    expect(await h.manager.command(telegramDm, { id: "42", name: "Tom" }, "approve", [id])).toBe(
      NOT_WHERE_ASKED,
    );
    expect(h.runs.count("w1")).toBe(0);
  });
});

describe("decisions use the approvers configured now", () => {
  const HOUR = 60 * 60 * 1000;

  it("refuses an approver removed from the configuration since the card was raised; the requester still decides", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    // Raised while Boss is a configured approver (the harness's default).
    const card = await parkAtWriteCard(dataDir, runs);
    const after = await makeHarness({
      dataDir,
      runs,
      steps: [textStep("done after restart")],
      overrides: { approvals: { approvers: [], ttlMs: HOUR } },
    });
    await after.manager.start();
    const typed = await after.manager.command(thread(), BOSS, "approve", [card.pendingId]);
    expect(typed).toMatch(/^Only Ana/);
    expect(await pressCard(after, card, "once", BOSS)).toMatchObject({ status: "not_allowed" });
    expect(runs.count("c1")).toBe(0);
    // The stored requester keeps deciding.
    expect(await after.manager.command(thread(), ANA, "approve", [card.pendingId])).toMatch(
      /^Approved by Ana/,
    );
    await after.manager.idle();
    expect(runs.count("c1")).toBe(1);
    await after.store.close();
  });

  it("lets an approver still configured decide after a restart", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkAtWriteCard(dataDir, runs);
    const after = await makeHarness({ dataDir, runs, steps: [textStep("done after restart")] });
    await after.manager.start();
    expect(await after.manager.command(thread(), BOSS, "approve", [card.pendingId])).toMatch(
      /^Approved by Boss/,
    );
    await after.manager.idle();
    expect(runs.count("c1")).toBe(1);
    await after.store.close();
  });
});
