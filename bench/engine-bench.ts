/**
 * Engine overhead benchmark (issue 2): what the TurnEngine itself costs per turn, with an instant
 * scripted provider and instant tools. One turn = 3 tool steps with 2 tool calls each (a
 * concurrent pair of reads, a read + a write, two writes) and a final answer step: 4 model calls,
 * 6 tool calls, auto mode, audit sink attached. Measures CPU ms per turn (process.cpuUsage) and
 * turns/s over 2,000 turns after warm-up; target ≤ 1 ms CPU per turn. Writes
 * bench/results/engine.json and bench/results/engine.md.
 */
import { performance } from "node:perf_hooks";
import { z } from "zod";
import type { ConversationMessage } from "../src/core/messages.js";
import { GrantSet } from "../src/engine/permissions/grants.js";
import { PermissionEngine } from "../src/engine/permissions/permission-engine.js";
import type { ProviderClient, ProviderStreamEvent, RawToolCall } from "../src/engine/provider/provider.js";
import { createRequest } from "../src/core/request.js";
import { TurnEngine } from "../src/engine/turn-engine.js";
import { interactiveTools } from "../src/tools/interactive-tools.js";
import { ToolRegistry } from "../src/tools/registry.js";
import { defineTool, ok } from "../src/core/tool.js";
import { hostLine, writeResults } from "./support/report.js";

const WARMUP_TURNS = 300;
/** Audit records received, counted so the sink does real (if tiny) work. */
let auditRecords = 0;
const MEASURED_TURNS = 2_000;
const TARGET_CPU_MS_PER_TURN = 1;

const call = (id: string, name: string, args: Record<string, unknown>): RawToolCall => ({
  id,
  name,
  arguments: JSON.stringify(args),
});

/** The four model steps of one turn. */
const SCRIPT: readonly (readonly RawToolCall[])[] = [
  [call("a1", "read_file", { path: "src/a.ts" }), call("a2", "read_file", { path: "src/b.ts" })],
  [
    call("b1", "read_file", { path: "src/c.ts" }),
    call("b2", "write_file", { path: "out/c.ts", content: "x" }),
  ],
  [
    call("c1", "write_file", { path: "out/d.ts", content: "y" }),
    call("c2", "write_file", { path: "out/e.ts", content: "z" }),
  ],
  [],
];
const USAGE = { inputTokens: 1_000, outputTokens: 50, totalTokens: 1_050 };

/** Answers instantly, cycling through SCRIPT; ids are made unique per turn. */
class InstantProvider implements ProviderClient {
  private step = 0;
  private turn = 0;

  async *stream(): AsyncGenerator<ProviderStreamEvent> {
    const index = this.step % SCRIPT.length;
    if (index === 0) this.turn++;
    this.step++;
    const calls = SCRIPT[index]!.map((c) => ({ ...c, id: `${c.id}_${this.turn}` }));
    const text = calls.length === 0 ? "All three files are updated." : "Working on it.";
    yield { type: "text-delta", delta: text };
    yield {
      type: "step-finished",
      text,
      toolCalls: calls,
      finishReason: calls.length === 0 ? "stop" : "tool_calls",
      usage: USAGE,
    };
  }
}

function instantTool(name: string, category: "read" | "write", concurrent: boolean) {
  return defineTool({
    name,
    description: `${name} (instant)`,
    inputSchema: z.object({ path: z.string(), content: z.string().optional() }),
    category,
    risk: category === "read" ? "low" : "medium",
    concurrent,
    grantKey: "path",
    execute: async (args) => ok(`${name} ${args.path}: 12 lines`),
  });
}

function makeEngine(): TurnEngine {
  const registry = new ToolRegistry();
  registry.register(instantTool("read_file", "read", true));
  registry.register(instantTool("write_file", "write", false));
  for (const tool of interactiveTools) registry.register(tool);
  return new TurnEngine({
    provider: new InstantProvider(),
    registry,
    permissions: new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] }),
    instructions: "You are a helpful coworker.",
    grants: new GrantSet(),
    facts: { downloadedFiles: new Set() },
    audit: () => {
      auditRecords++;
    },
  });
}

const HISTORY: ConversationMessage[] = Array.from({ length: 10 }, (_, i) =>
  i % 2 === 0
    ? { role: "user", content: `Earlier question ${i}`, meta: { at: "2026-01-01T00:00:00.000Z" } }
    : { role: "assistant", content: `Earlier answer ${i}`, meta: { at: "2026-01-01T00:00:01.000Z" } },
);

const REQUEST = createRequest({
  prompt: "Update the three files.",
  messages: HISTORY,
  sessionId: "bench",
  platform: "console",
  model: "instant",
  workspace: { root: "/work", context: "" },
  requester: { userId: "U1", displayName: "Bench" },
  mode: "auto",
});

async function oneTurn(engine: TurnEngine): Promise<number> {
  let events = 0;
  for await (const event of engine.run(REQUEST)) {
    events++;
    if (event.type === "turn-completed" && event.status !== "completed")
      throw new Error(`turn ended ${event.status}`);
  }
  return events;
}

async function measure(turns: number) {
  const engine = makeEngine();
  for (let i = 0; i < WARMUP_TURNS; i++) await oneTurn(engine);
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  let events = 0;
  auditRecords = 0;
  for (let i = 0; i < turns; i++) events += await oneTurn(engine);
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1_000;
  return {
    turns,
    modelCallsPerTurn: SCRIPT.length,
    toolCallsPerTurn: SCRIPT.reduce((n, step) => n + step.length, 0),
    eventsPerTurn: events / turns,
    auditRecordsPerTurn: auditRecords / turns,
    cpuMsPerTurn: Number((cpuMs / turns).toFixed(4)),
    wallMsPerTurn: Number((wallMs / turns).toFixed(4)),
    turnsPerSecond: Math.round(turns / (wallMs / 1_000)),
  };
}

function markdown(results: Record<string, unknown>, m: Awaited<ReturnType<typeof measure>>): string {
  const verdict = m.cpuMsPerTurn <= TARGET_CPU_MS_PER_TURN ? "✅ within target" : "❌ over target";
  return [
    "# Engine overhead benchmark",
    "",
    hostLine(String(results.generatedAt)),
    "",
    `One turn: ${m.modelCallsPerTurn} model calls (instant scripted provider), ${m.toolCallsPerTurn} instant tool calls (3 steps × 2), auto mode, audit sink attached; ${WARMUP_TURNS} warm-up turns, then ${m.turns} measured.`,
    "",
    "| metric | value |",
    "|---|---|",
    `| CPU ms per turn | ${m.cpuMsPerTurn} (target ≤ ${TARGET_CPU_MS_PER_TURN}: ${verdict}) |`,
    `| wall ms per turn | ${m.wallMsPerTurn} |`,
    `| turns per second | ${m.turnsPerSecond} |`,
    `| events per turn | ${m.eventsPerTurn} |`,
    `| audit records per turn | ${m.auditRecordsPerTurn} |`,
    "",
  ].join("\n");
}

/** Run the engine benchmark, write bench/results/engine.{json,md}, and return the figures. */
export async function run(): Promise<Record<string, unknown>> {
  const figures = await measure(MEASURED_TURNS);
  const results: Record<string, unknown> = {
    generatedAt: new Date().toISOString(),
    node: process.version,
    targetCpuMsPerTurn: TARGET_CPU_MS_PER_TURN,
    withinTarget: figures.cpuMsPerTurn <= TARGET_CPU_MS_PER_TURN,
    ...figures,
  };
  await writeResults("engine", results, markdown(results, figures));
  return results;
}
