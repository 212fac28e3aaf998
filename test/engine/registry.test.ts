import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PermissionMode } from "../../src/core/modes.js";
import { createRequest } from "../../src/core/request.js";
import {
  MALFORMED_ARGUMENTS_ERROR,
  parseToolArguments,
  TRUNCATED_ARGUMENTS_ERROR,
  ToolRegistry,
} from "../../src/tools/registry.js";
import { defineTool, ok } from "../../src/core/tool.js";
import { RunLog, testRegistry } from "./helpers/test-tools.js";

function request(mode: PermissionMode, allowedTools: string[] | null = null) {
  return createRequest({
    prompt: "x",
    messages: [],
    sessionId: "s",
    platform: "console",
    model: "m",
    workspace: { root: "/w", context: "" },
    requester: { userId: "u", displayName: "U" },
    mode,
    allowedTools,
  });
}

const names = (registry: ToolRegistry, mode: PermissionMode, allowed: string[] | null = null) =>
  registry.schemasFor(request(mode, allowed)).map((s) => s.name);

describe("ToolRegistry", () => {
  const registry = testRegistry(new RunLog());
  const interactive = request("interactive");

  it("converts a tool's input schema once for every registry (sessions build their own), frozen", () => {
    const inputSchema = z.object({ path: z.string().describe("where") });
    const make = () =>
      defineTool({
        name: "t",
        description: "t",
        inputSchema,
        category: "read",
        risk: "low",
        concurrent: true,
        execute: async () => ok(""),
      });
    const [first, second] = [new ToolRegistry(), new ToolRegistry()];
    first.register(make());
    second.register(make());
    const a = first.schemasFor(request("interactive"))[0]!.parameters;
    const b = second.schemasFor(request("interactive"))[0]!.parameters;
    expect(a).toBe(b);
    expect(a).toMatchObject({ type: "object", properties: { path: { type: "string" } } });
    expect(Object.isFrozen((a as { properties: object }).properties)).toBe(true);
  });

  it("rejects duplicate names and supports unregister", () => {
    const r = new ToolRegistry();
    const t = defineTool({
      name: "t",
      description: "t",
      inputSchema: z.object({}),
      category: "read",
      risk: "low",
      concurrent: true,
      execute: async () => ok(""),
    });
    r.register(t);
    expect(() => r.register(t)).toThrow(/already registered/);
    r.unregister("t");
    expect(r.get("t")).toBeUndefined();
    expect(r.list()).toEqual([]);
  });

  it("advertises tools by mode and allowed tools", () => {
    expect(names(registry, "interactive")).toEqual([
      "read_file",
      "grep",
      "write_file",
      "run_command",
      "web_fetch",
      "send_message",
      "update_plan",
      "ask_user",
    ]);
    expect(names(registry, "plan")).toEqual(["read_file", "grep", "update_plan", "ask_user", "propose_plan"]);
    expect(names(registry, "discuss")).toEqual(["read_file", "grep", "update_plan", "ask_user"]);
    expect(names(registry, "auto", ["read_file"])).toEqual(["read_file", "update_plan"]);
  });

  it("converts zod schemas to JSON Schema once and honours tool.jsonSchema", () => {
    const first = registry.schemasFor(request("auto"));
    const second = registry.schemasFor(request("auto"));
    expect(first[0]).toBe(second[0]);
    expect(first[0]?.parameters).toMatchObject({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    });
    expect(first[0]?.parameters).not.toHaveProperty("$schema");
    const r = new ToolRegistry();
    const raw = { type: "object", properties: { q: { type: "string" } } };
    r.register(
      defineTool({
        name: "mcp_tool",
        description: "from MCP",
        inputSchema: z.looseObject({}),
        jsonSchema: raw,
        category: "network",
        risk: "medium",
        concurrent: false,
        execute: async () => ok(""),
      }),
    );
    expect(r.schemasFor(request("auto"))[0]?.parameters).toEqual(raw);
  });

  it("validates arguments and names the problem", () => {
    expect(registry.validate("read_file", '{"path":"a.txt"}', interactive)).toMatchObject({
      ok: true,
      args: { path: "a.txt" },
    });
    const unknown = registry.validate("nope", "{}", interactive);
    expect(unknown).toEqual({ ok: false, error: expect.stringMatching(/Unknown tool "nope".*read_file/) });
    const wrong = registry.validate("write_file", '{"path": 3}', interactive);
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) {
      expect(wrong.error).toMatch(/write_file/);
      expect(wrong.error).toMatch(/path: .*expected string/);
      expect(wrong.error).toMatch(/content: /);
    }
    const nested = registry.validate(
      "update_plan",
      '{"steps":[{"title":"a","status":"later"}]}',
      interactive,
    );
    expect(nested.ok || nested.error).toMatch(/steps\[0\]\.status/);
    expect(registry.validate("ask_user", "{}", interactive).ok).toBe(false);
    expect(registry.validate("ask_user", '{"questions":[{"question":"which?"}]}', interactive).ok).toBe(true);
  });

  it("answers an unknown tool with only the tools the request offers (its allowed tools, its mode)", () => {
    const listed = (req: ReturnType<typeof request>) => {
      const result = registry.validate("nope", "{}", req);
      if (result.ok) throw new Error("nope is not a tool");
      return result.error
        .replace(/^Unknown tool "nope"\. Available tools: /, "")
        .replace(/\.$/, "")
        .split(", ");
    };
    expect(listed(interactive)).toEqual(names(registry, "interactive"));
    expect(listed(request("discuss"))).toEqual(names(registry, "discuss"));
    expect(listed(request("discuss"))).not.toContain("write_file");
    expect(listed(request("auto", ["read_file"]))).toEqual(names(registry, "auto", ["read_file"]));
    expect(listed(request("auto", ["read_file"]))).not.toContain("run_command");
    expect(new ToolRegistry().validate("nope", "{}", interactive)).toEqual({
      ok: false,
      error: 'Unknown tool "nope". Available tools: none.',
    });
  });

  it("diagnoses mangled arguments: truncated vs malformed", () => {
    expect(registry.validate("read_file", '{"path": "a', interactive, "length")).toEqual({
      ok: false,
      error: TRUNCATED_ARGUMENTS_ERROR,
    });
    expect(registry.validate("read_file", '{"path": "a', interactive, "tool_calls")).toEqual({
      ok: false,
      error: MALFORMED_ARGUMENTS_ERROR,
    });
    expect(registry.validate("read_file", "[1,2]", interactive)).toEqual({
      ok: false,
      error: MALFORMED_ARGUMENTS_ERROR,
    });
    expect(parseToolArguments("  ")).toEqual({ kind: "object", value: {} });
    expect(parseToolArguments("null")).toEqual({ kind: "mangled" });
  });
});
