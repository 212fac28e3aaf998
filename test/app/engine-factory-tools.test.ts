import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngineFactory, type EngineFactoryDeps } from "../../src/app/engine-factory.js";
import { engineOptionsFromConfig } from "../../src/app/engine-config.js";
import { unsandboxedBackend } from "../../src/tools/shell/sandbox-backend.js";
import { configSchema, type CoworkerConfig } from "../../src/config/schema.js";
import type { AgentEvent } from "../../src/core/events.js";
import type { EngineContext } from "../../src/sessions/engine-context.js";
import type { Messenger } from "../../src/tools/messaging/messenger.js";
import type { AnyTool } from "../../src/core/tool.js";
import { ScriptedProvider, textStep, toolStep } from "../support/scripted-provider.js";
import {
  collect,
  engineContext,
  readTool,
  request,
  TARGET,
  tempDir,
  toolNames,
} from "../support/engine-fixtures.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

const messenger: Messenger = {
  sendMessage: async () => ({ ok: true, where: "x" }),
  destinationOf: async () => "x",
  sendFile: async () => ({ ok: true, where: "x" }),
};

const noisyTool = (name: string, output = "y".repeat(5000)): AnyTool => readTool(name, output);

const make = (provider: ScriptedProvider, deps: Partial<EngineFactoryDeps> = {}) =>
  createEngineFactory({ provider, workspaceRoot: root, os: "TestOS", ...deps });

const finished = (events: AgentEvent[]) => events.filter((e) => e.type === "tool-call-finished");

describe("the session's tool set", () => {
  it("offers messaging tools only on platforms with a Messenger", async () => {
    const provider = new ScriptedProvider([textStep("a"), textStep("b")]);
    const factory = make(provider, {
      messengerFor: (platform) => (platform === "slack" ? messenger : undefined),
    });
    await collect(factory(engineContext().context).run(request()));
    const telegram = { ...TARGET, platform: "telegram", workspace: "tg" };
    await collect(
      factory(engineContext({ target: telegram }).context).run(request({ platform: "telegram" })),
    );
    const [slack, tg] = provider.requests;
    expect(toolNames(slack!)).toEqual(expect.arrayContaining(["send_message", "send_file"]));
    expect(toolNames(tg!)).not.toContain("send_message");
    expect(toolNames(tg!)).not.toContain("send_file");
  });

  it("adds MCP tools and per-session extra tools after the built-in and interactive ones", async () => {
    const provider = new ScriptedProvider([textStep("a")]);
    const seen: EngineContext[] = [];
    const factory = make(provider, {
      mcp: { tools: () => [noisyTool("files__stat")] },
      extraTools: (context) => {
        seen.push(context);
        return [noisyTool("subscribe_channel")];
      },
    });
    const { context } = engineContext();
    await collect(factory(context).run(request()));
    expect(toolNames(provider.lastRequest).slice(-4)).toEqual([
      "update_plan",
      "ask_user",
      "files__stat",
      "subscribe_channel",
    ]);
    expect(seen).toEqual([context]);
  });

  it("caps every tool result at resultMaxChars before it reaches the model", async () => {
    const provider = new ScriptedProvider([toolStep(["c1", "noisy", {}]), textStep("done")]);
    const factory = make(provider, {
      extraTools: () => [noisyTool("noisy")],
      toolLimits: { resultMaxChars: 300 },
    });
    await collect(factory(engineContext().context).run(request()));
    const result = provider.lastRequest.messages.find((m) => m.role === "tool")?.content as string;
    expect(result).toContain("[4700 characters omitted]");
    expect(result.length).toBeLessThan(400);
  });

  it("two tools with one name are a configuration error naming the tool", () => {
    const factory = make(new ScriptedProvider(), { extraTools: () => [noisyTool("read_file")] });
    expect(() => factory(engineContext().context)).toThrow('tool "read_file" is already registered');
  });
});

describe("the session's permission policy", () => {
  it("runs an allowed command prefix unasked, asks for others, and hard-denies configured patterns", async () => {
    const provider = new ScriptedProvider([
      toolStep(
        ["c1", "run_command", { command: "echo hello" }],
        ["c2", "run_command", { command: "touch other.txt" }],
        ["c3", "run_command", { command: "echo danger-zone" }],
      ),
      textStep("done"),
    ]);
    const factory = make(provider, { allowedCommandPrefixes: ["echo"], hardDenyPatterns: ["danger-zone"] });
    const { context, approvals } = engineContext();
    const events = await collect(factory(context).run(request()));
    const statuses = finished(events).map((e) => [e.callId, e.status]);
    expect(statuses.sort()).toEqual([
      ["c1", "ok"],
      ["c2", "denied"],
      ["c3", "denied"],
    ]);
    expect(approvals).toEqual(["run_command"]); // only c2 asked a person; c3 never reached one
    const results = Object.fromEntries(
      provider.lastRequest.messages.flatMap((m) => (m.role === "tool" ? [[m.tool_call_id, m.content]] : [])),
    );
    expect(results.c1).toContain("hello");
    expect(results.c3).toContain("hard-deny");
  });

  it("an invalid hard-deny pattern fails at startup, not in a session", () => {
    expect(() => make(new ScriptedProvider(), { hardDenyPatterns: ["(unclosed"] })).toThrow(
      "invalid hard-deny pattern /(unclosed/",
    );
  });
});

describe("engineOptionsFromConfig", () => {
  it("maps the config keys to the factory's options", () => {
    const config = configSchema.parse({
      agent: { rules: "Be brief.", memory: { enabled: false }, tool_result_max_chars: 1234 },
      workspace: { root: "/srv/ws", extra_roots: ["/srv/shared"] },
      tools: {
        allowed_commands: ["git status"],
        hard_deny: ["rm -rf /"],
        run_command: { default_timeout_s: 30, max_timeout_s: 90, output_max_chars: 5000 },
        web_fetch: { allow_private: true, max_bytes: 1000, timeout_s: 7 },
      },
    }) as CoworkerConfig;
    const shell = unsandboxedBackend();
    const options = engineOptionsFromConfig(config, { shell, serviceFiles: ["/srv/data"] });
    expect(options.memoryEnabled?.()).toBe(false);
    expect({ ...options, memoryEnabled: undefined }).toEqual({
      workspaceRoot: "/srv/ws",
      extraRoots: ["/srv/shared"],
      offLimits: ["/srv/data"],
      userRules: "Be brief.",
      memoryEnabled: undefined,
      toolLimits: {
        runCommand: {
          defaultTimeoutS: 30,
          maxTimeoutS: 90,
          outputMaxChars: 5000,
          sandbox: shell,
          limits: {
            cpuSeconds: 600,
            fileSizeMb: 1024,
            processes: 1024,
            memoryMb: 1024,
            addressSpaceMb: 8192,
          },
        },
        webFetch: { allowPrivate: true, maxBytes: 1000, timeoutMs: 7000 },
        resultMaxChars: 1234,
      },
      allowedCommandPrefixes: ["git status"],
      hardDenyPatterns: ["rm -rf /"],
      media: {
        vision: "auto",
        visionFamilies: [],
        imageDetail: "auto",
        imageMaxBytes: 8 * 1024 * 1024,
        maxImagesPerCall: 8,
        maxImageBytesPerCall: 20 * 1024 * 1024,
      },
    });
  });
});
