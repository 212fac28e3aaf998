import { describe, expect, it } from "vitest";
import { PendingStore } from "../../src/approvals/pending-store.js";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import {
  ANA,
  BEN,
  BOSS,
  type Harness,
  makeHarness,
  message,
  pressCard,
  suspendAtApproval,
  thread,
} from "./helpers/harness.js";
import { LOOSEN_REFUSAL } from "../../src/approvals/authorisation.js";
import { markdownToMrkdwn } from "../../src/channels/slack/slack-markdown.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/telegram-html.js";
import { outcomeLine } from "../support/card-outcome.js";
import { cardPress } from "../support/card-press.js";

describe("approvals through the session manager", () => {
  it("persists the pending approval before posting its card, then runs the approved call once", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "hi" }]), textStep("done")],
    });
    const pending = new PendingStore(h.store);
    const seenAtPost: string[] = [];
    h.outputs.onPostCard = async (card) => {
      const item = await pending.get(card.pendingId);
      seenAtPost.push(`${item?.status}:${item?.callId}`);
    };
    const card = await suspendAtApproval(h);
    expect(seenAtPost).toEqual(["pending:c1"]);
    expect(card.pendingId).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(card.buttons.map((b) => [b.action, b.style])).toEqual([
      ["once", "primary"],
      ["always_tool", "default"],
      ["deny", "danger"],
    ]);
    expect(h.runs.count("c1")).toBe(0);

    expect(await pressCard(h, card)).toMatchObject({ status: "accepted" });
    await h.manager.idle();
    const out = h.outputs.for(thread());
    expect(h.runs.count("c1")).toBe(1);
    expect(out.card(card.pendingId)?.buttons).toEqual([]);
    expect(outcomeLine(out.card(card.pendingId))).toBe("Approved by Ana (id U_ANA)");
    const last = out.closedTurns.at(-1)!;
    expect(last.events.at(-1)).toMatchObject({
      type: "turn-completed",
      status: "completed",
      finalText: "done",
    });
    h.provider.assertAllConsumed();
  });

  it("first press wins: a second press is told it is already decided and changes nothing", async () => {
    const h = await makeHarness({ steps: [toolStep(["c1", "write_note", { text: "x" }]), textStep("ok")] });
    const card = await suspendAtApproval(h);
    const [a, b] = await Promise.all([pressCard(h, card, "once", ANA), pressCard(h, card, "deny", BOSS)]);
    expect([a.status, b.status].sort()).toEqual(["accepted", "already_decided"]);
    await h.manager.idle();
    const again = await pressCard(h, card, "deny", ANA);
    expect(again.status).toBe("already_decided");
    const outcome = outcomeLine(h.outputs.for(thread()).card(card.pendingId));
    expect(h.runs.count("c1")).toBe(a.status === "accepted" ? 1 : 0);
    expect(outcome).toBe(
      a.status === "accepted" ? "Approved by Ana (id U_ANA)" : "Denied by Boss (id U_BOSS)",
    );
  });

  it("a call that steers every later session is decided, in a shared thread, by an approver and not by whoever asked", async () => {
    const h = await makeHarness({ steps: [toolStep(["c1", "steer_note", { text: "x" }]), textStep("ok")] });
    await h.manager.receive(message("steer x"));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(
      () => out.latestCards.find((c) => c.kind === "approval" && c.buttons.length > 0),
      "card",
    );
    const refused = await pressCard(h, card, "once", ANA);
    expect(refused).toMatchObject({
      status: "not_allowed",
      message: expect.stringMatching(/steers every later session/),
    });
    expect(h.runs.count("c1")).toBe(0);
    expect(await pressCard(h, card, "once", BOSS)).toMatchObject({ status: "accepted" });
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(1);
  });

  it("a call that steers every later session is decided by a configured approver, even in its requester's DM; without one, by nobody, and is refused at once", async () => {
    const dm = thread("1700000000.000100", "D1");
    const steer = async (harness: Harness) => {
      await harness.manager.receive(message("steer x", { target: dm }));
      const out = harness.outputs.for(dm);
      return harness.outputs.until(
        () => out.latestCards.find((c) => c.kind === "approval" && c.buttons.length > 0),
        "card",
      );
    };
    const h = await makeHarness({ steps: [toolStep(["c1", "steer_note", { text: "x" }]), textStep("ok")] });
    const card = await steer(h);
    const refused = await pressCard(h, card, "once", ANA);
    expect(refused.status).toBe("not_allowed");
    expect(refused.message).toMatch(/^This changes what steers every later session, in every conversation/);
    expect(await pressCard(h, card, "once", BOSS)).toMatchObject({ status: "accepted" });
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(1);

    // Without a configured approver nobody may decide it: no card, no wait until it expires — the
    // call is refused at once with why (the operator sets approvals.approvers), and the turn ends.
    const alone = await makeHarness({
      steps: [toolStep(["c2", "steer_note", { text: "x" }]), textStep("I wanted to steer.")],
      overrides: { approvals: { approvers: [], ttlMs: 3_600_000 } },
    });
    await alone.manager.receive(message("steer x", { target: dm }));
    await alone.manager.idle();
    expect(alone.runs.count("c2")).toBe(0);
    const out = alone.outputs.for(dm);
    expect(out.cards).toEqual([]);
    expect(await new PendingStore(alone.store).openItems()).toEqual([]);
    const result = alone.provider.requests
      .flatMap((r) => r.messages)
      .find((m) => m.role === "tool" && m.tool_call_id === "c2") as { content: string } | undefined;
    expect(result?.content).toMatch(
      /Nobody may decide this, .*none is configured for slack: nobody can approve it/,
    );
    expect(result?.content).toContain("`approvals.approvers`");
    const done = out.closedTurns[0]?.events.find((e) => e.type === "turn-completed");
    expect(done?.type === "turn-completed" && [done.status, done.finalText]).toEqual([
      "completed",
      "I wanted to steer.",
    ]);
    alone.provider.assertAllConsumed();
  });

  it("refuses a press by someone who is neither the requester nor an approver", async () => {
    const h = await makeHarness({ steps: [toolStep(["c1", "write_note", { text: "x" }]), textStep("ok")] });
    const card = await suspendAtApproval(h);
    const refused = await pressCard(h, card, "once", BEN);
    expect(refused.status).toBe("not_allowed");
    expect(refused.message).toMatch(/Only Ana \(id U_ANA\) or a configured approver/);
    // Same user id on another platform is someone else, too.
    const otherPlatform = await h.manager.press({
      kind: "card",
      platform: "telegram",
      pendingId: card.pendingId,
      action: "once",
      user: ANA,
      pressedIn: thread(),
    });
    expect(otherPlatform.status).toBe("not_allowed");
    expect(h.outputs.for(thread()).card(card.pendingId)?.buttons).toHaveLength(3);
    expect(h.runs.count("c1")).toBe(0);
    // A configured approver may decide.
    expect((await pressCard(h, card, "deny", BOSS)).status).toBe("accepted");
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(0);
    expect(outcomeLine(h.outputs.for(thread()).card(card.pendingId))).toBe("Denied by Boss (id U_BOSS)");
  });

  it("accepts per-channel approvers only in their channel", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "x" }]), textStep("ok")],
      overrides: {
        approvals: { approvers: [], perChannel: { "slack:C1": ["slack:U_BEN"] }, ttlMs: 3_600_000 },
      },
    });
    const card = await suspendAtApproval(h);
    expect((await pressCard(h, card, "once", BOSS)).status).toBe("not_allowed");
    expect((await pressCard(h, card, "once", BEN)).status).toBe("accepted");
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(1);
  });

  it("rejects a stale card whose call no longer matches the waiting call", async () => {
    const h = await makeHarness({ steps: [toolStep(["c1", "write_note", { text: "x" }]), textStep("ok")] });
    const card = await suspendAtApproval(h);
    // The stored item now describes different arguments than the call that waits.
    const space = h.store.space("approvals");
    const raw = await space.get<{ data: Record<string, unknown> }>(`item:${card.pendingId}`);
    await space.set(`item:${card.pendingId}`, { ...raw, data: { ...raw!.data, argsHash: "0".repeat(64) } });
    const stale = await pressCard(h, card, "once", ANA);
    expect(stale).toMatchObject({ status: "invalid", message: expect.stringMatching(/out of date/) });
    expect(h.runs.count("c1")).toBe(0);
    expect((await new PendingStore(h.store).get(card.pendingId))?.status).toBe("pending");
    await h.manager.command(thread(), ANA, "stop", []);
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(0);
  });

  it("rejects an action the card does not offer", async () => {
    const h = await makeHarness({ steps: [toolStep(["c1", "write_note", { text: "x" }]), textStep("ok")] });
    const card = await suspendAtApproval(h);
    expect((await pressCard(h, card, "always_domain", ANA)).status).toBe("invalid");
    expect((await pressCard(h, card, "q0:o0", ANA)).status).toBe("invalid");
    expect((await h.manager.press(cardPress(thread(), "nope", "once", ANA))).status).toBe("unknown");
    await pressCard(h, card, "deny", ANA);
    await h.manager.idle();
  });

  it("an expired approval resolves as deny and its card says so", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "x" }]), textStep("not done")],
      overrides: { approvals: { approvers: [], ttlMs: 30 } },
    });
    await h.manager.receive(message("write x"));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(() => out.cards[0]?.versions[0], "card");
    expect(card.buttons).toHaveLength(3);
    await h.outputs.until(() => out.card(card.pendingId)?.outcome, "expiry");
    await h.manager.idle();
    expect(out.card(card.pendingId)?.buttons).toEqual([]);
    expect(outcomeLine(out.card(card.pendingId))).toBe("Expired — no decision in time");
    expect(h.runs.count("c1")).toBe(0);
    expect((await pressCard(h, card)).status).toBe("expired");
    const request = h.provider.lastRequest;
    expect(request.messages.find((m) => m.role === "tool")).toMatchObject({
      content: TOOL_RESULT.deniedByUser,
    });
  });

  it("'always allow' stores a grant with the session, shown by status and revocable", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["c1", "write_note", { text: "one" }]),
        textStep("first"),
        toolStep(["c2", "write_note", { text: "two" }]),
        textStep("second"),
      ],
    });
    const card = await suspendAtApproval(h, "one");
    expect(card.buttons.find((b) => b.action === "always_tool")?.label).toBe("Always allow write_note");
    // In a shared thread with an approver configured, the requester may approve once but not always.
    expect(await pressCard(h, card, "always_tool", ANA)).toEqual({
      status: "not_allowed",
      message: LOOSEN_REFUSAL,
    });
    await pressCard(h, card, "always_tool", BOSS);
    await h.manager.idle();
    expect(outcomeLine(h.outputs.for(thread()).card(card.pendingId))).toBe(
      "Approved by Boss (id U_BOSS) — Always allow write_note",
    );
    // The grant names its giver with their user id, which no display name can fake.
    expect(await h.manager.command(thread(), ANA, "grants", [])).toBe(
      "1. always allow tool write_note (granted by Boss (id U_BOSS))",
    );
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      /Grants:\n1\. always allow tool write_note \(granted by Boss \(id U_BOSS\)\)/,
    );
    // The grant lets the next call run without a card.
    await h.manager.receive(message("write two"));
    await h.manager.idle();
    expect(h.runs.count("c2")).toBe(1);
    expect(h.outputs.for(thread()).cards).toHaveLength(1);
    expect(await h.manager.command(thread(), ANA, "grants", ["revoke", "1"])).toMatch(/Revoked grant 1/);
    expect(await h.manager.command(thread(), ANA, "grants", [])).toBe("No standing grants in this session.");
  });

  it("text fallback: 'approve <id>' and 'deny <id>' typed in the thread decide like buttons", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["c1", "write_note", { text: "a" }]),
        textStep("approved one"),
        toolStep(["c2", "write_note", { text: "b" }]),
        textStep("denied one"),
      ],
    });
    const first = await suspendAtApproval(h, "a");
    expect(first.footer).toContain(`approve ${first.pendingId}`);
    expect((await h.manager.receive(message(`approve ${first.pendingId}`, { user: BEN }))).status).toBe(
      "command",
    );
    const out = h.outputs.for(thread());
    expect(out.texts.at(-1)).toMatch(/Only Ana/);
    expect((await h.manager.receive(message(`approve ${first.pendingId}`))).status).toBe("command");
    await h.manager.idle();
    expect(markdownToMrkdwn(out.texts.at(-1) ?? "")).toBe("Approved by Ana (id U_ANA)");
    expect(h.runs.count("c1")).toBe(1);
    const second = await suspendAtApproval(h, "b");
    // A typed decision is answered as its card reads, not with a bare "Decided by".
    expect(markdownToMrkdwn(await h.manager.command(thread(), ANA, "deny", [second.pendingId]))).toBe(
      "Denied by Ana (id U_ANA)",
    );
    expect(markdownToMrkdwn(await h.manager.command(thread(), ANA, "approve", [second.pendingId]))).toBe(
      "Already decided: Denied by Ana (id U_ANA).",
    );
    await h.manager.idle();
    expect(h.runs.count("c2")).toBe(0);
    expect(outcomeLine(out.card(second.pendingId))).toBe("Denied by Ana (id U_ANA)");
  });

  it("a typed decision's reply names people as plain text: a name written as a link stays text", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "a" }]), textStep("approved one")],
    });
    const mallory = { id: "U0MALLORY", name: "[Approve](https://evil.example)" };
    const boss = { ...BOSS, name: "[Boss](https://evil.example)" };
    await h.manager.receive(message("write a", { user: mallory }));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(
      () => out.latestCards.find((c) => c.kind === "approval" && c.buttons.length > 0),
      "card",
    );
    const refusal = await h.manager.command(thread(), BEN, "approve", [card.pendingId]);
    const approved = await h.manager.command(thread(), boss, "approve", [card.pendingId]);
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(1);
    for (const [reply, shown] of [
      [
        refusal,
        "Only [Approve](https://evil.example) (id U0MALLORY) or a configured approver can decide this.",
      ],
      [approved, "Approved by [Boss](https://evil.example) (id U_BOSS)"],
    ] as const) {
      expect(markdownToMrkdwn(reply)).toBe(shown);
      expect(markdownToMrkdwn(reply)).not.toContain("<https");
      expect(markdownToTelegramHtml(reply)).not.toContain("<a ");
    }
  });

  it("a running call's re-authorised hop gets a card of its own, decided separately from the call's", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["c1", "hop_note", { text: "a", next: "b" }]),
        textStep("first"),
        toolStep(["c2", "hop_note", { text: "c", next: "d" }]),
        textStep("second"),
      ],
    });
    const out = h.outputs.for(thread());
    const openCards = () => out.latestCards.filter((c) => c.kind === "approval" && c.buttons.length > 0);
    for (const [text, hopAction, result] of [
      ["first", "once", "moved on to b"],
      ["second", "deny", "stopped before d"],
    ] as const) {
      await h.manager.receive(message(`hop ${text}`));
      const callCard = await h.outputs.until(() => openCards()[0], "call card");
      expect(await pressCard(h, callCard)).toMatchObject({ status: "accepted" });
      const hopCard = await h.outputs.until(
        () => openCards().find((c) => c.pendingId !== callCard.pendingId),
        "hop card",
      );
      expect(await pressCard(h, hopCard, hopAction)).toMatchObject({ status: "accepted" });
      await h.manager.idle();
      expect(h.provider.lastRequest.messages.filter((m) => m.role === "tool").at(-1)).toMatchObject({
        content: result,
      });
    }
  });

  it("an approval whose card cannot be posted does not run the call, answers it with an error and the turn completes", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "hi" }]), textStep("I wanted to write a note.")],
    });
    let refused: string | undefined;
    h.outputs.onPostCard = async (card) => {
      if (card.kind !== "approval") return;
      refused = card.pendingId;
      throw new Error("Bad Request: reply markup is too long");
    };
    await h.manager.receive(message("write hi"));
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(0);
    expect((await new PendingStore(h.store).get(refused ?? ""))?.decision?.action).toBe("not_shown");
    const result = h.provider.requests
      .flatMap((r) => r.messages)
      .find((m) => m.role === "tool" && m.tool_call_id === "c1") as { content: string } | undefined;
    expect(result?.content).toMatch(
      /approval card could not be shown to the person .*so this call did not run/,
    );
    const done = h.outputs.for(thread()).closedTurns[0]?.events.find((e) => e.type === "turn-completed");
    expect(done?.type === "turn-completed" && [done.status, done.finalText]).toEqual([
      "completed",
      "I wanted to write a note.",
    ]);
    h.provider.assertAllConsumed();
  });
});
