/**
 * Reviewer benchmark (issue 13): what reviewed mode adds per reviewed call on the engine side, and
 * what one review costs in tokens.
 *
 * Latency: the same one-call turn (the model asks for write_file, then answers) runs in auto mode
 * (no review) and in reviewed mode with an instant in-process reviewer model that answers "allow"
 * at once — so the difference is the engine's own work: extracting the user's lines and facts
 * from history, rendering the request, parsing the verdict, the timer, audit and notice. 2,000
 * turns per mode after warm-up, interleaved; p50 / p99 wall ms per turn and their difference.
 *
 * Tokens: the reviewer request of a typical call (a three-message request, one ask_user answer,
 * run_command with a test command, one fact), counted with gpt-tokenizer's gpt-4o chat encoding
 * (o200k); completion = a typical one-sentence verdict. Writes bench/results/reviewer.{json,md}.
 */
import { performance } from "node:perf_hooks";
import { encodeChat } from "gpt-tokenizer";
import { z } from "zod";
import { GrantSet } from "../src/engine/permissions/grants.js";
import { PermissionEngine } from "../src/engine/permissions/permission-engine.js";
import type { ProviderClient, ProviderStreamEvent } from "../src/engine/provider/provider.js";
import { createRequest } from "../src/core/request.js";
import type { PermissionMode } from "../src/core/modes.js";
import { reviewMessages } from "../src/engine/reviewer/review-input.js";
import { Reviewer } from "../src/engine/reviewer/reviewer.js";
import { ReviewerGate } from "../src/engine/reviewer/reviewer-gate.js";
import type { ReviewerModel } from "../src/engine/reviewer/reviewer-model.js";
import { TurnEngine } from "../src/engine/turn-engine.js";
import { interactiveTools } from "../src/tools/interactive-tools.js";
import { ToolRegistry } from "../src/tools/registry.js";
import { defineTool, ok } from "../src/core/tool.js";
import { hostLine, percentile, writeResults } from "./support/report.js";

const WARMUP_TURNS = 300;
const MEASURED_TURNS = 2_000;
const VERDICT = JSON.stringify({
  verdict: "allow",
  reason: "Running the project's tests is a routine step of the request.",
});

/** One write_file call, then a short answer. */
class OneCallProvider implements ProviderClient {
  private step = 0;
  async *stream(): AsyncGenerator<ProviderStreamEvent> {
    const first = this.step++ % 2 === 0;
    yield {
      type: "step-finished",
      text: first ? "" : "done",
      toolCalls: first
        ? [{ id: `w${this.step}`, name: "write_file", arguments: '{"path":"out/a.txt","content":"x"}' }]
        : [],
      finishReason: first ? "tool_calls" : "stop",
      usage: undefined,
    };
  }
}

const instantReviewer: ReviewerModel = {
  complete: async () => ({ text: VERDICT, tokensIn: 0, tokensOut: 0 }),
};

function engineFor(reviewed: boolean): TurnEngine {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "write_file",
      description: "Write a text file in the workspace.",
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      category: "write",
      risk: "medium",
      concurrent: false,
      execute: async () => ok("written"),
    }),
  );
  for (const tool of interactiveTools) registry.register(tool);
  return new TurnEngine({
    provider: new OneCallProvider(),
    registry,
    permissions: new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] }),
    instructions: "You are a benchmark agent.",
    grants: new GrantSet(),
    facts: { downloadedFiles: new Set() },
    audit: () => undefined,
    ...(reviewed
      ? {
          reviewer: new ReviewerGate({
            reviewer: new Reviewer({ model: instantReviewer, timeoutMs: 10_000 }),
            shadow: false,
          }),
        }
      : {}),
  });
}

async function turn(engine: TurnEngine, mode: PermissionMode, i: number): Promise<number> {
  const request = createRequest({
    prompt: "Write x into out/a.txt",
    messages: [],
    sessionId: "bench",
    turnId: `t${i}`,
    platform: "console",
    model: "bench",
    workspace: { root: "/work", context: "" },
    requester: { userId: "U1", displayName: "Ann" },
    mode,
  });
  const started = performance.now();
  for await (const _ of engine.run(request)) {
    // drain
  }
  return performance.now() - started;
}

function typicalTokens(): { prompt: number; completion: number } {
  const messages = reviewMessages({
    userLines: [
      { text: "The CI is red on main since this morning; can you find out why?", isReply: false },
      { text: "yes, go ahead and fix it", isReply: true },
      { text: "Please run the unit tests for the parser package and fix what fails.", isReply: false },
    ],
    tool: {
      name: "run_command",
      description: "Run a shell command in the workspace and return its output (exit code, stdout, stderr).",
      category: "exec",
    },
    args: { command: "npm test -- packages/parser", timeout_s: 300 },
    facts: ['"packages/parser/test/fixtures.ts" was written by the agent 2 tool calls ago.'],
  });
  const prompt = encodeChat(
    messages.map((m) => ({ role: m.role, content: m.content })),
    "gpt-4o",
  ).length;
  const completion = encodeChat([{ role: "assistant", content: VERDICT }], "gpt-4o").length;
  return { prompt, completion };
}

const ms = (value: number) => Number(value.toFixed(3));

/** Run the benchmark; writes bench/results/reviewer.{json,md}. */
export async function run(): Promise<Record<string, unknown>> {
  const auto = engineFor(false);
  const reviewed = engineFor(true);
  for (let i = 0; i < WARMUP_TURNS; i++) {
    await turn(auto, "auto", i);
    await turn(reviewed, "reviewed", i);
  }
  const autoTimes: number[] = [];
  const reviewedTimes: number[] = [];
  for (let i = 0; i < MEASURED_TURNS; i++) {
    autoTimes.push(await turn(auto, "auto", WARMUP_TURNS + i));
    reviewedTimes.push(await turn(reviewed, "reviewed", WARMUP_TURNS + i));
  }
  autoTimes.sort((a, b) => a - b);
  reviewedTimes.sort((a, b) => a - b);
  const p = (values: number[], q: number) => ms(percentile(values, q));
  const tokens = typicalTokens();
  const results = {
    generatedAt: new Date().toISOString(),
    turns: MEASURED_TURNS,
    autoTurnMs: { p50: p(autoTimes, 50), p99: p(autoTimes, 99) },
    reviewedTurnMs: { p50: p(reviewedTimes, 50), p99: p(reviewedTimes, 99) },
    addedPerReviewedCallMs: {
      p50: ms(percentile(reviewedTimes, 50) - percentile(autoTimes, 50)),
      p99: ms(percentile(reviewedTimes, 99) - percentile(autoTimes, 99)),
    },
    reviewerTokensPerCall: {
      prompt: tokens.prompt,
      completion: tokens.completion,
      total: tokens.prompt + tokens.completion,
    },
  };
  const markdown = [
    "# Reviewer benchmark",
    "",
    hostLine(results.generatedAt),
    "",
    `One-call turns (write_file, then an answer), ${MEASURED_TURNS} per mode after ${WARMUP_TURNS} warm-up, interleaved.`,
    "Reviewed mode uses an instant in-process reviewer model answering allow, so the difference is the engine's own work.",
    "",
    "| | p50 ms | p99 ms |",
    "|---|---|---|",
    `| auto mode turn (no review) | ${results.autoTurnMs.p50} | ${results.autoTurnMs.p99} |`,
    `| reviewed mode turn (1 review) | ${results.reviewedTurnMs.p50} | ${results.reviewedTurnMs.p99} |`,
    `| **added per reviewed call** | **${results.addedPerReviewedCallMs.p50}** | **${results.addedPerReviewedCallMs.p99}** |`,
    "",
    `Reviewer tokens per call for a typical request (gpt-4o / o200k chat encoding): ${tokens.prompt} prompt + ${tokens.completion} completion = ${tokens.prompt + tokens.completion}.`,
    "",
  ].join("\n");
  await writeResults("reviewer", results, markdown);
  return results;
}
