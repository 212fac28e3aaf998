/**
 * Triggers: which watched-channel messages wake a subscription — all of them, only those that
 * mention the bot (by its user id or @name), or those containing one of the keywords as a whole
 * word or phrase, case-insensitively. Keyword patterns are kept compiled for the keywords matched
 * most recently (compiling one costs about twice a test against a 4 KB message), in a bounded
 * cache: every keyword any subscription ever had would otherwise stay for the process's life.
 */
import { LruCache } from "../core/lru-cache.js";
import { describeIssues } from "../store/versioned.js";
import type { BotIdentity } from "./platform-directory.js";
import { type Trigger, triggerSchema } from "./subscription.js";

/** What a trigger looks at in a message. */
export interface TriggerInput {
  readonly text: string;
  /** The platform said the message mentions the bot (entity, reply to it, app_mention). */
  readonly mentionsBot?: boolean;
}

const WORD_CHAR = "[\\p{L}\\p{N}_]";
/** How many keyword patterns stay compiled: the keywords of 50 subscriptions at their most. */
const PATTERNS_KEPT = 1_000;
const patterns = new LruCache<string, RegExp>(PATTERNS_KEPT);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A case-insensitive whole-word pattern for a keyword or phrase (inner whitespace matches any run). */
function keywordPattern(keyword: string): RegExp {
  let pattern = patterns.get(keyword);
  if (!pattern) {
    const body = keyword.trim().split(/\s+/).map(escapeRegExp).join("\\s+");
    pattern = new RegExp(`(?<!${WORD_CHAR})${body}(?!${WORD_CHAR})`, "iu");
    patterns.set(keyword, pattern);
  }
  return pattern;
}

/** The keywords that occur in `text` as whole words or phrases. */
export function matchingKeywords(text: string, keywords: readonly string[]): string[] {
  return keywords.filter((keyword) => keywordPattern(keyword).test(text));
}

/** Whether `text` mentions the bot: Slack's `<@U123>` form or an `@name` of the bot. */
export function mentionsIdentity(text: string, bot: BotIdentity | undefined): boolean {
  if (!bot) return false;
  if (text.includes(`<@${bot.userId}>`) || text.includes(`<@${bot.userId}|`)) return true;
  return bot.names.some((name) => new RegExp(`(?<![\\w@])@${escapeRegExp(name)}(?![\\w])`, "iu").test(text));
}

/** Whether a message fires the trigger. */
export function matchesTrigger(trigger: Trigger, message: TriggerInput, bot?: BotIdentity): boolean {
  switch (trigger.type) {
    case "all":
      return true;
    case "mention":
      return message.mentionsBot === true || mentionsIdentity(message.text, bot);
    case "keywords":
      return matchingKeywords(message.text, trigger.keywords).length > 0;
  }
}

/** A trigger as the tool receives it (all of it optional). */
export interface TriggerArgs {
  readonly type?: string | undefined;
  readonly keywords?: readonly string[] | undefined;
}

/** Validate tool input into a trigger (default: all), or say what is wrong with it. */
export function parseTrigger(
  args: TriggerArgs | undefined,
): { readonly ok: true; readonly trigger: Trigger } | { readonly ok: false; readonly error: string } {
  const type = args?.type ?? "all";
  if (type !== "keywords" && args?.keywords !== undefined && args.keywords.length > 0) {
    return { ok: false, error: `keywords only apply to the "keywords" trigger, not "${type}"` };
  }
  const parsed = triggerSchema.safeParse(
    type === "keywords" ? { type, keywords: args?.keywords ?? [] } : { type },
  );
  if (!parsed.success) return { ok: false, error: `invalid trigger: ${describeIssues(parsed.error)}` };
  return { ok: true, trigger: parsed.data };
}

/** "every message", "mentions of me", "keywords: fail, error". */
export function describeTrigger(trigger: Trigger): string {
  switch (trigger.type) {
    case "all":
      return "every message";
    case "mention":
      return "messages that mention me";
    case "keywords":
      return `keywords: ${trigger.keywords.join(", ")}`;
  }
}
