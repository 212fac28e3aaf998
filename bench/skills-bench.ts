/**
 * Skills benchmark (issue 15): the per-turn cost of the skill catalog with 200 skills installed in
 * the workspace — the context part every model call computes (scan the sources, join the switches,
 * render the capped catalog, look for countermands in a 60-message history) — cold (every
 * SKILL.md parsed), a new message with the folders watched (the default: no change reported, no
 * disk access) and without (a full rescan: each SKILL.md opened and stat'ed, nothing re-read), a later model
 * call of the same turn (the scan reused) and a message right after one skill was edited;
 * and the catalog's prompt size (tokens ≈ characters / 4) against its budget
 * (default 2,000) next to what the uncapped list would cost. Target: under 2 ms per turn, capped
 * at the budget with a "…and N more" line. Writes bench/results/skills.json and .md.
 */
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { ConversationMessage } from "../src/core/messages.js";
import { createRequest } from "../src/core/request.js";
import { approxTokens, catalogText, DEFAULT_CATALOG_BUDGET_TOKENS } from "../src/skills/skill-catalog.js";
import { openSkills } from "../src/skills/skills-runtime.js";
import { hostLine, percentile, writeResults } from "./support/report.js";

const SKILLS = 200;
const TURNS = 1_000;
const EDITED_TURNS = 100;
const TARGET_MS = 2;

const round = (value: number, digits = 3) => Number(value.toFixed(digits));

function skillName(i: number): string {
  return `team-procedure-${String(i).padStart(3, "0")}`;
}

function writeSkills(skillsDir: string): void {
  for (let i = 0; i < SKILLS; i++) {
    const dir = path.join(skillsDir, skillName(i));
    mkdirSync(dir, { recursive: true });
    const description = `Runbook ${i} — how the team checks, triages and reports on service ${i % 17} when its alerts fire.`;
    const body = `# Procedure ${i}\n\n${"1. Do the next careful step and write down what you saw.\n".repeat(40)}`;
    writeFileSync(
      path.join(dir, "SKILL.md"),
      `---\nname: ${skillName(i)}\ndescription: ${description}\nmetadata:\n  owner: ops\n---\n\n${body}`,
    );
    writeFileSync(path.join(dir, "reference.md"), "reference notes\n");
  }
}

/** A 60-message history with three successful load_skill calls among ordinary turns. */
function history(): ConversationMessage[] {
  const messages: ConversationMessage[] = [];
  for (let i = 0; i < 20; i++) {
    messages.push({ role: "user", content: `question ${i}` });
    if (i % 7 === 0) {
      const id = `call_${i}`;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id,
            type: "function",
            function: { name: "load_skill", arguments: JSON.stringify({ name: skillName(i) }) },
          },
        ],
      });
      messages.push({ role: "tool", tool_call_id: id, content: "instructions…", meta: { status: "ok" } });
    } else {
      messages.push({ role: "assistant", content: `answer ${i}` });
      messages.push({ role: "user", content: "thanks" });
    }
  }
  return messages.slice(0, 60);
}

function timings(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    medianMs: round(percentile(sorted, 50)),
    p95Ms: round(percentile(sorted, 95)),
    maxMs: round(sorted.at(-1) ?? 0),
  };
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(path.join(os.tmpdir(), "coworker-skills-bench-"));
  try {
    const workspace = path.join(root, "workspace");
    const skillsDir = path.join(workspace, ".coworker", "skills");
    writeSkills(skillsDir);
    const open = (scanIntervalMs: number | undefined, watch: boolean) =>
      openSkills({
        serviceFiles: [],
        workspaceRoot: workspace,
        dataDir: path.join(root, "data"),
        settings: { dirs: [], enabled: [], disabled: [], catalogBudgetTokens: DEFAULT_CATALOG_BUDGET_TOKENS },
        approvers: { approvers: [] },
        scanIntervalMs,
        watch,
      });
    const skills = await open(0, false);
    const watched = await open(0, true);
    const sameTurn = await open(undefined, false);
    const request = createRequest({
      prompt: "next question",
      messages: history(),
      sessionId: "bench",
      platform: "slack",
      model: "m",
      workspace: { root: workspace, context: "" },
      requester: { userId: "U1", displayName: "Ana" },
      mode: "interactive",
    });

    let started = performance.now();
    const context = (await skills.contextPart(request)) ?? "";
    const coldMs = performance.now() - started;

    const warm: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      started = performance.now();
      await skills.contextPart(request);
      warm.push(performance.now() - started);
    }

    await watched.contextPart(request);
    const watchedTurns: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      started = performance.now();
      await watched.contextPart(request);
      watchedTurns.push(performance.now() - started);
    }
    watched.close();

    await sameTurn.contextPart(request);
    const steps: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      started = performance.now();
      await sameTurn.contextPart(request);
      steps.push(performance.now() - started);
    }

    const edited: number[] = [];
    const editedFile = path.join(skillsDir, skillName(5), "SKILL.md");
    for (let i = 0; i < EDITED_TURNS; i++) {
      const when = new Date(Date.now() + (i + 1) * 1_000);
      utimesSync(editedFile, when, when);
      started = performance.now();
      await skills.contextPart(request);
      edited.push(performance.now() - started);
    }

    const enabled = skills.library.enabled(await skills.library.scan());
    const catalog = catalogText(enabled, DEFAULT_CATALOG_BUDGET_TOKENS) ?? "";
    const uncapped = catalogText(enabled, Number.MAX_SAFE_INTEGER) ?? "";
    const lines = catalog.split("\n");
    const listed = lines.filter((line) => line.startsWith("- ")).length;
    const watchedFigures = timings(watchedTurns);
    const results = {
      skills: SKILLS,
      turns: TURNS,
      coldFirstTurnMs: round(coldMs),
      loadAverage: round(os.loadavg()[0] ?? 0, 2),
      cpus: os.cpus().length,
      newMessageWatched: watchedFigures,
      newMessageFullRescan: timings(warm),
      laterCallSameTurn: timings(steps),
      afterOneSkillEdited: timings(edited),
      budgetTokens: DEFAULT_CATALOG_BUDGET_TOKENS,
      catalogTokens: approxTokens(catalog),
      contextPartTokens: approxTokens(context),
      uncappedCatalogTokens: approxTokens(uncapped),
      listedSkills: listed,
      moreLine: lines.at(-1) ?? "",
      bodiesInCatalog: catalog.includes("# Procedure"),
      meetsTarget: watchedFigures.p95Ms < TARGET_MS && approxTokens(catalog) <= DEFAULT_CATALOG_BUDGET_TOKENS,
    };
    await writeResults("skills", results, markdown(results));
    return results;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function markdown(results: {
  readonly [key: string]: unknown;
  readonly newMessageWatched: ReturnType<typeof timings>;
  readonly newMessageFullRescan: ReturnType<typeof timings>;
  readonly laterCallSameTurn: ReturnType<typeof timings>;
  readonly afterOneSkillEdited: ReturnType<typeof timings>;
}): string {
  const w = results.newMessageWatched;
  const f = results.newMessageFullRescan;
  const e = results.afterOneSkillEdited;
  const l = results.laterCallSameTurn;
  return [
    "# Skills benchmark",
    "",
    hostLine(
      new Date().toISOString(),
      `load average ${results.loadAverage} while measuring (a shared machine)`,
      `${SKILLS} skills in the workspace (SKILL.md ≈ 2.3 KB each, one file beside each)`,
    ),
    "",
    "## Per-turn skills context (scan + switches + capped catalog + countermand check, 60-message history)",
    "",
    "| turn | median ms | p95 ms | max ms |",
    "|---|---:|---:|---:|",
    `| cold (every SKILL.md parsed) | ${results.coldFirstTurnMs} | | |`,
    `| new message, folders watched, nothing changed (${TURNS} turns; the default) | **${w.medianMs}** | **${w.p95Ms}** | ${w.maxMs} |`,
    `| new message, full rescan without a watcher (one stat per skill) | ${f.medianMs} | ${f.p95Ms} | ${f.maxMs} |`,
    `| later model call of the same turn: scan reused (${TURNS} calls) | ${l.medianMs} | ${l.p95Ms} | ${l.maxMs} |`,
    `| right after one skill was edited (${EDITED_TURNS} turns, its SKILL.md parsed again) | ${e.medianMs} | ${e.p95Ms} | ${e.maxMs} |`,
    "",
    `Target: under ${TARGET_MS} ms per turn (p95 of the default new-message row) — ${results.meetsTarget ? "met" : "NOT met"}.`,
    "",
    "## Prompt size (tokens ≈ characters / 4)",
    "",
    `- catalog: **${results.catalogTokens}** tokens of a ${results.budgetTokens}-token budget, ${results.listedSkills} of ${SKILLS} skills listed`,
    `- last line: "${results.moreLine}"`,
    `- the uncapped list would be ${results.uncappedCatalogTokens} tokens; skill bodies in the catalog: ${results.bodiesInCatalog ? "yes" : "none"}`,
    "",
  ].join("\n");
}
