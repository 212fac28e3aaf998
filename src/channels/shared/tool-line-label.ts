/**
 * The label of a tool call on its status line, decided once for every channel: the call's
 * preview on one short line, after the tool's name — except for a command, whose text speaks for
 * itself, and a call without a preview, which is labelled by its tool name alone. Characters that
 * hide or reorder text show as their code points (reveal-hidden.ts), in the preview and in the
 * tool name alike (a model may name a tool that does not exist: lines and all), and each is
 * folded onto one line of at most the rule's length. Channels only
 * format the two parts (Slack and the console as inline code, Telegram as `<code>`).
 */
import { RUN_COMMAND } from "../../tools/shell/run-command.js";
import { clipLine } from "../../core/one-line.js";
import { revealHidden } from "./reveal-hidden.js";

/** What a label is made of: a call's tool name and its preview ("npm test", "src/app.ts:1-40"). */
export interface LabelledCall {
  readonly name: string;
  readonly preview: string;
}

/** The two parts of a label: the tool name to show before it, if any, and the label itself. */
export interface ToolLabelParts {
  readonly tool?: string;
  readonly label: string;
}

/** How much of a preview a label keeps. */
export interface LabelRule {
  /** The longest label, ellipsis included. */
  readonly maxChars: number;
  /** Keep only the preview's first non-blank line (else all of it, folded onto one line). */
  readonly firstLineOnly: boolean;
}

/** The rule the chat channels use: the whole preview on one line of at most 80 characters. */
export const CHAT_LABEL_RULE: LabelRule = Object.freeze({ maxChars: 80, firstLineOnly: false });

/** The parts of a call's label under `rule`. */
export function toolLabelParts(call: LabelledCall, rule: LabelRule = CHAT_LABEL_RULE): ToolLabelParts {
  const source = rule.firstLineOnly
    ? (call.preview.split("\n").find((line) => line.trim() !== "") ?? "")
    : call.preview;
  const label = clipLine(revealHidden(source), rule.maxChars);
  const tool = clipLine(revealHidden(call.name), rule.maxChars);
  if (label === "") return { label: tool };
  return call.name === RUN_COMMAND ? { label } : { tool, label };
}

/** The call's label as plain text: "npm test", "read_file src/app.ts:1-40", "web_fetch". */
export function toolLabel(call: LabelledCall, rule: LabelRule = CHAT_LABEL_RULE): string {
  const { tool, label } = toolLabelParts(call, rule);
  return tool === undefined ? label : `${tool} ${label}`;
}

/** How a channel writes a label's parts: the label as code, the tool name as plain text. */
export interface LabelFormat {
  readonly code: (label: string) => string;
  readonly name: (tool: string) => string;
}

/** The label formatted by a channel: "`npm test`", "read_file `src/app.ts`". */
export function formatToolLabel(
  call: LabelledCall,
  format: LabelFormat,
  rule: LabelRule = CHAT_LABEL_RULE,
): string {
  const { tool, label } = toolLabelParts(call, rule);
  const code = format.code(label);
  return tool === undefined ? code : `${format.name(tool)} ${code}`;
}
