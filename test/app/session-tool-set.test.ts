/**
 * SessionToolSets: sessions share the built-in and interactive tools (built once per Messenger,
 * not once per session), yet a channel's new Messenger and the MCP servers' current tools reach
 * every session built after them, and each session's extra tools stay its own.
 */
import os from "node:os";
import { describe, expect, it } from "vitest";
import { MAX_TOOLS_PER_REQUEST, SessionToolSets } from "../../src/app/session-tool-set.js";
import { type AnyTool, ok } from "../../src/core/tool.js";
import { askUserTool } from "../../src/tools/interactive-tools.js";
import type { Messenger } from "../../src/tools/messaging/messenger.js";
import { makeContext } from "../tools/support/tool-context.js";
import { readTool } from "../support/engine-fixtures.js";

/** The tools are built, never run on files here: any existing folder serves as the workspace. */
const root = os.tmpdir();

const tool = (name: string): AnyTool => readTool(name, `${name} ran`);

function messengerNamed(where: string): Messenger & { readonly sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    sendMessage: async (_from, _channel, text) => {
      sent.push(text);
      return { ok: true, where };
    },
    destinationOf: async () => where,
    sendFile: async () => ({ ok: true, where }),
  };
}

describe("SessionToolSets", () => {
  it("gives every session with the same Messenger the same built-in and interactive tools", () => {
    const messenger = messengerNamed("slack");
    const sets = new SessionToolSets({
      workspace: { root, extraRoots: [] },
      limits: { resultMaxChars: 1_000 },
      messengerFor: () => messenger,
    });
    const first = sets.registryFor("slack");
    const second = sets.registryFor("slack");
    expect(first.list().length).toBeGreaterThan(5);
    expect(second.list()).toEqual(first.list());
    for (const [index, shared] of first.list().entries()) expect(second.list()[index]).toBe(shared);
  });

  it("builds the tools again for a channel's new Messenger, and sessions after it send through that one", async () => {
    const before = messengerNamed("old");
    const after = messengerNamed("new");
    let current = before;
    const sets = new SessionToolSets({ workspace: { root, extraRoots: [] }, messengerFor: () => current });
    const old = sets.registryFor("slack");
    current = after;
    const renewed = sets.registryFor("slack");
    const send = (registry: typeof old) =>
      registry.get("send_message")!.execute({ channel: "C1", text: "hello" }, makeContext());
    await send(renewed);
    await send(old);
    expect(after.sent).toEqual(["hello"]);
    expect(before.sent).toEqual(["hello"]);
    expect(renewed.get("read_file")).not.toBe(old.get("read_file"));
  });

  it("lists the MCP servers' tools for each session, after the shared ones, and keeps extra tools per session", () => {
    let mcp = [tool("files__stat")];
    const sets = new SessionToolSets({ workspace: { root, extraRoots: [] }, mcp: { tools: () => mcp } });
    const first = sets.registryFor("telegram", [tool("subscribe_channel")]);
    mcp = [tool("files__stat"), tool("files__list")];
    const second = sets.registryFor("telegram");
    expect(
      first
        .list()
        .map((t) => t.name)
        .slice(-3),
    ).toEqual(["propose_plan", "files__stat", "subscribe_channel"]);
    expect(second.get("files__list")).toBeDefined();
    expect(second.get("subscribe_channel")).toBeUndefined();
  });

  it("gives the MCP servers only the room the other tools leave in one model request", () => {
    const offered = Array.from({ length: 300 }, (_, n) => tool(`big__t${n}`));
    const rooms: number[] = [];
    const sets = new SessionToolSets({
      workspace: { root, extraRoots: [] },
      mcp: {
        tools: (room) => {
          rooms.push(room);
          return offered.slice(0, Math.max(0, room));
        },
      },
    });
    const registry = sets.registryFor("telegram", [tool("subscribe_channel")]);
    expect(registry.list()).toHaveLength(MAX_TOOLS_PER_REQUEST);
    expect(registry.get("read_file")).toBeDefined();
    expect(registry.get("subscribe_channel")).toBeDefined();
    expect(rooms).toHaveLength(1);
  });

  it("leaves the built-in interactive tools as they are, but caps the results of another tool claiming their category", async () => {
    const sets = new SessionToolSets({
      workspace: { root, extraRoots: [] },
      limits: { resultMaxChars: 1_000 },
    });
    const claimant: AnyTool = {
      ...tool("shout"),
      category: "interactive",
      execute: async () => ok("x".repeat(5_000)),
    };
    const registry = sets.registryFor("slack", [claimant]);
    expect(registry.get("ask_user")).toBe(askUserTool);
    const result = await registry.get("shout")!.execute({}, makeContext());
    expect(result.output.length).toBeLessThan(1_100);
  });
});
