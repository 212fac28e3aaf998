/**
 * Durations that wait on a timer are capped at MAX_TIMER_S: Node's setTimeout fires a delay over
 * 2^31-1 ms after 1 ms, so a timeout or grace of a month would end at once. Waits re-armed in
 * steps (approvals) and durations only compared with a clock (schedules) stay uncapped.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { MAX_TIMER_S } from "../../src/config/schema-fields.js";

/** Every duration of the schema that reaches a timer, as a YAML section and its key. */
const TIMER_FIELDS: readonly (readonly [string, string])[] = [
  ["model", "stall_timeout_s"],
  ["model", "max_step_s"],
  ["reviewer", "timeout_s"],
  ["tools.run_command", "default_timeout_s"],
  ["tools.run_command", "max_timeout_s"],
  ["tools.web_fetch", "timeout_s"],
  ["subscriptions", "debounce_s"],
  ["subscriptions", "max_wait_s"],
  ["transcription", "timeout_s"],
  ["server", "shutdown_grace_s"],
];

/** YAML setting `section.key` (a dotted section nests) to `value`. */
function yamlWith(section: string, key: string, value: number): string {
  const parts = [...section.split("."), key];
  const lines = parts.map((part, i) => `${"  ".repeat(i)}${part}:`);
  lines[lines.length - 1] += ` ${value}`;
  // run_command's default may not exceed its maximum: raise the maximum with it.
  if (key === "default_timeout_s")
    lines.push(`${"  ".repeat(parts.length - 1)}max_timeout_s: ${MAX_TIMER_S}`);
  return `${lines.join("\n")}\n`;
}

function load(yaml: string) {
  const cwd = mkdtempSync(join(tmpdir(), "coworker-timers-"));
  writeFileSync(join(cwd, "coworker.yaml"), yaml);
  return loadConfig({
    env: { OPENAI_BASE_URL: "http://localhost:11434/v1" },
    cwd,
    argv: ["-c", "coworker.yaml"],
  });
}

describe("durations that wait on a timer", () => {
  it("caps them where setTimeout still waits, with room for what a timer adds (shutdown: +10 s)", () => {
    expect(MAX_TIMER_S).toBe(24 * 86_400);
    expect(MAX_TIMER_S * 1000 + 10_000).toBeLessThanOrEqual(2 ** 31 - 1);
  });

  for (const [section, key] of TIMER_FIELDS) {
    const field = `${section}.${key}`;
    it(`${field}: refuses a value over the cap, naming the field, and loads the largest allowed`, () => {
      const over = load(yamlWith(section, key, MAX_TIMER_S + 1));
      if (over.ok) throw new Error(`${field} over the cap was accepted`);
      expect(over.problems.join("\n")).toContain(
        `${field}: at most ${MAX_TIMER_S} s (24 days): a longer timer would fire at once (got ${MAX_TIMER_S + 1})`,
      );
      // The overflow the cap prevents: a month.
      expect(load(yamlWith(section, key, 30 * 86_400)).ok).toBe(false);
      const largest = load(yamlWith(section, key, MAX_TIMER_S));
      if (!largest.ok) throw new Error(largest.problems.join("\n"));
    });
  }

  it("leaves waits that are re-armed in steps or compared with a clock uncapped", () => {
    const yaml = [
      "approvals:\n  expire_after_h: 100000",
      "schedules:\n  max_wake_s: 100000000\n  catch_up_s: 100000000",
      "subscriptions:\n  buffer_max_age_h: 100000",
      "ops:\n  channel_down_grace_s: 100000000",
    ].join("\n");
    const result = load(`${yaml}\n`);
    if (!result.ok) throw new Error(result.problems.join("\n"));
  });
});
