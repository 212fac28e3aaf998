import { describe, expect, it } from "vitest";
import { approvalCard, planCard } from "../../src/approvals/approval-card.js";
import {
  steeringDecidersFor,
  allowedApproversFor,
  approvalsConfigSchema,
  decidersOf,
  loosenersFor,
  mayDecide,
  whoMayDecide,
  withLiveDeciders,
} from "../../src/approvals/authorisation.js";
import type { PendingApproval, PendingPlan, PendingQuestion } from "../../src/approvals/pending-item.js";
import { targetOf, type TelegramMessage } from "../../src/channels/telegram/telegram-inbound.js";
import { pendingFields } from "./pending-fields.js";

const target = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" };

describe("approval authorisation", () => {
  it("allows the requester, global approvers and this channel's approvers", () => {
    const allowed = allowedApproversFor(
      {
        approvers: ["slack:U_BOSS", "telegram:42"],
        perChannel: { "slack:C1": ["slack:U_LEAD"], "slack:C2": ["slack:U_X"] },
      },
      target,
      "U_ANA",
    );
    expect(allowed).toEqual(["slack:U_ANA", "slack:U_BOSS", "telegram:42", "slack:U_LEAD"]);
    expect(mayDecide(allowed, "slack", "U_LEAD")).toBe(true);
    expect(mayDecide(allowed, "slack", "U_X")).toBe(false);
    expect(mayDecide(allowed, "telegram", "U_ANA")).toBe(false);
    expect(mayDecide(allowed, "slack", "42")).toBe(false);
  });

  it("finds a migrated Telegram group's per-channel approvers under either of its ids", () => {
    const OLD = -4567; // the basic group, whose session the supergroup continues
    const NEW = -1001234567890; // the supergroup's own id, as Telegram shows it now
    const message = {
      message_id: 10,
      date: 1,
      chat: { id: NEW, type: "supergroup" },
      from: { id: 42, is_bot: false, first_name: "Starter" },
      text: "hi",
    } as TelegramMessage;
    const migrated = targetOf(message, OLD);
    expect(migrated.channel).toBe(String(OLD));
    for (const key of [NEW, OLD]) {
      const config = { approvers: [], perChannel: { [`telegram:${key}`]: ["telegram:7777"] } };
      expect(mayDecide(allowedApproversFor(config, migrated, "42"), "telegram", "7777")).toBe(true);
      // The starter may not loosen the group's session while an approver is configured for it.
      expect(loosenersFor(config, migrated, "42")).toEqual(["telegram:7777"]);
    }
    // Another chat's approvers never apply; a chat that never migrated has one id only.
    const elsewhere = { approvers: [], perChannel: { "telegram:-999": ["telegram:7777"] } };
    expect(allowedApproversFor(elsewhere, migrated, "42")).toEqual(["telegram:42"]);
    const plain = targetOf({ ...message, chat: { id: NEW, type: "supergroup" } });
    expect(plain.extra).not.toHaveProperty("alsoKnownAs");
    expect(
      loosenersFor({ approvers: [], perChannel: { [`telegram:${OLD}`]: ["telegram:7777"] } }, plain, "42"),
    ).toEqual(["telegram:42"]);
  });

  it("validates configured ids (COWORKER_APPROVERS reaches the same schema: see load-config.test.ts)", () => {
    expect(approvalsConfigSchema.safeParse({ approvers: ["U1"], ttlMs: 1 }).success).toBe(false);
    expect(approvalsConfigSchema.safeParse({ approvers: [], perChannel: { C1: [] }, ttlMs: 1 }).success).toBe(
      false,
    );
    expect(approvalsConfigSchema.safeParse({ approvers: ["slack:U1"], ttlMs: 0 }).success).toBe(false);
  });
});

describe("who may decide an item", () => {
  const common = pendingFields({
    id: "p1",
    target,
    requester: { platform: "slack", userId: "U_BEN", name: "Ben" },
  });
  const approval: PendingApproval = {
    ...common,
    kind: "approval",
    tool: "write_note",
    argSummary: "write_note x",
    reason: "writes a note",
    alwaysOptions: [],
  };
  // In a shared thread without configured approvers, Ana started the session and Ben asks.
  const plan: PendingPlan = { ...common, kind: "plan", plan: "1. do it", mayLoosen: ["slack:U_ANA"] };
  const question: PendingQuestion = {
    ...common,
    kind: "question",
    questions: [{ id: "q1", question: "Which?", options: ["a", "b"] }],
    answers: {},
  };
  const requesterOrApprover = "Only Ben (id U_BEN) or a configured approver can decide this.";
  /** The text blocks of a card besides its first (the call or the plan). */
  const noteOf = (card: { blocks: readonly { kind: string; text?: string }[] }) =>
    card.blocks.filter((b) => b.kind === "text").slice(1)[0]?.text;

  it("the requester or an approver: no note on the card, the refusal says so", () => {
    for (const item of [
      approval,
      question,
      { ...plan, mayLoosen: ["slack:U_BEN"] },
      { ...plan, mayLoosen: undefined },
    ])
      expect(whoMayDecide(item)).toEqual({ note: undefined, refusal: requesterOrApprover });
    expect(noteOf(approvalCard(approval))).toBeUndefined();
    expect(decidersOf(approval)).toEqual(["slack:U_BEN"]);
  });

  it("a call that steers every later session: the card and the refusal say the same", () => {
    const steering: PendingApproval = { ...approval, allowedApprovers: ["slack:U_BOSS"] };
    const { note, refusal } = whoMayDecide(steering);
    expect(note).toMatch(
      /^This changes what steers every later session, in every conversation, so only a configured approver/,
    );
    expect(refusal).toBe(note);
    expect(noteOf(approvalCard(steering))).toBe(note);
  });

  it("a plan its requester may not approve: the card and the refusal say the same, and whoever may approve it decides", () => {
    const { note, refusal } = whoMayDecide(plan);
    expect(note).toMatch(
      /^Approving this plan takes the session out of read-only plan mode, so only a configured approver \(or, without one, whoever started the session\) can approve it\. Ben \(id U_BEN\) can still reject it/,
    );
    expect(refusal).toBe(note);
    expect(noteOf(planCard(plan))).toBe(note);
    // Ana, who started the session, is not on the allowed list (Ben and the approvers) yet approves.
    expect(decidersOf(plan)).toEqual(["slack:U_BEN", "slack:U_ANA"]);
    expect(decidersOf({ ...plan, mayLoosen: undefined })).toEqual(["slack:U_BEN"]);
  });
});

describe("who may decide, when the requester's name is markdown", () => {
  it("names them by id in the refusal, and as plain text in the card's note", () => {
    const requester = {
      platform: "slack",
      userId: "U0MALLORY",
      name: "[Approve here](https://evil.example/a)",
    };
    const plan: PendingPlan = {
      ...pendingFields({ requester }),
      kind: "plan",
      plan: "1. edit a",
      mayLoosen: ["slack:U_BOSS"],
    };
    expect(whoMayDecide({ ...plan, mayLoosen: undefined }).refusal).toBe(
      "Only [Approve here](https://evil.example/a) (id U0MALLORY) or a configured approver can decide this.",
    );
    const note = planCard(plan).blocks.find((b) => b.kind === "text" && b.text.includes("can still reject"));
    expect(note).toMatchObject({
      text: expect.stringContaining(
        "\\[Approve here\\]\\(https\\:\\/\\/evil\\.example\\/a\\) (id U0MALLORY) can still reject it",
      ),
    });
  });
});

describe("steeringDecidersFor", () => {
  it("is the platform's configured approvers when there are any", () => {
    const config = { approvers: ["slack:U_BOSS", "telegram:42"] };
    expect(steeringDecidersFor(config, "slack", ["slack:U_ANA"])).toEqual(["slack:U_BOSS"]);
  });

  it("is nobody without a configured approver: a DM's owner may not approve their own AGENTS.md edit", () => {
    expect(steeringDecidersFor({ approvers: [] }, "slack", ["slack:U_ANA"])).toEqual([]);
    expect(steeringDecidersFor({ approvers: ["slack:U_BOSS"] }, "telegram", ["telegram:42"])).toEqual([]);
    expect(
      steeringDecidersFor({ approvers: [], unchecked: ["console"] }, "console", ["console:local"]),
    ).toEqual([]);
  });

  it("leaves the console's person running alone, who owns the deployment, to decide", () => {
    expect(steeringDecidersFor({ approvers: ["slack:U_BOSS"] }, "console", ["console:local"])).toEqual([
      "console:local",
    ]);
  });

  it("tells everyone, on the card and when refused, to configure approvals.approvers when nobody may decide", () => {
    const deciders = steeringDecidersFor({ approvers: [] }, "slack", ["slack:U_ANA"]);
    const item: PendingApproval = {
      ...pendingFields({ id: "p2", target, requester: { platform: "slack", userId: "U_ANA", name: "Ana" } }),
      kind: "approval",
      tool: "edit_file",
      argSummary: "edit_file AGENTS.md",
      reason: "steers every session",
      alwaysOptions: [],
      allowedApprovers: deciders,
    };
    const { note, refusal } = whoMayDecide(item);
    expect(note).toContain("none is configured for slack: nobody can approve it");
    expect(note).toContain("`approvals.approvers`");
    expect(refusal).toBe(note);
  });
});

describe("withLiveDeciders: who may decide an item under the configuration of the day", () => {
  const ana = { platform: "slack", userId: "U_ANA", name: "Ana" };
  const ben = { platform: "slack", userId: "U_BEN", name: "Ben" };
  const raisedUnder = { approvers: ["slack:U_BOSS"], perChannel: { "slack:C1": ["slack:U_LEAD"] } };
  const approval = (overrides: Partial<PendingApproval> = {}): PendingApproval => ({
    ...pendingFields({ target, requester: ana }),
    kind: "approval",
    tool: "write_note",
    argSummary: "write_note",
    reason: "r",
    alwaysOptions: [],
    allowedApprovers: allowedApproversFor(raisedUnder, target, "U_ANA"),
    mayLoosen: loosenersFor(raisedUnder, target, "U_ANA"),
    startedBy: ana,
    ...overrides,
  });

  it("drops approvers no longer configured, keeps the requester and those still configured", () => {
    const live = withLiveDeciders(approval(), {
      approvers: [],
      perChannel: { "slack:C1": ["slack:U_LEAD"] },
    });
    expect(live.allowedApprovers).toEqual(["slack:U_ANA", "slack:U_LEAD"]);
    expect(live.mayLoosen).toEqual(["slack:U_LEAD"]);
    const none = withLiveDeciders(approval(), { approvers: [] });
    expect(none.allowedApprovers).toEqual(["slack:U_ANA"]);
    // No approver left for the thread: nobody raised under one loosens it; a list that named its
    // starter (raised without one) keeps them.
    expect(none.mayLoosen).toEqual([]);
    expect(withLiveDeciders(approval({ mayLoosen: ["slack:U_ANA"] }), { approvers: [] }).mayLoosen).toEqual([
      "slack:U_ANA",
    ]);
  });

  it("adds nobody: an approver configured since, or a steering change's requester, stays off", () => {
    const live = withLiveDeciders(approval(), { approvers: ["slack:U_BOSS", "slack:U_NEW"] });
    expect(live.allowedApprovers).toEqual(["slack:U_ANA", "slack:U_BOSS"]);
    const steering = approval({ allowedApprovers: ["slack:U_BOSS"] });
    expect(withLiveDeciders(steering, { approvers: ["slack:U_BOSS"] }).allowedApprovers).toEqual([
      "slack:U_BOSS",
    ]);
    expect(withLiveDeciders(steering, { approvers: [] }).allowedApprovers).toEqual([]);
  });

  it("keeps a plan's starter, who is not its requester, while no approver is configured for the thread", () => {
    const base = { approvers: [] };
    const plan: PendingPlan = {
      ...pendingFields({ target, requester: ana }),
      kind: "plan",
      plan: "1. do it",
      mayLoosen: loosenersFor(base, target, "U_BEN"),
      startedBy: ben,
    };
    const raised = { ...plan, allowedApprovers: decidersOf(plan) };
    expect(withLiveDeciders(raised, base).allowedApprovers).toEqual(["slack:U_ANA", "slack:U_BEN"]);
    // Once an approver is configured for the thread, the starter no longer loosens it.
    const live = withLiveDeciders(raised, { approvers: ["slack:U_BOSS"] });
    expect(live.allowedApprovers).toEqual(["slack:U_ANA"]);
    expect(live.mayLoosen).toEqual([]);
  });

  it("takes an older item's requester as its starter when they could loosen it", () => {
    const { startedBy: _, ...older } = approval({ mayLoosen: ["slack:U_ANA"] });
    expect(withLiveDeciders(older, { approvers: [] }).mayLoosen).toEqual(["slack:U_ANA"]);
    const dm = { platform: "slack", workspace: "T1", channel: "D1" };
    const { startedBy: __, ...inDm } = approval({ target: dm, mayLoosen: ["slack:U_ANA"] });
    expect(withLiveDeciders(inDm, { approvers: ["slack:U_BOSS"] }).mayLoosen).toEqual(["slack:U_ANA"]);
  });
});
