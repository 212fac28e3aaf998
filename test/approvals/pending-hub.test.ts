/**
 * The hub without a host: a press resolves into a result plus, when no turn in this process waits
 * for the item, the parked turn to resume; the parked state is read only then; expiry timers are
 * the caller's, and an expiry says whether a turn here took it.
 */
import pino from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { type ParkedTurn, parkTurn } from "../../src/approvals/parked-turn.js";
import { ApprovalService } from "../../src/approvals/approval-service.js";
import { LOOSEN_REFUSAL, loosenRefusal, whoMayDecide } from "../../src/approvals/authorisation.js";
import { PendingHub } from "../../src/approvals/pending-hub.js";
import type { AskContext, ExpirySchedule } from "../../src/approvals/pending-hub-types.js";
import type { PendingApproval, PendingPlan, PendingQuestion } from "../../src/approvals/pending-item.js";
import { PendingStore } from "../../src/approvals/pending-store.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { tempDir } from "../sessions/helpers/harness.js";
import { cardPress } from "../support/card-press.js";
import { RecordingOutputs } from "../support/recording-output.js";

const target = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" };
const ana = { platform: "slack", userId: "U_ANA", name: "Ana" };
const history = (text: string): ConversationMessage[] => [
  { role: "user", content: "write" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "c1", type: "function", function: { name: "write_note", arguments: JSON.stringify({ text }) } },
    ],
  },
];
const marker = {
  turnId: "t1",
  request: { prompt: "write", messages: [] },
  startedAt: "2026-01-02T03:04:00.000Z",
};
const parkedAt = (text: string): ParkedTurn => parkTurn("s1", marker, history(text));

class RecordingTimers implements ExpirySchedule {
  readonly armed = new Set<string>();
  arm(id: string): void {
    this.armed.add(id);
  }
  clear(id: string): void {
    this.armed.delete(id);
  }
  clearAll(): void {
    this.armed.clear();
  }
}

describe("PendingHub", () => {
  let store: Store;
  let outputs: RecordingOutputs;

  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: tempDir() });
    outputs = new RecordingOutputs();
  });

  function hub(timers = new RecordingTimers(), now = () => new Date()) {
    return new PendingHub({
      store: new PendingStore(store),
      outputFor: outputs.factory,
      deliveries: { record: async () => undefined },
      timers,
      config: { approvers: [], perChannel: {}, ttlMs: 60_000 },
      logger: pino({ level: "silent" }),
      now,
    });
  }

  /** Raise an approval for c1 in `h` and wait for its card; the turn's wait is returned too. */
  async function raise(h: PendingHub, signal: AbortSignal) {
    const context: AskContext = { sessionId: "s1", target, requester: ana, parked: parkedAt("hi") };
    const build = (argsHash: string): PendingApproval => ({
      ...h.base(context, "c1", argsHash),
      kind: "approval",
      tool: "write_note",
      argSummary: "write_note hi",
      reason: "writes",
      alwaysOptions: [],
    });
    const asked = { tool: "write_note", args: { text: "hi" } };
    const settled = h.obtain("approval", context, "c1", asked, build, signal);
    const out = outputs.for(target);
    const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "card");
    return { settled, pendingId: card.pendingId };
  }

  const press = (pendingId: string, action = "once") =>
    cardPress(target, pendingId, action, { id: "U_ANA", name: "Ana" });

  it("hands a press to the turn waiting here, without reading the parked state", async () => {
    const h = hub();
    const { settled, pendingId } = await raise(h, new AbortController().signal);
    const lookups: string[] = [];
    const pressed = await h.press(press(pendingId), async (id) => {
      lookups.push(id);
      return undefined;
    });
    expect(pressed).toEqual({ result: expect.objectContaining({ status: "accepted" }), resume: undefined });
    expect(lookups).toEqual([]);
    expect((await settled).decision?.action).toBe("once");
  });

  it("returns the parked turn to resume when no turn in this process waits (another process, a restart)", async () => {
    const first = hub();
    const { pendingId } = await raise(first, new AbortController().signal);
    const second = hub();
    const parked = parkedAt("hi");
    const lookups: string[] = [];
    const pressed = await second.press(press(pendingId), async (id) => {
      lookups.push(id);
      return parked;
    });
    expect(pressed.result.status).toBe("accepted");
    expect(pressed.resume).toBe(parked);
    expect(lookups).toEqual(["s1", "s1"]);
  });

  it("refuses a press whose parked turn waits for other arguments, and resumes nothing", async () => {
    const first = hub();
    const { pendingId } = await raise(first, new AbortController().signal);
    const pressed = await hub().press(press(pendingId), async () => parkedAt("something else"));
    expect(pressed.result).toMatchObject({
      status: "invalid",
      message: expect.stringMatching(/out of date/),
    });
    expect(pressed.resume).toBeUndefined();
  });

  it("arms the caller's timer and says whether an expiry was taken by a turn here", async () => {
    const timers = new RecordingTimers();
    const h = hub(timers);
    const { settled, pendingId } = await raise(h, new AbortController().signal);
    expect([...timers.armed]).toEqual([pendingId]);
    const expired = await h.expire(pendingId);
    expect(expired).toMatchObject({ claimed: true, item: { status: "expired" } });
    expect((await settled).status).toBe("expired");
    expect(timers.armed.size).toBe(0);
    expect(await h.expire(pendingId)).toBeUndefined();
  });

  it("after a restart, an item expired while down names its session for resumption", async () => {
    const first = hub();
    const { pendingId } = await raise(first, new AbortController().signal);
    const later = hub(new RecordingTimers(), () => new Date(Date.now() + 120_000));
    expect([...(await later.start())]).toEqual(["s1"]);
    expect((await new PendingStore(store).get(pendingId))?.status).toBe("expired");
  });

  it("after a restart, an open item whose record cannot be read is left as it is; the start goes on", async () => {
    const { pendingId } = await raise(hub(), new AbortController().signal);
    // Another session's item, open and past its expiry, in a newer version's record (or a corrupt
    // one): expiring it read it again and failed the start.
    const approvals = store.space("approvals");
    const bad = { id: "bad", kind: "approval", sessionId: "s2", expiresAt: new Date().toISOString() };
    const open = (await approvals.get<Record<string, unknown>>("open")) ?? {};
    await approvals.set("open", { bad, ...open });
    await approvals.set("item:bad", { v: 999, kind: "pending-item", data: {} });
    const later = hub(new RecordingTimers(), () => new Date(Date.now() + 120_000));
    expect([...(await later.start())]).toEqual(["s1"]);
    expect((await new PendingStore(store).get(pendingId))?.status).toBe("expired");
    expect((await new PendingStore(store).openItems()).map((e) => e.id)).toEqual(["bad"]);
  });

  it("a press on an item whose record cannot be read is refused as such, not as an item that is gone", async () => {
    const { pendingId } = await raise(hub(), new AbortController().signal);
    await store.space("approvals").set(`item:${pendingId}`, { v: 999, kind: "pending-item", data: {} });
    const pressed = await hub().press(press(pendingId), async () => parkedAt("hi"));
    expect(pressed.result).toMatchObject({
      status: "invalid",
      message: expect.stringMatching(/cannot be read/),
    });
    expect(pressed.resume).toBeUndefined();
  });

  // A press or typed answer that comes after the expiry time, before any timer here expired the
  // item, expires it itself: like a timer's expiry it hands back the parked turn when no turn in
  // this process waits, or the turn stays parked at a closed card (a later timer finds it settled).
  it("a press after the expiry time expires the item and hands back the parked turn", async () => {
    const { pendingId } = await raise(hub(), new AbortController().signal);
    const later = hub(new RecordingTimers(), () => new Date(Date.now() + 120_000));
    const parked = parkedAt("hi");
    const pressed = await later.press(press(pendingId), async () => parked);
    expect(pressed.result.status).toBe("expired");
    expect(pressed.resume).toBe(parked);
    expect(await later.expire(pendingId)).toBeUndefined();
  });

  /** Ask c1 with `options` in `h` (built as stored, past ask_user's schema) and wait for its card; the turn parked at it. */
  async function ask(h: PendingHub, options: readonly string[]): Promise<ParkedTurn> {
    const asked = parkTurn("s1", marker, [
      { role: "user", content: "ask" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "ask_user", arguments: "{}" } }],
      },
    ]);
    const context: AskContext = { sessionId: "s1", target, requester: ana, parked: asked };
    const build = (argsHash: string): PendingQuestion => ({
      ...h.base(context, "c1", argsHash),
      kind: "question",
      questions: [{ id: "q1", question: "Which?", options: [...options] }],
      answers: {},
    });
    void h.obtain(
      "question",
      context,
      "c1",
      { tool: "ask_user", args: {} },
      build,
      new AbortController().signal,
    );
    const out = outputs.for(target);
    await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "card");
    return asked;
  }

  it("a typed answer after the expiry time expires the question, is not consumed, and hands back the turn", async () => {
    const asked = await ask(hub(), ["a", "b"]);
    const later = hub(new RecordingTimers(), () => new Date(Date.now() + 120_000));
    const reply = { platform: "slack", user: { id: "U_ANA", name: "Ana" }, text: "a", files: [] };
    expect(await later.answerText(async () => asked, "s1", reply, ["k1"])).toEqual({
      result: undefined,
      resume: asked,
    });
  });

  it("of two messages typed at once to a question, the one whose answer came second is not consumed (it is handled as any other message)", async () => {
    const asked = await ask(hub(), ["a", "b"]);
    const typed = (text: string) => ({
      platform: "slack",
      user: { id: "U_ANA", name: "Ana" },
      text,
      files: [],
    });
    const parkedOf = async () => asked;
    // Taken by two processes at once: before, both read "answered" and the second message vanished.
    const results = await Promise.all([
      hub().answerText(parkedOf, "s1", typed("a"), ["k1"]),
      hub().answerText(parkedOf, "s1", typed("and add tests too"), ["k2"]),
    ]);
    expect(results.map((r) => r.result)).toContain(undefined);
    expect(results.map((r) => r.result)).toContain("answered");
    expect(await new PendingStore(store).openItems("s1")).toEqual([]);
  });

  it("one typed message delivered to two processes at once answers the question once, and is a redelivery on the other", async () => {
    const asked = await ask(hub(), ["a", "b"]);
    const typed = { platform: "slack", user: { id: "U_ANA", name: "Ana" }, text: "b", files: [] };
    const twice = await Promise.all([
      hub().answerText(async () => asked, "s1", typed, ["k1"]),
      hub().answerText(async () => asked, "s1", typed, ["k1"]),
    ]);
    expect(twice.map((r) => r.result).sort()).toEqual(["answered", "redelivered"]);
  });

  it("a typed word is an option's answer only while the question is open and its call still waits; 'stop' never is", async () => {
    // A question stored before ask_user refused command words as options (or a model's, however made).
    const asked = await ask(hub(), ["stop", "go on"]);
    const typed = (text: string) => ({ platform: "slack", user: { id: "U_ANA", name: "Ana" }, text });
    const elsewhere = hub();
    expect(await elsewhere.offersOption(async () => asked, "s1", typed(" Go  on"))).toBe(true);
    // The brake: a typed stop always stops the turn.
    expect(await elsewhere.offersOption(async () => asked, "s1", typed("STOP"))).toBe(false);
    // A stale question swallows nothing: its call no longer waits, or it is past its expiry.
    expect(await elsewhere.offersOption(async () => parkedAt("hi"), "s1", typed("go on"))).toBe(false);
    const later = hub(new RecordingTimers(), () => new Date(Date.now() + 120_000));
    expect(await later.offersOption(async () => asked, "s1", typed("go on"))).toBe(false);
    // Asking changes nothing: the expiry is left to the timer or the answer that settles it.
    const [open] = await new PendingStore(store).openItems("s1");
    expect((await new PendingStore(store).get(open?.id ?? ""))?.status).toBe("pending");
  });

  it("a session without a starter is loosened by configured approvers only, never by the turn's requester", () => {
    // A record from before starters were kept, whose history names none (sessions/withStarter).
    const ben = { platform: "slack", userId: "U_BEN", name: "Ben" };
    const ownerless: AskContext = { sessionId: "s1", target, requester: ben, parked: parkedAt("hi") };
    const card = (h: PendingHub) => ({ kind: "approval" as const, ...h.base(ownerless, "c1", "h") });
    expect(card(hub()).mayLoosen).toEqual([]);
    expect(loosenRefusal(card(hub()), "always_tool", "slack", "U_BEN")).toBe(LOOSEN_REFUSAL);
    expect(loosenRefusal(card(hub()), "once", "slack", "U_BEN")).toBeUndefined();
    const withApprover = new PendingHub({
      store: new PendingStore(store),
      outputFor: outputs.factory,
      deliveries: { record: async () => undefined },
      timers: new RecordingTimers(),
      config: { approvers: ["slack:U_CY"], perChannel: {}, ttlMs: 60_000 },
      logger: pino({ level: "silent" }),
      now: () => new Date(),
    });
    expect(card(withApprover).mayLoosen).toEqual(["slack:U_CY"]);
    expect(loosenRefusal(card(withApprover), "always_tool", "slack", "U_CY")).toBeUndefined();
    // With a starter, as before: in a shared thread without approvers, the starter.
    expect(hub().base({ ...ownerless, startedBy: ana }, "c1", "h").mayLoosen).toEqual(["slack:U_ANA"]);
  });

  it("an approval nobody may decide (a steering change without an approver) is refused at once: no card, no open item", async () => {
    const h = hub();
    const dm = { ...target, channel: "D1" };
    const context: AskContext = {
      sessionId: "s1",
      target: dm,
      requester: ana,
      startedBy: ana,
      parked: parkedAt("hi"),
    };
    const approve = new ApprovalService(h).approverFor(() => context);
    const request = {
      callId: "c1",
      tool: "write_note",
      args: { text: "hi" },
      reason: "writes AGENTS.md",
      category: "write" as const,
      provenance: { kind: "user" as const },
      alwaysOptions: [],
      preview: { summary: "write_note hi" },
      onlyLooseners: true,
    };
    await expect(approve(request, new AbortController().signal)).rejects.toThrow(
      /^Nobody may decide this, .*none is configured for slack: nobody can approve it\. The operator lists approvers in `approvals\.approvers`/,
    );
    expect(outputs.for(dm).cards).toEqual([]);
    expect(await new PendingStore(store).openItems()).toEqual([]);
    expect(await h.hasOpenItems("s1")).toBe(false);
    expect(await approve.asked?.("c1")).toBe(false);
  });

  it("a plan its requester may not approve: whoever started the session approves it; anyone else gets the card's words", async () => {
    // A shared thread without configured approvers: Ana started the session, Ben's turn proposes.
    const h = hub();
    const ben = { platform: "slack", userId: "U_BEN", name: "Ben" };
    const proposed = parkTurn("s1", marker, [
      { role: "user", content: "plan" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "p1", type: "function", function: { name: "propose_plan", arguments: "{}" } }],
      },
    ]);
    const context: AskContext = { sessionId: "s1", target, requester: ben, startedBy: ana, parked: proposed };
    // Built as the plan approver builds it, so its allowed list is the one people's presses meet.
    const propose = new ApprovalService(h).planApproverFor(() => context);
    const decided = propose(
      { callId: "p1", plan: "1. do it", provenance: { kind: "user" } },
      new AbortController().signal,
    );
    const out = outputs.for(target);
    const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "card");
    const note = whoMayDecide((await new PendingStore(store).get(card.pendingId)) as PendingPlan).note;
    expect(note).toMatch(
      /whoever started the session\) can approve it\. Ben \(id U_BEN\) can still reject it/,
    );
    expect(card.blocks).toContainEqual({ kind: "text", text: note });
    const by = (id: string, name: string, action = "plan_interactive") =>
      cardPress(target, card.pendingId, action, { id, name });
    const none = async () => undefined;
    expect((await h.press(by("U_CY", "Cy"), none)).result).toEqual({ status: "not_allowed", message: note });
    expect((await h.press(by("U_BEN", "Ben"), none)).result).toEqual({
      status: "not_allowed",
      message: note,
    });
    expect((await h.press(by("U_ANA", "Ana"), none)).result.status).toBe("accepted");
    expect(await decided).toMatchObject({ approved: true, mode: "interactive", by: { id: "U_ANA" } });
  });
});
