import { describe, expect, it } from "vitest";
import { PendingStore } from "../../src/approvals/pending-store.js";
import { markdownToMrkdwn } from "../../src/channels/slack/slack-markdown.js";
import { planRejected } from "../../src/engine/tool-results.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, BEN, BOSS, type Harness, makeHarness, message, thread, pressCard } from "./helpers/harness.js";
import { outcomeLine } from "../support/card-outcome.js";
import { storedHistory } from "../support/stored-history.js";

/** The stored history of the session in thread() (its last closed turn's), as the product reads it. */
async function storedInThread(h: Harness) {
  const sessionId = h.outputs.for(thread()).closedTurns.at(-1)?.sessionId;
  if (sessionId === undefined) throw new Error("no turn closed in thread()");
  return storedHistory(h.store.space("history"), sessionId);
}

async function planCardOf(h: Harness) {
  const out = h.outputs.for(thread());
  return h.outputs.until(() => out.latestCards.find((c) => c.kind === "plan"), "plan card");
}

describe("plan proposals", () => {
  it("approving a plan in auto mode switches the session's stored mode", async () => {
    const h = await makeHarness({
      steps: [toolStep(["p1", "propose_plan", { plan: "1. write a note" }]), textStep("on it")],
    });
    await h.manager.command(thread(), ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan the change"));
    const card = await planCardOf(h);
    expect(card.blocks[0]).toEqual({ kind: "text", text: "1. write a note" });
    // Typed changes are a reply to the card (a Telegram group's bot sees only those), as for a question.
    expect(card.footer).toBe("Or reply to this message with changes to revise the plan.");
    // Auto mode is less safe: in a shared thread with an approver configured, the approver decides.
    expect((await pressCard(h, card, "plan_auto", ANA)).status).toBe("not_allowed");
    await pressCard(h, card, "plan_auto", BOSS);
    await h.manager.idle();
    expect(outcomeLine(h.outputs.for(thread()).card(card.pendingId))).toBe(
      "Approved (auto mode) by Boss (id U_BOSS)",
    );
    // The switch is the approver's: `status` credits Boss, not Ana who set plan mode.
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      /Mode: auto \(set by Boss \(id U_BOSS\)\)/,
    );
  });

  it("in a shared thread, approving a plan is for those who may loosen the session, not its requester", async () => {
    const h = await makeHarness({
      steps: [
        textStep("hello"),
        toolStep(["p1", "propose_plan", { plan: "1. write a note" }]),
        textStep("on it"),
      ],
    });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    await h.manager.command(thread(), ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan something", { user: BEN }));
    const card = await planCardOf(h);
    // The card says who may approve it; Ben may still reject it or reply with changes.
    expect(card.blocks).toContainEqual({
      kind: "text",
      text: expect.stringMatching(
        /^Approving this plan takes the session out of read-only plan mode, so only a configured approver/,
      ),
    });
    for (const action of ["plan_interactive", "plan_auto"])
      expect(await pressCard(h, card, action, BEN)).toMatchObject({
        status: "not_allowed",
        message: expect.stringMatching(/Ben \(id U_BEN\) can still reject it or reply with changes/),
      });
    expect(markdownToMrkdwn(await h.manager.command(thread(), BEN, "approve", [card.pendingId]))).toMatch(
      /^Approving this plan takes .* Ben \(id U_BEN\) can still reject it or reply with changes\.$/,
    );
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      /Mode: plan \(set by Ana \(id U_ANA\)\)/,
    );
    expect(await pressCard(h, card, "plan_interactive", BOSS)).toMatchObject({ status: "accepted" });
    await h.manager.idle();
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      /Mode: interactive \(set by Boss \(id U_BOSS\)\)/,
    );
  });

  it("in a DM, its owner approves their own plan", async () => {
    const dm = thread("1700000000.000100", "D1");
    const h = await makeHarness({
      steps: [toolStep(["p1", "propose_plan", { plan: "1. write a note" }]), textStep("on it")],
    });
    await h.manager.command(dm, ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan the change", { target: dm }));
    const out = h.outputs.for(dm);
    const card = await h.outputs.until(() => out.latestCards.find((c) => c.kind === "plan"), "plan card");
    expect(card.blocks.filter((b) => b.kind === "text")).toEqual([{ kind: "text", text: "1. write a note" }]);
    expect(await pressCard(h, card, "plan_interactive", ANA)).toMatchObject({ status: "accepted" });
    await h.manager.idle();
    expect(await h.manager.command(dm, ANA, "status", [])).toMatch(
      /Mode: interactive \(set by Ana \(id U_ANA\)\)/,
    );
  });

  it("a reply from the requester rejects the plan with that feedback", async () => {
    const h = await makeHarness({
      steps: [toolStep(["p1", "propose_plan", { plan: "1. do it" }]), textStep("revising")],
    });
    await h.manager.command(thread(), ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan the change"));
    const card = await planCardOf(h);
    expect((await h.manager.receive(message("also add tests"))).status).toBe("answered");
    await h.manager.idle();
    expect(outcomeLine(h.outputs.for(thread()).card(card.pendingId))).toBe(
      "Rejected by Ana (id U_ANA): also add tests",
    );
    const result = h.provider.lastRequest.messages.find((m) => m.role === "tool");
    expect(result).toMatchObject({ content: planRejected("also add tests") });
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/Mode: plan/);
  });

  it("a revision typed with files attached brings the files to the turn, as a typed answer's do", async () => {
    const h = await makeHarness({
      steps: [toolStep(["p1", "propose_plan", { plan: "1. restyle the page" }]), textStep("revising")],
    });
    await h.manager.command(thread(), ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan the restyle"));
    await planCardOf(h);
    const withFiles = {
      ...message("match this mock-up"),
      files: [{ path: "inbox/mockup.png", name: "mockup.png", bytes: 2048, mediaType: "image/png" }],
      attachments: [
        {
          kind: "file-text" as const,
          name: "notes.txt",
          path: "inbox/notes.txt",
          source: "text" as const,
          about: "a text file",
          text: "Use the brand blue",
        },
      ],
    };
    expect((await h.manager.receive(withFiles)).status).toBe("answered");
    await h.manager.idle();
    const sent = h.provider.lastRequest.messages;
    const at = sent.findIndex((m) => m.role === "tool" && m.tool_call_id === "p1");
    expect(sent[at]).toMatchObject({ content: planRejected("match this mock-up") });
    // The files follow the tool result, shown as a person's message's files are.
    expect(sent[at + 1]?.role).toBe("user");
    expect(JSON.stringify(sent[at + 1])).toContain("inbox/mockup.png");
    expect(JSON.stringify(sent[at + 1])).toContain("Use the brand blue");
    const result = (await storedInThread(h)).find((m) => m.role === "tool" && m.tool_call_id === "p1");
    expect(result?.role === "tool" && result.attachments?.map((a) => a.kind)).toEqual([
      "saved-file",
      "file-text",
    ]);
  });

  it("a plan whose card cannot be posted answers propose_plan with an error and the turn completes", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["p1", "propose_plan", { plan: "1. write a note" }]),
        textStep("The plan: 1. write a note. OK?"),
      ],
    });
    let refused: string | undefined;
    h.outputs.onPostCard = async (card) => {
      if (card.kind !== "plan") return;
      refused = card.pendingId;
      throw new Error("Bad Request: reply markup is too long");
    };
    await h.manager.command(thread(), ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan the change"));
    await h.manager.idle();
    expect((await new PendingStore(h.store).get(refused ?? ""))?.decision?.action).toBe("not_shown");
    const result = h.provider.requests
      .flatMap((r) => r.messages)
      .find((m) => m.role === "tool" && m.tool_call_id === "p1") as { content: string } | undefined;
    expect(result?.content).toMatch(
      /plan card could not be shown to the person .*nobody can approve the plan/,
    );
    const done = h.outputs.for(thread()).closedTurns[0]?.events.find((e) => e.type === "turn-completed");
    expect(done?.type === "turn-completed" && [done.status, done.finalText]).toEqual([
      "completed",
      "The plan: 1. write a note. OK?",
    ]);
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/Mode: plan/);
    h.provider.assertAllConsumed();
  });
});
