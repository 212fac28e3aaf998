import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { SubscriptionToolsService } from "../../src/subscriptions/subscription-tools.js";
import { createSubscriptionTools } from "../../src/subscriptions/subscription-tools.js";
import { createBuiltinTools } from "../../src/tools/builtin-tools.js";
import { interactiveTools } from "../../src/tools/interactive-tools.js";
import type { McpServerConnection } from "../../src/tools/mcp/mcp-server-connection.js";
import { mcpToolsOf } from "../../src/tools/mcp/mcp-tools.js";
import { MemoryStore } from "../../src/tools/memory/memory-store.js";
import { type AnyTool, compactArgs, LABEL_MAX_CHARS, labelText } from "../../src/core/tool.js";
import { unusedMessenger, unusedSpace } from "./support/unused-deps.js";

const unusedService = {} as SubscriptionToolsService;

function builtins(): Map<string, AnyTool> {
  const tools = createBuiltinTools({
    workspace: { root: "/tmp/ws" },
    memory: { store: new MemoryStore(unusedSpace), savingEnabled: () => true },
    messenger: unusedMessenger,
  });
  return new Map(tools.map((tool) => [tool.name, tool]));
}

/** The label of a call, with its arguments validated by the tool's own schema first. */
function labelOf(tool: AnyTool | undefined, args: Record<string, unknown>): string {
  if (!tool?.label) throw new Error(`${tool?.name ?? "tool"} has no label`);
  return tool.label(tool.inputSchema.parse(args));
}

describe("labelText and compactArgs", () => {
  it("keeps a label to its first non-blank line, marks more lines and cuts long text", () => {
    expect(labelText("\n  npm   test  \n")).toBe("npm test");
    expect(labelText("cd app\nnpm test")).toBe("cd app …");
    const long = labelText("x".repeat(200));
    expect(long).toHaveLength(LABEL_MAX_CHARS);
    expect(long.endsWith("…")).toBe(true);
  });

  it("never splits an emoji where a label is cut (half of one is garbage on every platform)", () => {
    // The cut at 79 falls between the emoji's two halves: the label leaves the whole emoji off.
    expect(labelText(`${"a".repeat(78)}😀bc`)).toBe(`${"a".repeat(78)}…`);
    expect(compactArgs({ q: `${"y".repeat(38)}😀z` }, 80)).toBe(`q=${"y".repeat(38)}…`);
  });

  it("renders scalar arguments as key=value, never the raw JSON of long content", () => {
    const label = compactArgs({
      path: "notes/hello.md",
      content: `# Hello\n\nfrom coworker\n${"body ".repeat(500)}`,
      tags: ["a", "b"],
      force: true,
      count: 3,
    });
    expect(label).toBe('path=notes/hello.md content="# Hello …" force=true count=3');
    expect(compactArgs({ q: "y".repeat(500), page: 2 })).toBe(`q=${"y".repeat(39)}… page=2`);
    expect(compactArgs({ steps: [{ title: "x" }] })).toBe("");
    expect(compactArgs({ a: "z".repeat(39), b: "z".repeat(39), c: "z".repeat(39) })).toHaveLength(
      LABEL_MAX_CHARS,
    );
  });
});

describe("tool labels", () => {
  it("every built-in, interactive, subscription and MCP tool has a label", () => {
    const mcp = mcpToolsOf(fakeConnection([{ name: "lookup", inputSchema: { type: "object" } }]));
    const all = [
      ...builtins().values(),
      ...interactiveTools,
      ...createSubscriptionTools(unusedService),
      ...mcp,
    ];
    expect(all.filter((tool) => typeof tool.label !== "function").map((tool) => tool.name)).toEqual([]);
  });

  it("names what each built-in call acts on", () => {
    const tools = builtins();
    const cases: [string, Record<string, unknown>, string][] = [
      ["run_command", { command: "npm test" }, "npm test"],
      ["run_command", { command: "set -e\nnpm ci\nnpm test", timeout_s: 300 }, "set -e …"],
      ["read_file", { path: "src/app.ts" }, "src/app.ts"],
      ["read_file", { path: "src/app.ts", offset: 10, limit: 40 }, "src/app.ts:10-49"],
      ["read_file", { path: "src/app.ts", offset: 10 }, "src/app.ts:10-"],
      ["read_file", { path: "src/app.ts", limit: 40 }, "src/app.ts:1-40"],
      ["write_file", { path: "notes/hello.md", content: "# Hello\n\nfrom coworker\n" }, "notes/hello.md"],
      ["edit_file", { path: "a.ts", old_text: "x", new_text: "y" }, "a.ts"],
      ["list_files", {}, "."],
      ["list_files", { path: "src", depth: 3 }, "src"],
      ["search_files", { pattern: "TODO" }, "TODO"],
      ["search_files", { pattern: "TODO", path: "src", glob: "*.ts" }, "TODO in src (*.ts)"],
      ["web_fetch", { url: "https://example.com/a" }, "https://example.com/a"],
      [
        "web_fetch",
        { url: "https://example.com/a.zip", save_to: "a.zip" },
        "https://example.com/a.zip → a.zip",
      ],
      ["send_message", { channel: "#ops", text: "deploy done" }, "to #ops"],
      ["send_message", { channel: "current", text: "hi" }, "to this conversation"],
      ["send_file", { path: "out/report.pdf", caption: "Q3" }, "out/report.pdf"],
      [
        "remember",
        { content: "Ana prefers tabs.", summary: "Ana prefers tabs", scope: "user" },
        "Ana prefers tabs",
      ],
      [
        "memory_update",
        { id: "m1", content: "Spaces now.", summary: "Ana prefers spaces" },
        "m1: Ana prefers spaces",
      ],
      ["memory_forget", { id: "m1" }, "m1"],
    ];
    for (const [name, args, expected] of cases) expect(labelOf(tools.get(name), args), name).toBe(expected);
  });

  it("labels the interactive and subscription tools by what they ask or watch", () => {
    const [updatePlan, askUser, proposePlan] = interactiveTools;
    expect(
      labelOf(updatePlan, {
        steps: [
          { title: "a", status: "done" },
          { title: "b", status: "in_progress" },
        ],
      }),
    ).toBe("1/2 steps done");
    expect(labelOf(askUser, { question: "Deploy where?" })).toBe("Deploy where?");
    expect(labelOf(askUser, { questions: [{ question: "One?" }, { question: "Two?" }] })).toBe(
      "One? (+1 more)",
    );
    expect(labelOf(proposePlan, { plan: "Fix the parser" })).toBe("Fix the parser");
    const byName = new Map(createSubscriptionTools(unusedService).map((tool) => [tool.name, tool]));
    expect(labelOf(byName.get("subscribe_channel"), { channel: "#deploys" })).toBe("#deploys");
    expect(labelOf(byName.get("unsubscribe_channel"), { channel: "#deploys" })).toBe("#deploys");
    expect(labelOf(byName.get("catch_up"), { channel: "-1001234:5", limit: 20 })).toBe("-1001234:5");
    expect(labelOf(byName.get("list_subscriptions"), {})).toBe("the person's subscriptions");
  });

  it("summarises an MCP call as compact key=value pairs", () => {
    const [tool] = mcpToolsOf(fakeConnection([{ name: "search", inputSchema: { type: "object" } }]));
    expect(labelOf(tool, { query: "open bugs", limit: 5, filters: { state: "open" } })).toBe(
      'query="open bugs" limit=5',
    );
  });
});

function fakeConnection(tools: Tool[]): McpServerConnection {
  return { name: "gh", config: {}, tools } as unknown as McpServerConnection;
}
