import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngineFactory } from "../../src/app/engine-factory.js";
import { ScriptedProvider, textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, makeHarness, message, pressCard, thread } from "../sessions/helpers/harness.js";
import { lastUserText, systemPrompt, tempDir } from "../support/engine-fixtures.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
  await writeFile(path.join(root, "notes.txt"), "alpha\n");
});
afterEach(async () => {
  await cleanup();
});

describe("the engine factory inside the SessionManager", () => {
  it("runs real session turns: reads unasked, asks a person before writing, and carries the thread into the context", async () => {
    const provider = new ScriptedProvider([
      toolStep(["c1", "read_file", { path: "notes.txt" }]),
      textStep("It says alpha."),
      toolStep(["c2", "write_file", { path: "reply.txt", content: "hello" }]),
      textStep("Written."),
    ]);
    const createEngine = createEngineFactory({ provider, workspaceRoot: root, os: "TestOS" });
    const h = await makeHarness({ overrides: { createEngine } });
    const out = h.outputs.for(thread());

    await h.manager.receive(message("What is in notes.txt?"));
    await h.manager.idle();
    expect(out.closedTurns.at(-1)?.events.at(-1)).toMatchObject({
      type: "turn-completed",
      status: "completed",
      finalText: "It says alpha.",
    });
    const first = provider.requests[0]!;
    expect(systemPrompt(first)).toContain(`- Workspace: ${root}`);
    expect(lastUserText(first)).toContain("Platform: slack (thread), channel C1, thread 1700000000.000100");
    expect(lastUserText(first)).toContain(`Asking: ${ANA.name} (user id ${ANA.id})`);

    await h.manager.receive(message("Write hello into reply.txt"));
    const card = await h.outputs.until(
      () => out.latestCards.find((c) => c.kind === "approval" && c.buttons.length > 0),
      "approval card",
    );
    await pressCard(h, card);
    await h.manager.idle();
    expect(await readFile(path.join(root, "reply.txt"), "utf8")).toBe("hello");
    expect(systemPrompt(provider.lastRequest)).toBe(systemPrompt(first));
    provider.assertAllConsumed();
  });
});
