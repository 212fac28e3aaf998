/**
 * The field types the configuration schema's sections (schema.ts) are built from: counts, ports,
 * non-empty strings, model names, URLs, MCP server names, regular expressions, and the cap on
 * seconds a timer may wait.
 */
import { z } from "zod";
import { MODEL_NAME, MODEL_NAME_CHARACTERS } from "../core/model-name.js";

export const MB = 1024 * 1024;

export const positiveInt = z.number().int().positive();
export const nonNegativeInt = z.number().int().nonnegative();
export const port = z.number().int().min(0).max(65_535);
export const nonEmpty = z.string().trim().min(1, "must not be empty");
export const modelName = z
  .string()
  .trim()
  .regex(MODEL_NAME, `must be a model name (${MODEL_NAME_CHARACTERS})`);
export const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
export const urlPath = z.string().regex(/^\/\S*$/, "must start with /");

/**
 * A regular expression as the configuration writes it (tools.hard_deny): one that does not compile
 * is refused at load, so `doctor` says so, rather than passing it and `start` failing on it later.
 */
export const regexSource = nonEmpty.superRefine((source, ctx) => {
  try {
    new RegExp(source, "i");
  } catch (error) {
    ctx.addIssue({
      code: "custom",
      message: `not a regular expression (${error instanceof Error ? error.message : String(error)})`,
    });
  }
});

/**
 * An MCP server's name. Its tools reach the agent as `<name>__<tool>`, at most 64 characters
 * (mcp-tools.ts), and "always allow" grants follow that name, so two servers must never be able
 * to make the same one: a name holds no `__` and does not end in `_` (server `gh_`'s tool `x` and
 * server `gh`'s tool `_x` were both `gh___x`), and at most 32 characters leave the tool's part room.
 */
export const mcpServerName = z
  .string()
  .regex(/^[A-Za-z0-9_-]+$/, "use letters, digits, _ or -")
  .max(32, "at most 32 characters")
  .refine(
    (name) => !name.includes("__") && !name.endsWith("_"),
    "must not contain __ or end with _ (a tool's name is <server>__<tool>)",
  );

/**
 * The most seconds a configured wait that runs on a timer may be. Node's setTimeout waits at most
 * 2^31-1 ms (about 24.8 days) and fires a longer delay after 1 ms, so a larger timeout would end
 * at once; 24 days leaves room for what some timers add to the configured time (the shutdown
 * watchdog waits the grace plus 10 s). Waits re-armed in steps (approvals.expire_after_h, the
 * schedules' wake-ups) and durations only compared with a clock need no cap.
 */
export const MAX_TIMER_S = 24 * 86_400;

/** Seconds a timer waits: `base` (positive, integer, …) capped at MAX_TIMER_S. */
export function timerSeconds(base: z.ZodNumber): z.ZodNumber {
  return base.max(MAX_TIMER_S, `at most ${MAX_TIMER_S} s (24 days): a longer timer would fire at once`);
}
