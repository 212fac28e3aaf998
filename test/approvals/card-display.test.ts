/**
 * outcomeOf: the one outcome line of a settled item, made without building its card, reads
 * exactly as the card's outcome line does, for every kind and every way of settling.
 */
import { describe, expect, it } from "vitest";
import { alreadyDecidedMessage, cardFor, outcomeOf } from "../../src/approvals/card-display.js";
import type { PendingItem } from "../../src/approvals/pending-item.js";
import { pendingFields } from "./pending-fields.js";
import { outcomeLine } from "../support/card-outcome.js";

const at = "2026-01-02T04:00:00.000Z";
const boss = { platform: "slack", userId: "U9", name: "Boss" };

const approval = {
  ...pendingFields(),
  kind: "approval" as const,
  tool: "run_command",
  argSummary: "run_command ls",
  reason: "runs a command",
  alwaysOptions: ["always_command" as const],
};
const plan = { ...pendingFields(), kind: "plan" as const, plan: "1. do it" };
const question = {
  ...pendingFields(),
  kind: "question" as const,
  questions: [
    { id: "a", question: "Which?", options: ["x", "y"] },
    { id: "b", question: "When?", options: ["now", "later"] },
  ],
  answers: { a: "x", b: "later" },
};

const items: PendingItem[] = [
  approval,
  { ...approval, status: "decided", decision: { action: "once", by: boss, at } },
  { ...approval, status: "decided", decision: { action: "always_command", by: boss, at } },
  { ...approval, status: "decided", decision: { action: "deny", by: boss, at } },
  { ...approval, status: "decided", decision: { action: "deny", at } },
  { ...approval, status: "expired", decision: { action: "expired", at } },
  { ...approval, status: "cancelled", decision: { action: "cancelled", at, note: "turn stopped" } },
  plan,
  { ...plan, status: "decided", decision: { action: "plan_reject", by: boss, at, note: "too broad" } },
  { ...plan, status: "decided", decision: { action: "plan_auto", by: boss, at } },
  { ...plan, status: "decided", decision: { action: "plan_interactive", by: boss, at } },
  { ...plan, status: "cancelled", decision: { action: "cancelled", at } },
  question,
  { ...question, status: "decided", decision: { action: "answered", by: boss, at } },
  { ...question, status: "decided", decision: { action: "answered", at } },
  { ...question, status: "expired", decision: { action: "expired", at } },
];

describe("outcomeOf", () => {
  it("reads as the card's outcome line for every kind and settlement", () => {
    for (const item of items) expect(outcomeOf(item)).toBe(outcomeLine(cardFor(item)));
    expect(outcomeOf(items[2] as PendingItem)).toBe("Approved by Boss (id U9) — Always allow this command");
    expect(outcomeOf(items[8] as PendingItem)).toBe("Rejected by Boss (id U9): too broad");
    expect(outcomeOf(items[13] as PendingItem)).toBe("Answered by Boss (id U9): x · later");
    expect(outcomeOf(approval)).toBeUndefined();
  });

  it("gives who decided by name and platform user id, by name alone on the console", () => {
    const ana = { platform: "telegram", userId: "123456", name: "Ana (admin)" };
    const typed = { ...approval, status: "decided" as const, decision: { action: "once", by: ana, at } };
    expect(outcomeOf(typed)).toBe("Approved by Ana (admin) (id 123456)");
    const local = {
      ...typed,
      decision: { ...typed.decision, by: { platform: "console", userId: "u1", name: "ana" } },
    };
    expect(outcomeOf(local)).toBe("Approved by ana");
  });

  it("an already decided press is told that line", () => {
    expect(alreadyDecidedMessage(items[3])).toBe("Already decided: Denied by Boss (id U9).");
    expect(alreadyDecidedMessage(undefined)).toBe("Already decided.");
  });
});
