/**
 * The compact progress lines of a turn: one status line per tool call that changes in place
 * ("Running `npm test`…" → "✓ `npm test` · 3.2 s" / "✗ `npm test` · exit 1"), the plan as a checklist, and short
 * notes. Pure formatting: the renderer decides where the lines go.
 */
import type { PlanStep, ToolCallStatus } from "../../core/events.js";
import { RUN_COMMAND } from "../../tools/shell/run-command.js";
import { escapeMrkdwn, SLACK_LIMITS, truncate } from "./slack-limits.js";

/** What one tool call looks like right now. */
export interface ToolLineState {
  readonly callId: string;
  readonly name: string;
  readonly preview: string;
  readonly status: "running" | ToolCallStatus;
  readonly durationMs?: number;
  /** Why a call that did not succeed ended so ("exit 1", "denied by policy"). */
  readonly reason?: string;
  /** What let it run without a person's press ("allowed by reviewer: …"). */
  readonly clearedBy?: string;
  /** Set while the call waits for a person. */
  readonly waiting?: "approval" | "answer";
}

const LABEL_MAX = 80;

/** "850 ms", "3.2 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1_000);
  return seconds > 0 ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/**
 * The two parts of a call's label: the tool name to show before it (none for a command, which
 * speaks for itself, or when the call has no label) and the label (the preview, else the name).
 */
function labelParts(state: Pick<ToolLineState, "name" | "preview">): { tool?: string; label: string } {
  const label = truncate(state.preview.replace(/\s+/g, " ").trim(), LABEL_MAX);
  if (label === "") return { label: state.name };
  return state.name === RUN_COMMAND ? { label } : { tool: state.name, label };
}

/** The call's one-line label as plain text: "npm test", "read_file src/app.ts:1-40". */
export function toolLabel(state: Pick<ToolLineState, "name" | "preview">): string {
  const { tool, label } = labelParts(state);
  return tool === undefined ? label : `${tool} ${label}`;
}

/** The label as inline code after the plain tool name (backticks inside become look-alikes). */
function codeLabel(state: ToolLineState): string {
  const { tool, label } = labelParts(state);
  const code = "`" + escapeMrkdwn(label.replace(/`/g, "ˋ")) + "`";
  return tool === undefined ? code : `${escapeMrkdwn(tool)} ${code}`;
}

/** The mrkdwn status line of one tool call. */
export function toolLine(state: ToolLineState): string {
  const label = codeLabel(state);
  const took = state.durationMs !== undefined ? ` · ${formatDuration(state.durationMs)}` : "";
  const why = state.reason ? ` · ${escapeMrkdwn(state.reason)}` : undefined;
  const cleared = state.clearedBy ? ` · ${escapeMrkdwn(state.clearedBy)}` : "";
  if (state.waiting === "approval") return `:double_vertical_bar: ${label} — waiting for approval`;
  if (state.waiting === "answer") return `:double_vertical_bar: Waiting for your answer`;
  switch (state.status) {
    case "running":
      return `:hourglass_flowing_sand: Running ${label}…${cleared}`;
    case "ok":
      return `✓ ${label}${took}${cleared}`;
    case "error":
      return `✗ ${label}${why ?? took}`;
    case "denied":
      return `⊘ ${label}${why ?? " — denied"}`;
    case "interrupted":
      return `■ ${label}${why ?? " — interrupted"}`;
    case "not_started":
      return `– ${label}${why ?? " — not run"}`;
  }
}

const PLAN_MARK: Readonly<Record<PlanStep["status"], string>> = {
  done: ":white_check_mark:",
  in_progress: ":arrow_forward:",
  pending: ":white_square:",
};

/** The plan as a mrkdwn checklist. */
export function planChecklist(steps: readonly PlanStep[]): string {
  const lines = steps.map(
    (step) => `${PLAN_MARK[step.status]} ${escapeMrkdwn(step.title.replace(/\s+/g, " "))}`,
  );
  return fitLines(["*Plan*", ...lines], SLACK_LIMITS.sectionText);
}

/**
 * Join lines so the result fits `max` characters: when too long, the oldest lines after the
 * first give way to a "… n earlier" marker (the newest state matters most).
 */
export function fitLines(lines: readonly string[], max: number): string {
  const joined = lines.join("\n");
  if (joined.length <= max) return joined;
  const [head = "", ...rest] = lines;
  const kept: string[] = [];
  let size = head.length + 40;
  for (let i = rest.length - 1; i >= 0; i -= 1) {
    const line = rest[i] as string;
    if (size + line.length + 1 > max) break;
    kept.unshift(line);
    size += line.length + 1;
  }
  const dropped = rest.length - kept.length;
  return truncate([head, `_… ${dropped} earlier_`, ...kept].join("\n"), max);
}
