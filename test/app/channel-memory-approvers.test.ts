/**
 * The memory tools the engine factory builds let the configured approvers (global, or of the
 * conversation's channel, as the approvals configuration names them) change and delete other
 * members' channel memories, as memory-store.ts allows an approver; a plain member of the channel
 * still changes only their own, and without an approvals configuration nobody changes another's.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngineFactory, type EngineFactoryDeps } from "../../src/app/engine-factory.js";
import type { AgentEvent } from "../../src/core/events.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { MemoryStore } from "../../src/tools/memory/memory-store.js";
import { ScriptedProvider, textStep, toolStep } from "../support/scripted-provider.js";
import { collect, engineContext, request, TARGET, tempDir } from "../support/engine-fixtures.js";

let root: string;
let store: Store;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
  store = await createStore({ url: "memory:", dataDir: root });
});
afterEach(async () => {
  await store.close();
  await cleanup();
});

/** The channel's key in the memory store (the thread TARGET is in). */
const CHANNEL = `slack:${TARGET.workspace}:${TARGET.channel}`;

/** Ana's note in the channel, and the store holding it. */
async function anasNote(): Promise<MemoryStore> {
  const memories = new MemoryStore(store.space("memory"), { newId: () => "m1" });
  await memories.add(
    { userKey: "slack:T1:U_ANA", channelKey: CHANNEL },
    { scope: "channel", content: "Deploys are on Tuesdays", summary: "deploys", createdBy: "U_ANA" },
  );
  return memories;
}

const UPDATE = [
  "memory_update",
  { id: "m1", content: "Deploys are on Fridays", summary: "deploys" },
] as const;
const FORGET = ["memory_forget", { id: "m1" }] as const;

/** `userId` has the assembled engine make `calls` in one turn, in auto mode; how each call ended. */
async function ask(
  memories: MemoryStore,
  userId: string,
  deps: Partial<EngineFactoryDeps>,
  ...calls: ReadonlyArray<readonly [string, Record<string, unknown>]>
): Promise<string[]> {
  const provider = new ScriptedProvider([
    ...calls.map(([name, args], i) => toolStep([`c${i}`, name, args])),
    textStep("done"),
  ]);
  const factory = createEngineFactory({
    provider,
    workspaceRoot: root,
    os: "TestOS",
    memory: memories,
    ...deps,
  });
  const { context } = engineContext({ mode: "auto", approver: async () => "once" as const });
  const events: AgentEvent[] = await collect(
    factory(context).run(request({ mode: "auto", requester: { userId, displayName: userId } })),
  );
  return events.flatMap((e) => (e.type === "tool-call-finished" ? [`${e.name}: ${e.status}`] : []));
}

const APPROVALS = {
  approvers: ["slack:U_BOSS", "telegram:U_MEMBER"],
  perChannel: { "slack:C42": ["slack:U_LEAD"] },
};

describe("another member's channel memory, through the memory tools the engine factory builds", () => {
  for (const [who, userId] of [
    ["a global approver", "U_BOSS"],
    ["an approver of the channel", "U_LEAD"],
  ] as const)
    it(`${who} may change and delete it; it stays Ana's`, async () => {
      const memories = await anasNote();
      expect(await ask(memories, userId, { approvals: APPROVALS }, UPDATE)).toEqual(["memory_update: ok"]);
      expect(await memories.list(undefined, CHANNEL)).toMatchObject([
        { id: "m1", content: "Deploys are on Fridays", createdBy: "U_ANA", editedBy: userId },
      ]);
      expect(await ask(memories, userId, { approvals: APPROVALS }, FORGET)).toEqual(["memory_forget: ok"]);
      expect(await memories.list(undefined, CHANNEL)).toEqual([]);
    });

  it("a plain member may not (an approver on another platform with their id is none here), nor anyone without approvals configured", async () => {
    const memories = await anasNote();
    expect(await ask(memories, "U_MEMBER", { approvals: APPROVALS }, UPDATE, FORGET)).toEqual([
      "memory_update: error",
      "memory_forget: error",
    ]);
    expect(await ask(memories, "U_BOSS", {}, UPDATE, FORGET)).toEqual([
      "memory_update: error",
      "memory_forget: error",
    ]);
    expect(await memories.list(undefined, CHANNEL)).toMatchObject([
      { id: "m1", content: "Deploys are on Tuesdays", createdBy: "U_ANA" },
    ]);
  });
});
