/**
 * The system prompt of a session. Its fixed part is built when the session starts: the persona (a
 * short default for a helpful coworker in a chat thread), the narration rule, the environment, the
 * workspace's AGENTS.md (capped), the user's standing rules, and the when-to-remember rules while
 * saving is on, or an honest "saving is off" statement otherwise. What the agent remembers about
 * the person asking follows it, per turn (`memoriesSection`, see requester-memories.ts), so the
 * part every turn shares comes first. AGENTS.md and the memories each sit in a tagged block their
 * text cannot close. What can change mid-session (mode, the saving switch) travels in the
 * per-turn context instead.
 */
import { clipWithMarker } from "../core/surrogate-pairs.js";
import { promptBlock } from "./prompt-block.js";

/** The most AGENTS.md characters put into the instructions. */
export const AGENTS_MD_MAX_CHARS = 20_000;

/** The default persona: who the agent is and how it talks in a chat thread. */
export const DEFAULT_PERSONA = `You are Coworker, a helpful colleague who works with people in a chat thread. You can read and change files in a shared workspace, run shell commands, fetch web pages and use the other tools you are given.
- Answer concisely: lead with the answer, then only the detail that helps. No preamble, no filler.
- Write chat-friendly Markdown: short paragraphs, bullet lists, \`inline code\` and fenced code blocks. Avoid wide tables and deep heading levels; the chat converts your Markdown for display.
- Check facts with your tools instead of guessing, and say plainly when you could not verify something.
- Just call the tool you need: the system itself asks a person for approval before risky actions (changing files, running commands, reaching the network, posting elsewhere). Do not ask for permission in chat first. If an action is denied, respect that and offer another way.
- When a request is ambiguous and a wrong guess would be costly, ask one short question (ask_user) instead of guessing.
- Several people may write in one thread: the context block at the end of each message says who is asking.`;

/** One short sentence before each batch of tool calls, shown to people as live progress. */
export const NARRATION_RULE = `## Narration
Before each batch of tool calls, write ONE short plain sentence saying what you are doing and why (e.g. "Checking which tests cover the parser."). It is shown to the people in the thread as live progress. Don't narrate trivial single-call follow-ups, don't repeat the previous line, and never let narration replace your final answer.`;

/** When and how to use the memory tools (only while saving is on). */
export const MEMORY_GUIDANCE = `## Memory
- You have persistent memory across conversations. Use \`remember\` for durable facts: a person's corrections and stated preferences (include the why), and context about their work you could not rederive from the workspace. Scope by what the fact is about: about the person -> "user" (follows them into every chat); about this channel or its work -> "channel". Always pass a one-line summary (15 words at most) alongside the full content.
- Save conservatively: a wrong memory costs more than a missing one. Save only clearly durable facts ("from now on", "always", "in every chat"). Ambiguous one-off phrasing: apply it now, don't save it. When someone explicitly asks you to remember something, always save it.
- Sensitive topics (health, finances, relationships, beliefs): never save silently. Ask first ("Want me to remember this for next time?") and save only on a yes.
- When you save, say so in one short plain sentence in your reply. The first time a remembered fact shapes your answer in a conversation, mention it in one quiet line — first use only.
- Don't save what the workspace already records (code, git history, AGENTS.md) or details that only matter to the current task. Use absolute dates, never "yesterday".
- Before saving, check the list of what you remember: if an entry already covers it, revise it with \`memory_update\` instead of adding a near-duplicate; retire wrong or obsolete entries with \`memory_forget\`.
- Memories reflect when they were written. If one names a file, flag or URL, check it still exists before relying on it.`;

/** Said instead of the guidance when saving is off, so the agent never pretends to remember. */
export const MEMORY_OFF_STATEMENT = `## Memory
Saving memories is switched off. What you already remember (listed below, if anything) is still true and you should keep using it — but you cannot save, change or delete anything, and nothing new from this conversation will carry over to future ones. If someone asks you to remember something new, say both halves plainly: you will keep it in mind for the rest of this conversation, but it will not be saved once the conversation ends. Never imply you saved, noted or will remember anything new.`;

/**
 * The most characters of the memories section (tags included). It is in every turn of everyone
 * who asks in the channel, and a channel's list is shared by all its members, so without a cap
 * its size would be what the stored memories add up to (100 items × 2,000 characters each);
 * the most recently updated memories are kept, the person's own first (MemoryStore.memoryBlock).
 */
export const MEMORIES_SECTION_MAX_CHARS = 20_000;

const NO_MEMORIES = "You have no saved memories about this person or this channel yet.";

/** Everything the fixed instructions are built from (gathered by the caller at session start). */
export interface InstructionsInput {
  /** Replaces the default persona when set. */
  readonly persona?: string;
  readonly workspaceRoot: string;
  readonly extraRoots: readonly string[];
  /** e.g. "Linux 6.8.0 (x64)". */
  readonly os: string;
  /** When the session started, as people read it (see `describeDate`). */
  readonly date: string;
  /** The workspace's AGENTS.md text, when present (capped here). */
  readonly agentsMd?: string;
  /** The user's standing rules from config. */
  readonly userRules?: string;
  /** Whether saving memories is on at session start. */
  readonly memoryEnabled: boolean;
  /** "slack" | "telegram" | "console" | … */
  readonly platform: string;
  /** Cap for AGENTS.md (default AGENTS_MD_MAX_CHARS). */
  readonly agentsMdMaxChars?: number;
}

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;

/**
 * A date as the environment block shows it, e.g. "2026-11-29 14:05 UTC (Sunday)". The weekday
 * comes from a table rather than `toLocaleDateString`, which builds an ICU formatter per call and
 * showed up in the turn's profile.
 */
export function describeDate(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC (${WEEKDAYS[date.getUTCDay()]})`;
}

/** The environment block: where the agent works and when. */
export function environmentSection(input: InstructionsInput): string {
  const lines = [
    "## Environment",
    `- Workspace: ${input.workspaceRoot} (your working directory: relative paths in file tools and run_command resolve here)`,
  ];
  if (input.extraRoots.length > 0)
    lines.push(`- Further folders you may use: ${input.extraRoots.join(", ")} (use absolute paths)`);
  lines.push(
    `- Operating system: ${input.os}`,
    `- Conversation started: ${input.date}`,
    `- Chat platform: ${input.platform}`,
  );
  return lines.join("\n");
}

/** AGENTS.md wrapped and capped at `maxChars` with a marker saying the rest was left out. */
export function agentsMdSection(text: string, maxChars: number = AGENTS_MD_MAX_CHARS): string | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  const capped = clipWithMarker(
    trimmed,
    maxChars,
    () =>
      `\n[AGENTS.md continues beyond ${maxChars} characters; the rest was left out here — read the file to see it.]`,
  );
  return [
    "## Workspace conventions (AGENTS.md)",
    "The workspace's AGENTS.md, written by the people who work in it. Follow it unless a person in this thread says otherwise.",
    promptBlock("agents-md", capped),
  ].join("\n");
}

function rulesSection(rules: string | undefined): string | undefined {
  const trimmed = rules?.trim();
  if (!trimmed) return undefined;
  return [
    "## Standing rules",
    "Set by the people who run you; they apply to every conversation. Follow them.",
    trimmed,
  ].join("\n");
}

/**
 * What is remembered (MemoryStore.memoryBlock; empty or absent when nothing is) in a block its
 * entries cannot close, since they are model-written. It follows the instructions' memory rules.
 * The block is sized by its maker (RequesterMemories keeps it within MEMORIES_SECTION_MAX_CHARS).
 */
export function memoriesSection(block: string | undefined): string {
  return promptBlock("memories", block?.trim() ? block.trim() : NO_MEMORIES);
}

/** Build the session's fixed system prompt from its parts, in a fixed order. */
export function buildInstructions(input: InstructionsInput): string {
  const persona = input.persona?.trim() ? input.persona.trim() : DEFAULT_PERSONA;
  const parts = [
    persona,
    NARRATION_RULE,
    environmentSection(input),
    input.agentsMd === undefined ? undefined : agentsMdSection(input.agentsMd, input.agentsMdMaxChars),
    rulesSection(input.userRules),
    input.memoryEnabled ? MEMORY_GUIDANCE : MEMORY_OFF_STATEMENT,
  ];
  return parts.filter((part): part is string => part !== undefined).join("\n\n");
}
