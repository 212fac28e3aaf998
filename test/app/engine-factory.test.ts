import { symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngineFactory, type EngineFactoryDeps } from "../../src/app/engine-factory.js";
import { DISCUSS_MODE_REMINDER, MEMORY_SWITCHED_OFF_NOTICE } from "../../src/engine/context-provider.js";
import { MEMORY_GUIDANCE, MEMORY_OFF_STATEMENT, NARRATION_RULE } from "../../src/engine/instructions.js";
import type { AgentEvent } from "../../src/core/events.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { MemoryStore } from "../../src/tools/memory/memory-store.js";
import { MEMORY_OFF_MESSAGE } from "../../src/tools/memory/memory-tools.js";
import { ScriptedProvider, textStep, toolStep } from "../support/scripted-provider.js";
import {
  collect,
  engineContext,
  lastUserText,
  request,
  systemPrompt,
  TARGET,
  tempDir,
  toolNames,
} from "../support/engine-fixtures.js";
import { AGENTS_MD_FRESH_MS } from "../../src/engine/session-knowledge.js";
import { TurnEngine } from "../../src/engine/turn-engine.js";

const NOW = new Date("2026-11-29T14:05:00Z");
let root: string;
let store: Store;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  const temp = await tempDir();
  root = temp.dir;
  cleanup = temp.cleanup;
  store = await createStore({ url: "memory:", dataDir: root });
  await writeFile(path.join(root, "notes.txt"), "alpha\nbeta\n");
});
afterEach(async () => {
  await store.close();
  await cleanup();
});

function factory(provider: ScriptedProvider, deps: Partial<EngineFactoryDeps> = {}) {
  return createEngineFactory({
    provider,
    workspaceRoot: root,
    now: () => NOW,
    os: "TestOS 1.0 (x64)",
    ...deps,
  });
}

const finished = (events: AgentEvent[]) => events.filter((e) => e.type === "tool-call-finished");
const completed = (events: AgentEvent[]) => events.find((e) => e.type === "turn-completed");

describe("createEngineFactory", () => {
  it("builds an engine that reads a workspace file and answers, with the full system prompt and tool schemas", async () => {
    await writeFile(path.join(root, "AGENTS.md"), "Always run the tests before you say done.");
    const provider = new ScriptedProvider([
      toolStep(["c1", "read_file", { path: "notes.txt" }]),
      textStep("notes.txt lists alpha and beta."),
    ]);
    const { context, appended, approvals } = engineContext();
    const engine = factory(provider, { userRules: "Answer in English." })(context);
    const events = await collect(
      engine.run(request({ prompt: "What is in notes.txt?", workspace: { root, context: "" } })),
    );

    expect(completed(events)).toMatchObject({
      status: "completed",
      finalText: "notes.txt lists alpha and beta.",
    });
    expect(finished(events)).toMatchObject([{ callId: "c1", name: "read_file", status: "ok" }]);
    expect(approvals).toEqual([]); // reads never ask
    provider.assertAllConsumed();

    const [first, second] = provider.requests;
    const system = systemPrompt(first!);
    expect(system).toContain(NARRATION_RULE);
    expect(system).toContain(`- Workspace: ${root}`);
    expect(system).toContain("- Operating system: TestOS 1.0 (x64)");
    expect(system).toContain("- Conversation started: 2026-11-29 14:05 UTC (Sunday)");
    expect(system).toContain("- Chat platform: slack");
    expect(system).toContain("Always run the tests before you say done.");
    expect(system).toContain("Answer in English.");
    expect(system).toContain(MEMORY_OFF_STATEMENT); // no memory store wired: saving is honestly off
    expect(toolNames(first!)).toEqual([
      "read_file",
      "list_files",
      "search_files",
      "write_file",
      "edit_file",
      "run_command",
      "web_fetch",
      "update_plan",
      "ask_user",
    ]);
    const readSchema = first!.tools.find((t) => t.name === "read_file")!.parameters;
    expect(Object.keys(readSchema.properties as object)).toEqual(["path", "offset", "limit"]);
    expect(second!.messages.find((m) => m.role === "tool")?.content).toMatch(/1\talpha\n2\tbeta/);
    expect(systemPrompt(second!)).toBe(system);

    // The per-turn context reaches the model on the last user message but is never persisted.
    const sent = lastUserText(first!);
    expect(sent.startsWith("What is in notes.txt?\n\n<context>\n")).toBe(true);
    expect(sent).toContain("Platform: slack (thread), channel C42, thread 1700.1");
    expect(sent).toContain("Asking: Ana (user id U_ANA)");
    const storedUser = appended.find((m) => m.role === "user");
    expect(storedUser?.content).toBe("What is in notes.txt?");
    expect(JSON.stringify(appended)).not.toContain("<context>");
  });

  it("discuss mode advertises no write, exec or network tools and reminds the mode; plan mode adds propose_plan", async () => {
    const provider = new ScriptedProvider([textStep("Here is how I would do it."), textStep("Plan coming.")]);
    const make = factory(provider);
    const discuss = make(engineContext({ mode: "discuss" }).context);
    await collect(discuss.run(request({ mode: "discuss" })));
    const plan = make(engineContext({ mode: "plan" }).context);
    await collect(plan.run(request({ mode: "plan" })));

    const [d, p] = provider.requests;
    expect(toolNames(d!)).toEqual(["read_file", "list_files", "search_files", "update_plan", "ask_user"]);
    expect(lastUserText(d!)).toContain(DISCUSS_MODE_REMINDER);
    expect(toolNames(p!)).toEqual([
      "read_file",
      "list_files",
      "search_files",
      "update_plan",
      "ask_user",
      "propose_plan",
    ]);
    expect(lastUserText(p!)).toContain("Plan mode is active");
  });

  it("fixes the instructions at the session's first turn: a later AGENTS.md change waits for a new session", async () => {
    const provider = new ScriptedProvider([textStep("a"), textStep("b"), textStep("c")]);
    let clock = NOW.getTime();
    const make = factory(provider, { now: () => new Date(clock) });
    const { context, history } = engineContext();
    const made = make(context);
    expect(made).toBeInstanceOf(TurnEngine); // the session drives the engine itself, no layer between
    const engine = history.track(made);
    await writeFile(path.join(root, "AGENTS.md"), "Version one."); // after the engine, before its first turn
    await collect(engine.run(request()));
    await writeFile(path.join(root, "AGENTS.md"), "Version two.");
    await collect(engine.run(request({ messages: history.messages })));
    // A session that starts a second after the change or later reads the new version.
    clock += AGENTS_MD_FRESH_MS;
    const fresh = make(engineContext().context);
    await collect(fresh.run(request()));
    const [one, two, three] = provider.requests.map(systemPrompt);
    expect(one).toContain("Version one.");
    expect(two).toBe(one);
    expect(three).toContain("Version two.");
  });

  it("shows a notice on the first turn when AGENTS.md could not be read, and still answers", async () => {
    const outside = await tempDir("coworker-outside-");
    await writeFile(path.join(outside.dir, "secret.md"), "TOP-SECRET");
    await symlink(path.join(outside.dir, "secret.md"), path.join(root, "AGENTS.md"));
    const provider = new ScriptedProvider([textStep("ok")]);
    const events = await collect(factory(provider)(engineContext().context).run(request()));
    await outside.cleanup();
    expect(events[0]).toMatchObject({ type: "notice", level: "warning" });
    expect((events[0] as { message: string }).message).toContain("AGENTS.md was not read");
    expect(completed(events)).toMatchObject({ status: "completed" });
    expect(systemPrompt(provider.lastRequest)).not.toContain("TOP-SECRET");
  });
});

describe("memory in the assembled engine", () => {
  /** Ana's DM with the bot, where her personal memories are loaded. */
  const DM = { ...TARGET, channel: "D_ANA" };
  const seed = async (memories: MemoryStore) => {
    await memories.add(
      { userKey: "slack:T1:U_ANA", channelKey: `slack:T1:${DM.channel}` },
      {
        scope: "user",
        content: "Ana wants answers in bullet points",
        summary: "bullets",
        createdBy: "U_ANA",
      },
    );
  };

  it("puts the asker's memories and the when-to-remember rules into the instructions and offers the memory tools", async () => {
    const memories = new MemoryStore(store.space("memory"), { newId: () => "m1" });
    await seed(memories);
    const provider = new ScriptedProvider([textStep("ok")]);
    await collect(
      factory(provider, { memory: memories })(engineContext({ target: DM }).context).run(
        request({ metadata: { target: DM } }),
      ),
    );
    const system = systemPrompt(provider.lastRequest);
    expect(system).toContain(MEMORY_GUIDANCE);
    expect(system).toContain("- [m1] Ana wants answers in bullet points");
    expect(toolNames(provider.lastRequest)).toEqual(
      expect.arrayContaining(["remember", "memory_update", "memory_forget"]),
    );
  });

  it("memory off: the instructions say so, known memories stay, and remember refuses", async () => {
    const memories = new MemoryStore(store.space("memory"), { newId: () => "m1" });
    await seed(memories);
    const provider = new ScriptedProvider([
      toolStep(["c1", "remember", { content: "likes tea", summary: "tea", scope: "user" }]),
      textStep("I can't save that."),
    ]);
    const { context } = engineContext({ mode: "auto", target: DM });
    const engine = factory(provider, { memory: memories, memoryEnabled: () => false })(context);
    const events = await collect(engine.run(request({ mode: "auto", metadata: { target: DM } })));
    const system = systemPrompt(provider.requests[0]!);
    expect(system).toContain(MEMORY_OFF_STATEMENT);
    expect(system).not.toContain(MEMORY_GUIDANCE);
    expect(system).toContain("Ana wants answers in bullet points");
    expect(finished(events)).toMatchObject([{ name: "remember", status: "error" }]);
    expect(provider.requests[1]!.messages.find((m) => m.role === "tool")?.content).toContain(
      MEMORY_OFF_MESSAGE,
    );
    expect(await memories.list("slack:T1:U_ANA")).toHaveLength(1);
  });

  it("the saving switch is read when the first turn starts, not when the engine is made", async () => {
    const memories = new MemoryStore(store.space("memory"));
    let saving = true;
    const provider = new ScriptedProvider([textStep("a")]);
    const engine = factory(provider, { memory: memories, memoryEnabled: () => saving })(
      engineContext().context,
    );
    saving = false;
    await collect(engine.run(request()));
    expect(systemPrompt(provider.lastRequest)).toContain(MEMORY_OFF_STATEMENT);
    expect(lastUserText(provider.lastRequest)).not.toContain("Saving memories");
  });

  it("switching saving off mid-session reaches the next turn's context, not the fixed instructions", async () => {
    const memories = new MemoryStore(store.space("memory"));
    let saving = true;
    const provider = new ScriptedProvider([textStep("a"), textStep("b")]);
    const { context, history } = engineContext();
    const engine = history.track(
      factory(provider, { memory: memories, memoryEnabled: () => saving })(context),
    );
    await collect(engine.run(request()));
    saving = false;
    await collect(engine.run(request({ messages: history.messages })));
    const [before, after] = provider.requests;
    expect(lastUserText(before!)).not.toContain(MEMORY_SWITCHED_OFF_NOTICE);
    expect(lastUserText(after!)).toContain(MEMORY_SWITCHED_OFF_NOTICE);
    expect(systemPrompt(after!)).toBe(systemPrompt(before!));
  });

  describe("in a shared thread", () => {
    const ANA_SECRET = "Ana is interviewing at a competitor next week";
    const BOB = { userId: "U_BOB", displayName: "Bob" };
    /** Ana's personal memory, saved in her DM with the bot: it follows her into every chat. */
    const seedAna = async () => {
      const memories = new MemoryStore(store.space("memory"), { newId: () => "m1" });
      await memories.add(
        { userKey: "slack:T1:U_ANA", channelKey: "slack:T1:D_ANA" },
        { scope: "user", content: ANA_SECRET, summary: "private", createdBy: "U_ANA" },
      );
      return memories;
    };
    /** Bob's turn persisted while waiting to approve a write (after `before`). */
    const bobWaiting = (before: readonly ConversationMessage[]): ConversationMessage[] => [
      ...before,
      { role: "user", content: "write it down" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "w1",
            type: "function",
            function: { name: "write_file", arguments: JSON.stringify({ path: "out.txt", content: "x" }) },
          },
        ],
      },
    ];
    const fixedPart = (system: string) => system.slice(0, system.indexOf("<memories>"));

    it("no turn's system prompt has a person's own memories, the asker's included; each names its asker, the shared part first", async () => {
      const memories = await seedAna();
      const provider = new ScriptedProvider([textStep("hi Ana"), textStep("hi Bob"), textStep("hi again")]);
      const { context, history } = engineContext();
      const engine = history.track(factory(provider, { memory: memories })(context));
      await collect(engine.run(request()));
      await collect(engine.run(request({ messages: history.messages, requester: BOB })));
      await collect(engine.run(request({ messages: history.messages })));
      const [ana, bob, anaAgain] = provider.requests.map(systemPrompt) as [string, string, string];
      for (const system of [ana, bob]) {
        expect(system).not.toContain(ANA_SECRET);
        expect(system).toContain("You have no saved memories about this channel yet.");
        expect(system).toContain("personal memories");
      }
      expect(ana).toContain('"This user" is Ana, user id U_ANA');
      expect(bob).toContain('"This user" is Bob, user id U_BOB');
      expect(anaAgain).toBe(ana);
      expect(fixedPart(bob)).toBe(fixedPart(ana));
      expect(fixedPart(ana).endsWith(`${MEMORY_GUIDANCE}\n\n`)).toBe(true);
    });

    it("a turn of Bob resumed after an approval is Bob's, not Ana's, on the same engine or after a restart", async () => {
      const memories = await seedAna();
      const provider = new ScriptedProvider([textStep("hi Ana"), textStep("written"), textStep("written")]);
      const approve = { approver: async () => "once" as const };
      const build = factory(provider, { memory: memories });
      const { context, history } = engineContext(approve);
      const engine = history.track(build(context));
      await collect(engine.run(request()));
      const waiting = bobWaiting(history.messages);
      const resumed = await collect(
        engine.resume(request({ messages: waiting, prompt: "", requester: BOB })),
      );
      const restarted = build(engineContext(approve).context);
      const afterRestart = await collect(
        restarted.resume(request({ messages: waiting, prompt: "", requester: BOB })),
      );
      for (const events of [resumed, afterRestart])
        expect(finished(events)).toMatchObject([{ callId: "w1", name: "write_file", status: "ok" }]);
      const [ana, ...bob] = provider.requests.map(systemPrompt);
      expect(ana).toContain('"This user" is Ana, user id U_ANA');
      expect(bob).toHaveLength(2);
      for (const system of bob) {
        expect(system).not.toContain(ANA_SECRET);
        expect(system).toContain('"This user" is Bob, user id U_BOB');
      }
    });
  });
});
