import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { statusLabel, ConsoleTurnRenderer } from "../../../src/channels/console/console-renderer.js";
import { TerminalWriter } from "../../../src/channels/console/terminal-writer.js";
import { type AgentEvent, agentEvent } from "../../../src/core/events.js";

function render(events: readonly AgentEvent[]): Promise<string> {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  const renderer = new ConsoleTurnRenderer(new TerminalWriter(out, false), () => undefined);
  return (async () => {
    for (const event of events) await renderer.handle(event);
    return text;
  })();
}

const started = (callId: string, name: string, preview: string) =>
  agentEvent({ type: "tool-call-started", callId, name, args: {}, preview });
const finished = (callId: string, name: string, status: "ok" | "error", outputPreview: string, ms: number) =>
  agentEvent({ type: "tool-call-finished", callId, name, status, outputPreview, files: [], durationMs: ms });

describe("console tool status lines", () => {
  it("names non-command tools, shows commands bare, and gives a failure's first line", async () => {
    const text = await render([
      started("w1", "write_file", "notes/hello.md"),
      finished("w1", "write_file", "ok", "Created notes/hello.md (3 lines, 24 bytes).", 4),
      started("c1", "run_command", "npm test"),
      finished("c1", "run_command", "error", "Failed: npm ERR! missing script: test⏎ [exit code 1]", 3_200),
    ]);
    expect(text.split("\n")).toEqual([
      "▸ Running write_file `notes/hello.md`…",
      "✓ write_file `notes/hello.md` · 0.0 s",
      "▸ Running `npm test`…",
      "✗ `npm test` · failed · 3.2 s — npm ERR! missing script: test",
      "",
    ]);
  });

  it("puts the engine's reason in place of the generic failure word", async () => {
    const text = await render([
      started("c1", "run_command", "npm test"),
      agentEvent({
        type: "tool-call-finished",
        callId: "c1",
        name: "run_command",
        status: "error",
        outputPreview: "Failed: > vitest run",
        files: [],
        durationMs: 3_200,
        reason: "exit 1",
      }),
    ]);
    expect(text.split("\n")).toEqual([
      "▸ Running `npm test`…",
      "✗ `npm test` · exit 1 · 3.2 s — > vitest run",
      "",
    ]);
  });

  it("labels a call by its first non-blank preview line, or by the tool name when there is none", () => {
    expect(statusLabel("\n  git status\ngit diff", "run_command")).toBe("`git status`");
    expect(statusLabel("", "list_subscriptions")).toBe("`list_subscriptions`");
    expect(statusLabel("x".repeat(300), "run_command")).toHaveLength(102);
  });
});
