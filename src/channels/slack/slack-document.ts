/**
 * The layout of one turn's view (channels/shared/turn-view.ts: answer text, tool status lines,
 * notes, the plan, how it ended, in order) into Slack message pages. A page holds at
 * most ~10k characters in ≤ 45 content blocks (sections ≤ 3,000), so a long answer becomes
 * several messages in order; the live page ends with the Stop button, a failed turn with Retry.
 * `plainPages` is the last-resort form: the same content as plain text messages.
 */
import { clip } from "../../core/surrogate-pairs.js";
import { clipLine } from "../../core/one-line.js";
import { hasContent, type TurnView, turnControl } from "../shared/turn-view.js";
import { renderBudget } from "../shared/markdown-walk.js";
import {
  ACTION_IDS,
  actions,
  type Block,
  blockTextLength,
  button,
  context,
  section,
} from "./slack-blocks.js";
import { escapeMrkdwn, SLACK_LIMITS } from "./slack-limits.js";
import { mrkdwnSections } from "./slack-answer-sections.js";
import { markdownToMrkdwn } from "./slack-markdown.js";
import { splitMrkdwn } from "./slack-split.js";
import { fitLines, noteLine, planChecklist, toolLine } from "./slack-status-lines.js";

export interface PageBudget {
  readonly text: number;
  readonly blocks: number;
  readonly section: number;
}

export interface Page {
  readonly blocks: Block[];
  readonly text: string;
}

/** A short, friendly version of a model failure. */
export function friendlyFailure(message: string): string {
  const detail = clipLine(message, 200);
  return detail.length > 0
    ? `Sorry — I couldn't finish this answer (${detail}). Press Retry to try again.`
    : "Sorry — I couldn't finish this answer. Press Retry to try again.";
}

function failureText(view: TurnView): string {
  return friendlyFailure(view.fatalError ?? "");
}

const STOP_LABEL = "Stop";
const RETRY_LABEL = "Retry";

/**
 * One piece of content before it becomes blocks: a section (split when long), a context line
 * group, or answer text — markdown still, item `index` of the view, converted by the layout.
 */
type Part = MrkdwnPart | { readonly kind: "answer"; readonly index: number; readonly markdown: string };
interface MrkdwnPart {
  readonly kind: "section" | "context";
  readonly mrkdwn: string;
}

/**
 * How the page layout turns the view's text item `index` into mrkdwn sections of at most `limit`
 * characters (AnswerSections: a live turn's answers, a stretch at a time).
 */
export interface AnswerSectioner {
  of(index: number, markdown: string, limit: number): readonly string[];
}

const STOPPED: MrkdwnPart = { kind: "context", mrkdwn: "■ Stopped." };
const PAUSED: MrkdwnPart = {
  kind: "context",
  mrkdwn: ":double_vertical_bar: Paused until the request above is answered.",
};

function outcomeParts(view: TurnView): MrkdwnPart[] {
  const outcome = view.outcome;
  switch (outcome.kind) {
    case "running":
      return [];
    case "completed":
      return hasContent(view) ? [] : [{ kind: "context", mrkdwn: "✓ Done." }];
    case "interrupted":
      return [STOPPED];
    case "unfinished":
      return [outcome.paused ? PAUSED : STOPPED];
    case "max_iterations":
      return [
        { kind: "context", mrkdwn: `Stopped after ${outcome.iterations} steps. Reply "continue" to go on.` },
      ];
    case "failed":
      return [{ kind: "section", mrkdwn: `:warning: ${escapeMrkdwn(failureText(view))}` }];
  }
}

/** The blocks that end a finished turn: its outcome and, after a failure, the Retry button. */
export function footerBlocks(view: TurnView): Block[] {
  const outcome: Block[] = outcomeParts(view).map((part) =>
    part.kind === "context" ? context(part.mrkdwn) : section(part.mrkdwn),
  );
  return [...outcome, ...controlBlocks(view)];
}

function controlBlocks(view: TurnView): Block[] {
  switch (turnControl(view)) {
    case "stop":
      return actions([button(ACTION_IDS.stop, STOP_LABEL, "stop", "danger")], "coworker_live");
    case "retry":
      return actions([button(ACTION_IDS.retry, RETRY_LABEL, "retry", "primary")], "coworker_failed");
    case undefined:
      return [];
  }
}

/** The view's content in order: plan, answer text and status line groups, outcome. */
function contentParts(view: TurnView): Part[] {
  const out: Part[] = [];
  if (view.plan && view.plan.length > 0) out.push({ kind: "section", mrkdwn: planChecklist(view.plan) });
  let lines: string[] = [];
  const flushLines = () => {
    if (lines.length > 0) out.push({ kind: "context", mrkdwn: fitLines(lines, SLACK_LIMITS.sectionText) });
    lines = [];
  };
  for (const [index, item] of view.items.entries()) {
    if (item.kind === "tool") lines.push(toolLine(item.line));
    else if (item.kind === "note") {
      const line = noteLine(item.note);
      if (line !== undefined) lines.push(line);
    } else {
      flushLines();
      out.push({ kind: "answer", index, markdown: item.markdown });
    }
  }
  flushLines();
  out.push(...outcomeParts(view));
  return out;
}

/** The parts as blocks, and the answer's sections (what the notification previews). */
function contentBlocks(
  parts: readonly Part[],
  sectionLimit: number,
  sectioner: AnswerSectioner,
): { readonly blocks: Block[]; readonly answer: string[] } {
  const blocks: Block[] = [];
  const answer: string[] = [];
  for (const part of parts) {
    if (part.kind === "answer") {
      const sections = sectioner.of(part.index, part.markdown, sectionLimit);
      answer.push(...sections);
      blocks.push(...sections.map(section));
    } else if (part.kind === "context") blocks.push(context(part.mrkdwn));
    else blocks.push(...mrkdwnSections(part.mrkdwn, sectionLimit).map(section));
  }
  return { blocks, answer };
}

/**
 * Lay the turn out as message pages (empty while nothing is visible yet); `sectioner` converts
 * the answer text.
 */
export function layoutPages(view: TurnView, budget: PageBudget, sectioner: AnswerSectioner): Page[] {
  const { blocks: content, answer } = contentBlocks(contentParts(view), budget.section, sectioner);
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
  (pages[pages.length - 1] as Block[]).push(...controlBlocks(view));
  const preview = notificationText(view, answer);
  return pages.map((blocks, index) => ({
    blocks,
    text: index === 0 ? preview : `${preview} (${index + 1})`,
  }));
}

/** Longest notification text. */
const PREVIEW_CHARS = 300;

/**
 * The message's notification text: the answer's start (from its sections, only as many as it
 * takes), else how it stands.
 */
function notificationText(view: TurnView, answer: readonly string[]): string {
  let start = "";
  for (const chunk of answer) {
    start = `${start} ${chunk}`.replace(/\s+/g, " ").trim();
    if (start.length > PREVIEW_CHARS) break;
  }
  if (start.length > 0) return clip(start, PREVIEW_CHARS);
  if (view.outcome.kind === "failed") return escapeMrkdwn(clip(failureText(view), PREVIEW_CHARS));
  return view.outcome.kind === "running" ? "Working…" : "Done.";
}

/** The whole turn as plain-text messages (no blocks) of at most `limit` characters each. */
export function plainPages(view: TurnView, limit: number): Page[] {
  const budget = renderBudget(); // the turn's answers share one render budget
  const text = contentParts(view)
    .map((part) => (part.kind === "answer" ? markdownToMrkdwn(part.markdown, budget) : part.mrkdwn))
    .filter((mrkdwn) => mrkdwn.trim().length > 0)
    .join("\n\n");
  return splitMrkdwn(text, limit).map((chunk) => ({ blocks: [], text: chunk }));
}
