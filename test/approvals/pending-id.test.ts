/**
 * Pending ids (approvals, questions, plans, reviewer denials) are random base64url, so one may
 * start like a standing item's id ("tsk_", "wak_", "sub_"). The session layer routes a card press
 * to the item cards' Cancel only for an id a registered module knows whole, so an approval card
 * whose id starts "tsk_" is still decided by its buttons (routing by how an id starts sent such a
 * press to the item cards, where every button was "not valid").
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ScheduleService } from "../../src/schedules/schedule-service.js";

const drawn: Buffer[] = [];
vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  return {
    ...real,
    randomBytes: (size: number) => (size === 15 ? drawn.shift() : undefined) ?? real.randomBytes(size),
  };
});

const { scheduleCanceller } = await import("../../src/schedules/schedule-commands.js");
const { textStep, toolStep } = await import("../support/scripted-provider.js");
const { makeHarness, pressCard, suspendAtApproval } = await import("../sessions/helpers/harness.js");

afterEach(() => {
  drawn.length = 0;
});

/** A schedule service that cancels nothing: item cards must never be asked here. */
const noTasks = {
  cancel: async () => ({ ok: false, message: "You have no scheduled task." }),
} as unknown as Pick<ScheduleService, "cancel">;

describe("a pending card whose id starts like a standing item's", () => {
  it("is decided by its buttons, not taken by the item cards", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "hi" }]), textStep("done")],
      overrides: { itemCancellers: [scheduleCanceller(noTasks)] },
    });
    drawn.push(Buffer.from("tsk_AAAAAAAAAAAAAAAA", "base64url"));
    const card = await suspendAtApproval(h);
    expect(card.pendingId).toBe("tsk_AAAAAAAAAAAAAAAA");
    expect(await pressCard(h, card)).toMatchObject({ status: "accepted" });
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(1);
    await h.manager.drain(0);
    await h.store.close();
  });
});
