import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createBuiltinTools } from "../../src/tools/builtin-tools.js";
import { MemoryStore } from "../../src/tools/memory/memory-store.js";
import { unusedMessenger, unusedSpace } from "./support/unused-deps.js";

describe("createBuiltinTools", () => {
  it("builds the file, shell and web tools, with the metadata the permission engine needs", () => {
    const tools = createBuiltinTools({ workspace: { root: "/tmp/ws" } });
    const table = Object.fromEntries(
      tools.map((t) => [
        t.name,
        [t.category, t.concurrent, t.grantKey ?? null, typeof t.preview === "function"],
      ]),
    );
    expect(table).toEqual({
      read_file: ["read", true, null, false],
      list_files: ["read", true, null, false],
      search_files: ["read", true, null, false],
      write_file: ["write", false, "path", true],
      edit_file: ["write", false, "path", true],
      run_command: ["exec", false, "command", true],
      web_fetch: ["network", true, "domain", true],
    });
  });

  it("adds memory and messaging tools only when their dependencies are given", () => {
    const tools = createBuiltinTools({
      workspace: { root: "/tmp/ws" },
      memory: { store: new MemoryStore(unusedSpace), savingEnabled: () => true },
      messenger: unusedMessenger,
    });
    expect(tools.slice(7).map((t) => [t.name, t.category])).toEqual([
      ["remember", "write"],
      ["memory_update", "write"],
      ["memory_forget", "write"],
      ["send_message", "messaging"],
      ["send_file", "messaging"],
    ]);
  });

  it("every tool advertises a JSON Schema with exactly the documented argument names", () => {
    const tools = createBuiltinTools({
      workspace: { root: "/tmp/ws" },
      memory: { store: new MemoryStore(unusedSpace), savingEnabled: () => true },
      messenger: unusedMessenger,
    });
    const args = Object.fromEntries(
      tools.map((t) => {
        const schema = z.toJSONSchema(t.inputSchema) as {
          properties: Record<string, unknown>;
          required?: string[];
        };
        return [t.name, { all: Object.keys(schema.properties), required: schema.required ?? [] }];
      }),
    );
    expect(args).toEqual({
      read_file: { all: ["path", "offset", "limit"], required: ["path"] },
      list_files: { all: ["path", "depth"], required: [] },
      search_files: { all: ["pattern", "path", "glob"], required: ["pattern"] },
      write_file: { all: ["path", "content"], required: ["path", "content"] },
      edit_file: { all: ["path", "old_text", "new_text"], required: ["path", "old_text", "new_text"] },
      run_command: { all: ["command", "timeout_s"], required: ["command"] },
      web_fetch: { all: ["url", "save_to"], required: ["url"] },
      remember: { all: ["content", "summary", "scope"], required: ["content", "summary", "scope"] },
      memory_update: { all: ["id", "content", "summary"], required: ["id", "content", "summary"] },
      memory_forget: { all: ["id"], required: ["id"] },
      send_message: { all: ["channel", "text"], required: ["channel", "text"] },
      send_file: { all: ["path", "caption"], required: ["path"] },
    });
  });
});
