/**
 * Typed decisions: `approve <id>` and `deny <id>` typed as thread commands, deciding a pending
 * item as a press of its card's button would. They may be typed in any conversation, so they
 * get the check a press gets in the card's conversation first: only someone who could press the
 * button where the item was asked may decide it (on its platform, and still allowed to use the
 * bot there), or a person removed from a private channel could decide its cards from their DM
 * and resume the turn there as themselves. A refusal names nothing of the item. Once checked, the
 * decision is pressed as made in the item's own conversation, the one place a card press counts.
 */
import { markdownLiteral } from "../core/person-text.js";
import type { PendingItem } from "../approvals/pending-item.js";
import type { PendingStore } from "../approvals/pending-store.js";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";

/** What a typed decision needs: the pending items, the card press, the platform's rules. */
export interface TypedDecisionDeps {
  readonly pending: PendingStore;
  /**
   * Whether a person may still use the bot in a conversation under its platform's rules now
   * (rejects when the platform cannot say): a typed decision must pass it for the conversation
   * its item was asked in, as a press of the card's button there would. Absent: not checked (a
   * stack without platform rules).
   */
  readonly mayActIn?: ((userId: string, target: ThreadTarget) => Promise<boolean>) | undefined;
  /** Resolve a card press (approve / deny typed as commands), resuming its turn when needed. */
  readonly pressCard: (press: Extract<ButtonPress, { kind: "card" }>) => Promise<PressResult>;
}

/** A typed decision's refusal for someone who may not use the bot where its item was asked; names nothing of it. */
const NOT_WHERE_ASKED =
  "You can't decide this request: you may not use Coworker in the conversation it was asked in.";

/**
 * Decide pending item `id` as `user`, typing `verb` in `target`'s conversation; resolves with
 * the reply (markdown). A question is answered with its buttons or a reply, never decided here.
 */
export async function decideTyped(
  deps: TypedDecisionDeps,
  target: ThreadTarget,
  user: PlatformUser,
  id: string,
  verb: "approve" | "deny",
): Promise<string> {
  const item = await deps.pending.get(id).catch(() => undefined);
  if (!item) return `No pending request has the id ${id}.`;
  const refusal = await refusedWhereAsked(deps, target, user, item);
  if (refusal) return refusal;
  if (item.kind === "question") return "That is a question: answer it with its buttons or by replying here.";
  const action =
    item.kind === "plan"
      ? verb === "approve"
        ? "plan_interactive"
        : "plan_reject"
      : verb === "approve"
        ? "once"
        : "deny";
  const result = await deps.pressCard({
    kind: "card",
    platform: target.platform,
    pendingId: id,
    action,
    user,
    // Checked above for the card's conversation, it counts there (approvals/press-place.ts).
    pressedIn: item.target,
  });
  // The press's answer is plain text naming people by display name ("Approved by …", "Only …
  // (id U1) or a configured approver…"); the reply is markdown, so it goes in as plain text.
  return markdownLiteral(result.message);
}

/**
 * Why `user`, typing in `target`'s conversation, may not decide `item` there; undefined when they
 * may. `approve <id>` works from any conversation, but it gets the check a press of the card's
 * button gets in the card's conversation: on its platform only (nobody presses a button on
 * another), and only by someone who may still use the bot in that conversation (mayActIn) — not
 * someone since removed from a private channel, the allowed users or channels. The refusal names
 * nothing of the item.
 */
async function refusedWhereAsked(
  deps: TypedDecisionDeps,
  target: ThreadTarget,
  user: PlatformUser,
  item: PendingItem,
): Promise<string | undefined> {
  if (target.platform !== item.target.platform) return NOT_WHERE_ASKED;
  const { mayActIn } = deps;
  if (!mayActIn) return undefined;
  const may = await mayActIn(user.id, item.target).catch(() => undefined);
  if (may === undefined)
    return "Could not check whether you may still use Coworker in the conversation this request was asked in. Please try again later.";
  return may ? undefined : NOT_WHERE_ASKED;
}
