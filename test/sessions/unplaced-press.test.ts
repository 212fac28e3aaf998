/**
 * Every card press says where it was pressed (ButtonPress.pressedIn), and the session layer refuses
 * one that does not — a channel that forgot it, or an older build's payload — as invalid, saying
 * why, instead of deciding the card unchecked. A press from another conversation than the card's is
 * refused before anything else.
 */
import { describe, expect, it } from "vitest";
import { NOT_PRESSED_WHERE_ASKED } from "../../src/approvals/press-place.js";
import type { ButtonPress } from "../../src/core/button-press.js";
import { cardPress } from "../support/card-press.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, type Harness, makeHarness, pressCard, suspendAtApproval, thread } from "./helpers/harness.js";

/** A harness whose turn in the default thread waits on a write_note card; resolves with the card's id. */
async function waitingCard(): Promise<{ h: Harness; id: string }> {
  const h = await makeHarness({ steps: [toolStep(["w1", "write_note", { text: "a" }]), textStep("done")] });
  const card = await suspendAtApproval(h, "a");
  return { h, id: card.pendingId };
}

describe("a card press at the session boundary", () => {
  it("is refused as invalid, saying why, when it does not say where it was pressed; the card stays open", async () => {
    const { h, id } = await waitingCard();
    const { pressedIn: _, ...unplaced } = cardPress(thread(), id, "once", ANA);
    for (const press of [unplaced, { ...unplaced, pressedIn: undefined }, { ...unplaced, pressedIn: null }]) {
      // As a channel written without the type, or an older build, would hand it over.
      const result = await h.manager.press(press as unknown as ButtonPress);
      expect(result).toEqual({
        status: "invalid",
        message: expect.stringMatching(/^Invalid press: pressedIn: /),
      });
    }
    expect(h.runs.count("w1")).toBe(0);
    expect(h.outputs.for(thread()).card(id)?.buttons.length).toBeGreaterThan(0);
    // Pressed in the card's own thread, it decides.
    expect((await pressCard(h, { pendingId: id })).status).toBe("accepted");
    await h.manager.idle();
    expect(h.runs.count("w1")).toBe(1);
  });

  it("is refused when it was pressed in another channel than the card's", async () => {
    const { h, id } = await waitingCard();
    const dm = { platform: "slack", workspace: "T1", channel: "D_ANA", thread: "1700000000.000900" };
    expect(await h.manager.press(cardPress(dm, id, "once", ANA))).toEqual({
      status: "not_allowed",
      message: NOT_PRESSED_WHERE_ASKED,
    });
    expect(h.runs.count("w1")).toBe(0);
    expect(h.outputs.for(thread()).card(id)?.buttons.length).toBeGreaterThan(0);
  });
});
