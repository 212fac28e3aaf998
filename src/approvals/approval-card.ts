/**
 * Approval and plan cards: the platform-neutral Card for a pending approval or plan proposal, in
 * its open form (buttons) and its settled form (no buttons, an outcome line saying who decided).
 * An approval or plan asked for in a turn woken by channel content says so in its title and body
 * and quotes the channel content that started the turn, so nobody approves it as their own request
 * (question cards show the same parts: channelContentParts); such a plan cannot be approved into
 * auto mode.
 * A card its requester may not approve (it would loosen the session) says who may. Who asked is a
 * person on the card (platform and user id), never a display name alone, and a name that goes into
 * the card's markdown goes in as plain text (markdownLiteral). A request that
 * came with files names them: what a file says is not the requester's words (the card never
 * quotes a file's text). Every block's text shows its bidirectional control characters written out
 * (bidiControlsShown), so a call displays in the order it runs. A URL is shown as code, as a command
 * is (detailBlock).
 */
import type { AlwaysOption, Provenance } from "../core/events.js";
import {
  type Card,
  type CardBlock,
  type CardButton,
  type CardField,
  type CardOutcome,
  type CardPerson,
  formatOutcome,
} from "../core/card.js";
import { markdownLiteral, personText } from "../core/person-text.js";
import { grantHost } from "../tools/web/grant-host.js";
import { cardPerson, whoMayDecide } from "./authorisation.js";
import type { PendingApproval, PendingItem, PendingPerson, PendingPlan } from "./pending-item.js";

/** Approval card actions besides the always options. */
export const APPROVE_ONCE = "once";
export const DENY = "deny";
/** Plan card actions. */
export const PLAN_ACTIONS = ["plan_interactive", "plan_auto", "plan_reject"] as const;
export type PlanAction = (typeof PLAN_ACTIONS)[number];

/**
 * What a web grant given on `item`'s card covers: the host of the URL the card shows, with its port
 * when that is not the scheme's default (grant-host.ts: example.com:8080 is not example.com) — the
 * URL the grant is made from (web_fetch's card shows its `url`); "this host" when the card shows
 * none it can read.
 */
function grantedHost(item: Pick<PendingApproval, "detail">): string {
  if (item.detail?.kind !== "url") return "this host";
  try {
    return grantHost(new URL(item.detail.text)) || "this host";
  } catch {
    return "this host";
  }
}

/** The label of each always option on an approval card, and after "Approved by …" once pressed. */
const ALWAYS_LABEL: Record<AlwaysOption, (item: Pick<PendingApproval, "tool" | "detail">) => string> = {
  always_tool: (item) => `Always allow ${item.tool}`,
  always_command: () => "Always allow this command",
  always_domain: (item) => `Always allow ${grantedHost(item)}`,
  readonly_session: () => "Allow read-only commands this session",
};

/** The actions a press may carry for this item. */
export function validActions(item: PendingItem): readonly string[] {
  switch (item.kind) {
    case "approval":
      return [APPROVE_ONCE, ...item.alwaysOptions, DENY];
    case "plan":
      return planActions(item);
    case "question":
      return item.questions.flatMap((q, i) => q.options.map((_, j) => `q${i}:o${j}`));
  }
}

/** An outcome line naming `by` between `text` and `after`. */
export function decidedOutcome(text: string, by: CardPerson, after?: string): CardOutcome {
  const person = Object.freeze({ platform: by.platform, id: by.id, name: by.name });
  return Object.freeze(after ? { text, by: person, after } : { text, by: person });
}

/** An outcome line in plain text ("Approved by Ana (id U0123) — Always allow write_file"). */
export function outcomeText(outcome: CardOutcome): string {
  return formatOutcome(outcome, (text) => text, personText);
}

/** Who settled an item, for outcome lines: "Approved by <person>", or the system outcome. */
export function settledLine(item: PendingItem, verb: string): CardOutcome | undefined {
  const decision = item.decision;
  if (item.status === "pending" || !decision) return undefined;
  if (item.status === "expired") return Object.freeze({ text: "Expired — no decision in time" });
  if (item.status === "cancelled")
    return Object.freeze({ text: decision.note ? `Cancelled: ${decision.note}` : "Cancelled" });
  return decision.by
    ? decidedOutcome(`${verb} by `, cardPerson(decision.by))
    : Object.freeze({ text: `${verb} by the system` });
}

/** `outcome` with `more` added at its end. */
function withEnding(outcome: CardOutcome, more: string): CardOutcome {
  return outcome.by
    ? decidedOutcome(outcome.text, outcome.by, `${outcome.after ?? ""}${more}`)
    : Object.freeze({ text: `${outcome.text}${more}` });
}

function expiryField(item: PendingItem): { label: string; value: string } {
  return { label: "Expires", value: item.expiresAt.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC") };
}

/** Bidirectional control characters: overrides, embeddings, isolates and marks. */
const BIDI_CONTROL = /\p{Bidi_Control}/gu;

/**
 * `text` with each bidirectional control character written out ("[U+2067]"). Raw, one changes the
 * order in which a card shows the text after it, not the order in which it runs: a command could
 * show its `rm -rf ~` inside what reads as a comment (Trojan Source), a diff its lines' words in
 * another order than the file gets them.
 */
export function bidiControlsShown(text: string): string {
  return text.replace(
    BIDI_CONTROL,
    (char) => `[U+${char.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}]`,
  );
}

/** A card block as shown: its text's bidi controls written out (bidiControlsShown). */
export function shownBlock(block: CardBlock): CardBlock {
  return block.kind === "fields" ? block : { ...block, text: bidiControlsShown(block.text) };
}

/**
 * A call's detail (a diff, code, a URL, text) as the card block that shows it; none when empty. A
 * URL is the model's text that must be read exactly (its path or fragment may hold `[a](b)`, `**`
 * or `_`): it is code, never markdown, so a card that cuts it posts it whole beside the card.
 */
export function detailBlock(detail: PendingApproval["detail"]): CardBlock | undefined {
  if (!detail || detail.text.length === 0) return undefined;
  if (detail.kind === "diff") return { kind: "diff", text: detail.text };
  if (detail.kind === "code" || detail.kind === "url") return { kind: "code", text: detail.text };
  return { kind: "text", text: detail.text };
}

/**
 * While open, who may decide when the requester may not: a block saying so, in the words a
 * refused press gets (authorisation.ts), the requester's name as plain text.
 */
function deciders(item: PendingItem): CardBlock[] {
  const note = item.status === "pending" ? whoMayDecide(item, markdownLiteral).note : undefined;
  return note ? [{ kind: "text", text: note }] : [];
}

/**
 * Who asked, as a card field: their name with their user id as text (what every platform can
 * show), and the person, which a platform that can name them unforgeably (a Slack mention) shows
 * instead.
 */
export function requesterField(requester: PendingPerson, label: string): CardField {
  const person = cardPerson(requester);
  return { label, value: personText(person), person };
}

/** What tells people a card comes from channel content, with `advice` on what to do about it. */
function channelContentWarning(advice: string): string {
  return `Nobody here asked for this: the turn was triggered by channel content — messages other people wrote in a watched channel. ${advice}`;
}

/** What tells people an approval comes from channel content. */
export const CHANNEL_CONTENT_WARNING = channelContentWarning("Approve only if you want it to happen.");

/** What tells people a plan comes from channel content, and why it cannot run automatically. */
export const CHANNEL_CONTENT_PLAN_WARNING = channelContentWarning(
  "Approve only if you want it carried out; it cannot be approved to run automatically.",
);

/** What tells people a question comes from channel content. */
export const CHANNEL_CONTENT_QUESTION_WARNING = channelContentWarning(
  "Answer only with what you would tell the people who wrote there.",
);

/**
 * The parts of a card raised in a turn woken by channel content (`quote`: the item's
 * provenanceQuote; undefined for a person's own turn): the warning, which goes first (a platform
 * shortening a long card cuts from the end, and padded content must not push it out of sight),
 * the quote of the content that woke the turn, and the label naming the subscriber it was woken
 * for rather than "Requested by".
 */
export function channelContentParts(
  quote: string | undefined,
  warning: string,
): { readonly lead: CardBlock[]; readonly quote?: CardBlock; readonly requesterLabel: string } {
  if (quote === undefined) return { lead: [], requesterLabel: "Requested by" };
  return {
    lead: [{ kind: "text", text: warning }],
    quote: { kind: "quote", text: `Triggered by channel content: ${quote}` },
    requesterLabel: "Woken for",
  };
}

/**
 * The provenanceQuote field of an item raised in a turn: the channel and quote of the channel
 * content that woke it; none for a person's own turn.
 */
export function provenanceField(provenance: Provenance): { readonly provenanceQuote?: string } {
  if (provenance.kind !== "channel_content") return {};
  return { provenanceQuote: `${provenance.channel ?? "a channel"}: ${provenance.quote ?? ""}` };
}

/** What tells people the agent read outside content before asking, and which tools read it. */
export function outsideReadsWarning(reads: string): string {
  return `Before asking, the agent read content from outside this conversation (${reads}). Text there may have asked for this call: approve only if it is what was asked for here.`;
}

/** What tells people the request came with files, and which: their content is not the requester's. */
export function attachedFilesLine(names: string): string {
  return `The request came with attached files (${names}). What they say is not the requester's words: approve only what the requester asked for themselves.`;
}

/** A settled approval's outcome line ("Approved by Ana — Always allow write_file"); undefined while open. */
export function approvalOutcome(item: PendingApproval): CardOutcome | undefined {
  const action = item.decision?.action;
  const outcome = settledLine(item, action === DENY ? "Denied" : "Approved");
  if (outcome === undefined || item.status !== "decided") return outcome;
  return action && action in ALWAYS_LABEL
    ? withEnding(outcome, ` — ${ALWAYS_LABEL[action as AlwaysOption](item)}`)
    : outcome;
}

/** The card for a pending approval, open or settled. */
export function approvalCard(item: PendingApproval): Card {
  const open = item.status === "pending";
  const fromChannel = item.provenanceQuote !== undefined;
  const channel = channelContentParts(item.provenanceQuote, CHANNEL_CONTENT_WARNING);
  const blocks: CardBlock[] = [...channel.lead];
  if (item.outsideReads !== undefined)
    blocks.push({ kind: "text", text: outsideReadsWarning(item.outsideReads) });
  if (item.attachedFiles !== undefined)
    blocks.push({ kind: "text", text: attachedFilesLine(item.attachedFiles) });
  blocks.push({ kind: "text", text: item.argSummary });
  const detail = detailBlock(item.detail);
  if (detail) blocks.push(detail);
  if (channel.quote) blocks.push(channel.quote);
  else if (item.reason) blocks.push({ kind: "quote", text: item.reason });
  blocks.push(...deciders(item));
  blocks.push({
    kind: "fields",
    fields: [
      { label: "Tool", value: item.tool },
      requesterField(item.requester, channel.requesterLabel),
      expiryField(item),
    ],
  });
  const buttons: CardButton[] = open
    ? [
        { action: APPROVE_ONCE, label: "Approve", style: "primary" },
        ...item.alwaysOptions.map(
          (option): CardButton => ({
            action: option,
            label: ALWAYS_LABEL[option](item),
            style: "default",
          }),
        ),
        { action: DENY, label: "Deny", style: "danger" },
      ]
    : [];
  const outcome = approvalOutcome(item);
  return {
    pendingId: item.id,
    kind: "approval",
    title: fromChannel ? `Approve ${item.tool}? (triggered by channel content)` : `Approve ${item.tool}?`,
    tool: item.tool,
    blocks: blocks.map(shownBlock),
    buttons,
    ...(open ? { footer: `Or reply "approve ${item.id}" or "deny ${item.id}" in this thread.` } : {}),
    ...(outcome ? { outcome } : {}),
  };
}

/** A settled plan's outcome line ("Rejected by Ana: too broad"); undefined while open. */
export function planOutcome(item: PendingPlan): CardOutcome | undefined {
  const action = item.decision?.action;
  const verb =
    action === "plan_reject"
      ? "Rejected"
      : action === "plan_auto"
        ? "Approved (auto mode)"
        : "Approved (ask first)";
  const outcome = settledLine(item, verb);
  if (outcome === undefined) return undefined;
  return item.decision?.note && action === "plan_reject"
    ? withEnding(outcome, `: ${item.decision.note}`)
    : outcome;
}

/**
 * The actions a plan card offers: approving into auto mode only for a plan a person's own turn
 * proposed — one proposed in a turn woken by channel content would let that content run unasked.
 */
function planActions(item: PendingPlan): readonly PlanAction[] {
  return item.provenanceQuote === undefined ? PLAN_ACTIONS : PLAN_ACTIONS.filter((a) => a !== "plan_auto");
}

const PLAN_BUTTONS: Record<PlanAction, CardButton> = {
  plan_interactive: {
    action: "plan_interactive",
    label: "Approve (ask before risky steps)",
    style: "primary",
  },
  plan_auto: { action: "plan_auto", label: "Approve (run automatically)", style: "default" },
  plan_reject: { action: "plan_reject", label: "Reject", style: "danger" },
};

/** The card for a proposed plan, open or settled. */
export function planCard(item: PendingPlan): Card {
  const open = item.status === "pending";
  const outcome = planOutcome(item);
  const channel = channelContentParts(item.provenanceQuote, CHANNEL_CONTENT_PLAN_WARNING);
  return {
    pendingId: item.id,
    kind: "plan",
    title: channel.quote ? "Plan proposed (triggered by channel content)" : "Plan proposed",
    blocks: [
      ...channel.lead,
      { kind: "text" as const, text: item.plan },
      ...(channel.quote ? [channel.quote] : []),
      ...deciders(item),
      {
        kind: "fields" as const,
        fields: [requesterField(item.requester, channel.requesterLabel), expiryField(item)],
      },
    ].map(shownBlock),
    buttons: open ? planActions(item).map((action) => PLAN_BUTTONS[action]) : [],
    ...(open ? { footer: "Or reply to this message with changes to revise the plan." } : {}),
    ...(outcome ? { outcome } : {}),
  };
}
