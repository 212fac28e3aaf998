import { describe, expect, it } from "vitest";
import { toolLabel } from "../../../src/channels/shared/tool-line-label.js";
import {
  noteLine,
  streamNoteLine,
  type ToolLineState,
  toolLine,
} from "../../../src/channels/slack/slack-status-lines.js";

const state = (over: Partial<ToolLineState>): ToolLineState => ({
  callId: "c1",
  name: "run_command",
  preview: "npm test",
  status: "running",
  ...over,
});

describe("Slack tool status lines", () => {
  it("shows a command by itself, in code, updating from running to its outcome", () => {
    expect(toolLine(state({}))).toBe(":hourglass_flowing_sand: Running `npm test`…");
    expect(toolLine(state({ status: "ok", durationMs: 3_200 }))).toBe("✓ `npm test` · 3.2 s");
    expect(toolLine(state({ status: "error", durationMs: 850 }))).toBe("✗ `npm test` · 850 ms");
    expect(toolLine(state({ status: "denied" }))).toBe("⊘ `npm test` — denied");
  });

  it("says why a call did not succeed when the engine gives a reason", () => {
    expect(toolLine(state({ status: "error", durationMs: 3_200, reason: "exit 1" }))).toBe(
      "✗ `npm test` · exit 1",
    );
    expect(toolLine(state({ status: "denied", reason: "denied by policy" }))).toBe(
      "⊘ `npm test` · denied by policy",
    );
    expect(toolLine(state({ status: "error", reason: "<not> found & gone" }))).toBe(
      "✗ `npm test` · &lt;not&gt; found &amp; gone",
    );
    expect(toolLine(state({ status: "ok", durationMs: 3_200, reason: "exit 0" }))).toBe(
      "✓ `npm test` · 3.2 s",
    );
  });

  it("says what let a call run without a person's press, while running and after", () => {
    const cleared = { clearedBy: "allowed by reviewer: a <routine> read" };
    expect(toolLine(state(cleared))).toBe(
      ":hourglass_flowing_sand: Running `npm test`… · allowed by reviewer: a &lt;routine&gt; read",
    );
    expect(toolLine(state({ ...cleared, status: "ok", durationMs: 3_200 }))).toBe(
      "✓ `npm test` · 3.2 s · allowed by reviewer: a &lt;routine&gt; read",
    );
  });

  it("names the tool before the label of any other call", () => {
    const write = state({ name: "write_file", preview: "notes/hello.md", status: "ok", durationMs: 12 });
    expect(toolLine(write)).toBe("✓ write_file `notes/hello.md` · 12 ms");
    expect(toolLabel(write)).toBe("write_file notes/hello.md");
    expect(toolLabel(state({}))).toBe("npm test");
  });

  it("shows the tool name alone when a call has no label yet (waiting for approval)", () => {
    const waiting = state({ name: "web_fetch", preview: "", waiting: "approval" });
    expect(toolLine(waiting)).toBe(":double_vertical_bar: `web_fetch` — waiting for approval");
    expect(toolLabel(waiting)).toBe("web_fetch");
  });

  it("keeps the code span intact and escaped, and the label on one short line", () => {
    const tricky = state({ preview: "echo `date` > <out>.txt &&\n  cat  it" });
    expect(toolLine(tricky)).toBe(
      ":hourglass_flowing_sand: Running `echo ˋdateˋ &gt; &lt;out&gt;.txt &amp;&amp; cat it`…",
    );
    expect(toolLabel(state({ preview: "x".repeat(300) })).length).toBeLessThanOrEqual(80);
  });
});

describe("Slack note lines", () => {
  const LIVE = "<!channel> <@U0CEO> <https://x.example|approve> &";

  it("escapes a notice's and a problem's message, so it cannot mention anyone or link", () => {
    expect(noteLine({ kind: "notice", level: "warning", message: LIVE })).toBe(
      ":warning: &lt;!channel&gt; &lt;@U0CEO&gt; &lt;https://x.example|approve&gt; &amp;",
    );
    expect(noteLine({ kind: "problem", message: LIVE })).toBe(
      ":warning: &lt;!channel&gt; &lt;@U0CEO&gt; &lt;https://x.example|approve&gt; &amp;",
    );
  });

  it("cuts a long problem before escaping it, so no entity is cut", () => {
    const line = noteLine({ kind: "problem", message: `${"x".repeat(298)}<!channel>` });
    expect(line).toBe(`:warning: ${"x".repeat(298)}&lt;…`);
  });

  it("leaves the stream's note unescaped (the stream makes its mentions inert)", () => {
    expect(streamNoteLine({ kind: "notice", level: "info", message: LIVE })).toBe(
      `:information_source: ${LIVE}`,
    );
  });
});
