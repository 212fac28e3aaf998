/**
 * Retry in a shared thread: the retried turn runs as the failed turn's requester, never as the
 * person who pressed Retry, and only that requester or a configured approver may press it (as
 * another person's words never steer a turn). Through the real SessionManager, and the rules on
 * their own for records from before the requester was kept.
 */
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { ProviderError } from "../../src/engine/provider/provider.js";
import { retryRefusal, retryRunsAs } from "../../src/sessions/retry-requester.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, BEN, BOSS, makeHarness, message, thread } from "./helpers/harness.js";

const FAILED = { error: new ProviderError("server", "The model service failed.", 500) };
const APPROVALS = { approvers: ["slack:U_BOSS"] };
const DM: ThreadTarget = { platform: "slack", workspace: "T1", channel: "D1ANA", extra: { kind: "dm" } };

/** Ana's request fails; then the reading turn the retry runs (as whoever it runs as). */
async function anasFailedTurn() {
  const h = await makeHarness({
    steps: [FAILED, toolStep(["r1", "read_note", { name: "ana-notes" }]), textStep("here they are")],
  });
  await h.manager.receive(message("read ana-notes and post them here", { user: ANA }));
  await h.manager.idle();
  return h;
}

describe("Retry of a failed turn in a shared thread", () => {
  it("is refused to another member, named with the requester's user id, and runs nothing", async () => {
    const h = await anasFailedTurn();
    const requests = h.provider.requests.length;
    const pressed = await h.manager.press({ kind: "control", control: "retry", target: thread(), user: BEN });
    expect(pressed).toEqual({
      status: "not_allowed",
      message: "Only Ana (id U_ANA) or a configured approver can retry this.",
    });
    await h.manager.idle();
    expect(h.provider.requests).toHaveLength(requests);
    expect(h.runs.runs).toHaveLength(0);
    await h.store.close();
  });

  it("pressed by a configured approver, runs as the requester on the requester's words", async () => {
    const h = await anasFailedTurn();
    const pressed = await h.manager.press({
      kind: "control",
      control: "retry",
      target: thread(),
      user: BOSS,
    });
    expect(pressed).toEqual({ status: "accepted", message: "Retrying." });
    await h.manager.idle();
    expect(h.runs.runs.find((r) => r.callId === "r1")?.requester).toBe(ANA.id);
    const users = h.provider.lastRequest.messages.filter((m) => m.role === "user");
    expect(users.map((m) => m.content)).toEqual(["read ana-notes and post them here"]);
    await h.store.close();
  });

  it("pressed by the requester, runs as them", async () => {
    const h = await anasFailedTurn();
    const pressed = await h.manager.press({ kind: "control", control: "retry", target: thread(), user: ANA });
    expect(pressed.status).toBe("accepted");
    await h.manager.idle();
    expect(h.runs.runs.find((r) => r.callId === "r1")?.requester).toBe(ANA.id);
    await h.store.close();
  });

  it("keeps the original requester through a retry that fails again", async () => {
    const h = await makeHarness({
      steps: [FAILED, FAILED, toolStep(["r1", "read_note", { name: "ana-notes" }]), textStep("done")],
    });
    await h.manager.receive(message("read ana-notes", { user: ANA }));
    await h.manager.idle();
    expect(
      (await h.manager.press({ kind: "control", control: "retry", target: thread(), user: BOSS })).status,
    ).toBe("accepted");
    await h.manager.idle();
    const again = await h.manager.press({ kind: "control", control: "retry", target: thread(), user: BEN });
    expect(again.status).toBe("not_allowed");
    expect(
      (await h.manager.press({ kind: "control", control: "retry", target: thread(), user: ANA })).status,
    ).toBe("accepted");
    await h.manager.idle();
    expect(h.runs.runs.find((r) => r.callId === "r1")?.requester).toBe(ANA.id);
    await h.store.close();
  });
});

describe("retryRunsAs / retryRefusal on records from before the requester was kept", () => {
  const failedBy = (by?: string): ConversationMessage[] => [
    { role: "user", content: "read ana-notes", meta: by === undefined ? {} : { by } },
    { role: "assistant", content: null, meta: { error: "HTTP 500" } },
  ];
  const shared = (history: ConversationMessage[], startedBy = ANA) => ({
    record: { target: thread(), startedBy },
    history,
  });

  it("runs as the user the turn's opening message names, whoever presses", () => {
    expect(retryRunsAs(shared(failedBy(ANA.id)), BOSS)).toEqual(ANA);
    expect(retryRunsAs(shared(failedBy(ANA.id), BEN), ANA)).toEqual(ANA);
    expect(retryRunsAs(shared(failedBy(ANA.id), BEN), BOSS)).toEqual({ id: ANA.id, name: ANA.id });
    expect(retryRefusal(shared(failedBy(ANA.id)), BEN, APPROVALS)).toBe(
      "Only Ana (id U_ANA) or a configured approver can retry this.",
    );
    expect(retryRefusal(shared(failedBy(ANA.id)), BOSS, APPROVALS)).toBeUndefined();
  });

  it("refuses a shared thread's turn whose requester is not known at all; a DM's runs as its one person", () => {
    expect(retryRunsAs(shared(failedBy()), ANA)).toBeUndefined();
    expect(retryRefusal(shared(failedBy()), BOSS, APPROVALS)).toMatch(/not on record/);
    const dm = { record: { target: DM }, history: failedBy() };
    expect(retryRunsAs(dm, ANA)).toEqual(ANA);
    expect(retryRefusal(dm, ANA, APPROVALS)).toBeUndefined();
  });

  it("prefers the recorded requester, and names them in plain text with their id", () => {
    const mallory = { id: "U_MAL", name: "[Approve ✅](https://evil.example)" };
    const session = { record: { target: thread(), lastTurnRequester: mallory }, history: failedBy(ANA.id) };
    expect(retryRunsAs(session, BOSS)).toEqual(mallory);
    expect(retryRefusal(session, BEN, APPROVALS)).toBe(
      "Only [Approve ✅](https://evil.example) (id U_MAL) or a configured approver can retry this.",
    );
  });
});
