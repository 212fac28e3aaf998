/**
 * The turn document: what one turn has shown so far (answer text, tool status lines, notes, the
 * plan, how it ended), kept in order, and its layout into Slack message pages. A page holds at
 * most ~10k characters in ≤ 45 content blocks (sections ≤ 3,000), so a long answer becomes
 * several messages in order; the live page ends with the Stop button, a failed turn with Retry.
 * `plainPages` is the last-resort form: the same content as plain text messages.
 */
import type { PlanStep } from "../../core/events.js";
import {
  ACTION_IDS,
  actions,
  type Block,
  blockTextLength,
  button,
  context,
  section,
} from "./slack-blocks.js";
import { escapeMrkdwn, PAGE_BUDGET, SLACK_LIMITS, truncate } from "./slack-limits.js";
import { markdownPreview, markdownToMrkdwn } from "./slack-markdown.js";
import { splitMrkdwn } from "./slack-split.js";
import { fitLines, planChecklist, type ToolLineState, toolLine } from "./slack-status-lines.js";

export type DocItem =
  | { readonly kind: "text"; readonly markdown: string }
  | { readonly kind: "tool"; readonly state: ToolLineState }
  | { readonly kind: "note"; readonly mrkdwn: string };

export type TurnOutcome =
  | { readonly kind: "running" }
  | { readonly kind: "completed" }
  | { readonly kind: "interrupted" }
  /** The renderer was closed while the turn waited for a person; it resumes after the decision. */
  | { readonly kind: "paused" }
  | { readonly kind: "max_iterations"; readonly iterations: number }
  | { readonly kind: "failed"; readonly message: string };

export interface PageBudget {
  readonly text: number;
  readonly blocks: number;
  readonly section: number;
}

export interface Page {
  readonly blocks: Block[];
  readonly text: string;
}

/** The mutable record of one turn's visible output. */
export class TurnDocument {
  private readonly items: DocItem[] = [];
  private openText: number | undefined;
  plan: readonly PlanStep[] | undefined;
  outcome: TurnOutcome = { kind: "running" };

  /** Append streamed answer text (opens a new text item after tools or notes). */
  appendText(delta: string): void {
    if (delta.length === 0) return;
    const open = this.openText === undefined ? undefined : this.items[this.openText];
    if (open?.kind === "text") {
      this.items[this.openText as number] = { kind: "text", markdown: open.markdown + delta };
      return;
    }
    this.items.push({ kind: "text", markdown: delta });
    this.openText = this.items.length - 1;
  }

  /** One assistant message is complete: its final content wins over the streamed deltas. */
  finishText(content: string): void {
    if (this.openText !== undefined) {
      if (content.length > 0) this.items[this.openText] = { kind: "text", markdown: content };
      else this.items.splice(this.openText, 1);
    } else if (content.trim().length > 0) {
      this.items.push({ kind: "text", markdown: content });
    }
    this.openText = undefined;
  }

  /** Add or replace a tool call's status line (keeps its position). */
  setTool(state: ToolLineState): void {
    this.openText = undefined;
    const index = this.items.findIndex((item) => item.kind === "tool" && item.state.callId === state.callId);
    if (index === -1) this.items.push({ kind: "tool", state });
    else this.items[index] = { kind: "tool", state };
  }

  tool(callId: string): ToolLineState | undefined {
    const item = this.items.find((i) => i.kind === "tool" && i.state.callId === callId);
    return item?.kind === "tool" ? item.state : undefined;
  }

  /** A short note line (already mrkdwn). */
  note(mrkdwn: string): void {
    this.openText = undefined;
    this.items.push({ kind: "note", mrkdwn });
  }

  /** Whether a tool call is waiting for a person. */
  isWaiting(): boolean {
    return this.items.some((item) => item.kind === "tool" && item.state.waiting !== undefined);
  }

  /** Whether any answer text was shown. */
  hasText(): boolean {
    return this.items.some((item) => item.kind === "text" && item.markdown.trim().length > 0);
  }

  /** Whether there is anything to show yet. */
  hasContent(): boolean {
    return (
      this.plan !== undefined || this.items.some((i) => i.kind !== "text" || i.markdown.trim().length > 0)
    );
  }

  /** The answer text so far (all text items). */
  answer(): string {
    return this.items
      .filter((i): i is Extract<DocItem, { kind: "text" }> => i.kind === "text")
      .map((i) => i.markdown)
      .join("\n\n");
  }

  /** Snapshot of the items, in order. */
  snapshot(): readonly DocItem[] {
    return [...this.items];
  }
}

const STOP_LABEL = "Stop";
const RETRY_LABEL = "Retry";

/** One piece of content before it becomes blocks: a section (split when long) or a context line group. */
interface Part {
  readonly kind: "section" | "context";
  readonly mrkdwn: string;
}

function outcomeParts(doc: TurnDocument): Part[] {
  const outcome = doc.outcome;
  switch (outcome.kind) {
    case "running":
      return [];
    case "completed":
      return doc.hasContent() ? [] : [{ kind: "context", mrkdwn: "✓ Done." }];
    case "interrupted":
      return [{ kind: "context", mrkdwn: "■ Stopped." }];
    case "paused":
      return [
        { kind: "context", mrkdwn: ":double_vertical_bar: Paused until the request above is answered." },
      ];
    case "max_iterations":
      return [
        { kind: "context", mrkdwn: `Stopped after ${outcome.iterations} steps. Reply "continue" to go on.` },
      ];
    case "failed":
      return [{ kind: "section", mrkdwn: `:warning: ${escapeMrkdwn(outcome.message)}` }];
  }
}

/** The blocks that end a finished turn: its outcome and, after a failure, the Retry button. */
export function footerBlocks(doc: TurnDocument): Block[] {
  const outcome: Block[] = outcomeParts(doc).map((part) =>
    part.kind === "context" ? context(part.mrkdwn) : section(part.mrkdwn),
  );
  return [...outcome, ...controlBlocks(doc)];
}

function controlBlocks(doc: TurnDocument): Block[] {
  if (doc.outcome.kind === "running") {
    return actions([button(ACTION_IDS.stop, STOP_LABEL, "stop", "danger")], "coworker_live");
  }
  if (doc.outcome.kind === "failed") {
    return actions([button(ACTION_IDS.retry, RETRY_LABEL, "retry", "primary")], "coworker_failed");
  }
  return [];
}

/** The document's content in order: plan, answer text and status line groups, outcome. */
function contentParts(doc: TurnDocument): Part[] {
  const out: Part[] = [];
  if (doc.plan && doc.plan.length > 0) out.push({ kind: "section", mrkdwn: planChecklist(doc.plan) });
  let lines: string[] = [];
  const flushLines = () => {
    if (lines.length > 0) out.push({ kind: "context", mrkdwn: fitLines(lines, SLACK_LIMITS.sectionText) });
    lines = [];
  };
  for (const item of doc.snapshot()) {
    if (item.kind === "tool") lines.push(toolLine(item.state));
    else if (item.kind === "note") lines.push(item.mrkdwn);
    else {
      flushLines();
      const mrkdwn = markdownToMrkdwn(item.markdown);
      if (mrkdwn.trim().length > 0) out.push({ kind: "section", mrkdwn });
    }
  }
  flushLines();
  out.push(...outcomeParts(doc));
  return out;
}

function contentBlocks(doc: TurnDocument, sectionLimit: number): Block[] {
  return contentParts(doc).flatMap((part): Block[] =>
    part.kind === "context"
      ? [context(part.mrkdwn)]
      : splitMrkdwn(part.mrkdwn, sectionLimit)
          .filter((chunk) => chunk.trim().length > 0)
          .map(section),
  );
}

/** Lay the document out as message pages (empty while nothing is visible yet). */
export function layoutPages(doc: TurnDocument, budget: PageBudget = PAGE_BUDGET): Page[] {
  const content = contentBlocks(doc, budget.section);
  if (content.length === 0) return [];
  const pages: Block[][] = [[]];
  let size = 0;
  for (const block of content) {
    const page = pages[pages.length - 1] as Block[];
    const length = blockTextLength(block);
    if (page.length > 0 && (page.length >= budget.blocks || size + length > budget.text)) {
      pages.push([block]);
      size = length;
    } else {
      page.push(block);
      size += length;
    }
  }
  (pages[pages.length - 1] as Block[]).push(...controlBlocks(doc));
  const preview = notificationText(doc);
  return pages.map((blocks, index) => ({
    blocks,
    text: index === 0 ? preview : `${preview} (${index + 1})`,
  }));
}

function notificationText(doc: TurnDocument): string {
  const answer = doc.answer();
  if (answer.trim().length > 0) return markdownPreview(answer, 300);
  if (doc.outcome.kind === "failed") return truncate(doc.outcome.message, 300);
  return doc.outcome.kind === "running" ? "Working…" : "Done.";
}

/** The whole document as plain-text messages (no blocks) of at most `limit` characters each. */
export function plainPages(doc: TurnDocument, limit: number): Page[] {
  const text = contentParts(doc)
    .map((part) => part.mrkdwn)
    .join("\n\n");
  return splitMrkdwn(text, limit).map((chunk) => ({ blocks: [], text: chunk }));
}
