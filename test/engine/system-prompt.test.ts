import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/core/events.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import type { KnowledgePart } from "../../src/engine/session-knowledge.js";
import { SystemPrompt } from "../../src/engine/system-prompt.js";
import { TurnEngine } from "../../src/engine/turn-engine.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ScriptedProvider, type ScriptedStep, textStep } from "../support/scripted-provider.js";
import {
  collect,
  engineContext,
  lastUserText,
  request,
  systemPrompt,
  TurnHistory,
} from "../support/engine-fixtures.js";

/** A TurnEngine whose instructions are built by a builder that waits until the test releases (or fails) it. */
function deferred(steps: ScriptedStep[]) {
  const provider = new ScriptedProvider(steps);
  const { context, appended } = engineContext();
  /** One entry per build begun. */
  const built: true[] = [];
  let release: (notice?: string) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const history = new TurnHistory(appended);
  const engine = history.track(
    new TurnEngine({
      provider,
      registry: new ToolRegistry(),
      permissions: new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] }),
      instructions: () => {
        built.push(true);
        return new Promise<KnowledgePart>((resolve, reject) => {
          release = (notice) => resolve(notice === undefined ? { text: "built" } : { text: "built", notice });
          fail = reject;
        });
      },
      grants: context.grants,
      facts: context.facts,
      persistence: context.persistence,
    }),
  );
  return {
    engine,
    history,
    provider,
    appended,
    built,
    release: (notice?: string) => release(notice),
    fail: (error: Error) => fail(error),
  };
}

/** Wait until `built` holds `count` builds (the turn has started and asked for its instructions). */
async function untilBuilding(built: readonly unknown[], count = 1): Promise<void> {
  while (built.length < count) await new Promise((resolve) => setImmediate(resolve));
}

const lastOf = (events: AgentEvent[]) => events.at(-1);

describe("instructions built on the session's first turn", () => {
  it("are built once, on the first turn, and every turn sends them; the build's notice comes first", async () => {
    const h = deferred([textStep("one"), textStep("two")]);
    const first = collect(h.engine.run(request()));
    await untilBuilding(h.built);
    expect(h.engine.isRunning).toBe(true);
    h.release("AGENTS.md was not read");
    const events = await first;
    expect(events[0]).toMatchObject({ type: "notice", level: "warning", message: "AGENTS.md was not read" });
    expect(lastOf(events)).toMatchObject({ type: "turn-completed", status: "completed", finalText: "one" });
    const second = await collect(
      h.engine.run(
        request({ messages: h.history.messages, requester: { userId: "U_BEN", displayName: "Ben" } }),
      ),
    );
    expect(second.some((e) => e.type === "notice")).toBe(false);
    expect(lastOf(second)).toMatchObject({ type: "turn-completed", finalText: "two" });
    expect(h.built).toHaveLength(1);
    expect(h.provider.requests.map(systemPrompt)).toEqual(["built", "built"]);
    expect(h.history.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(h.engine.isRunning).toBe(false);
  });

  it("a stop while they are built ends the turn as interrupted, with the user message stored and no model call", async () => {
    const h = deferred([]);
    const turn = collect(h.engine.run(request({ prompt: "do it" })));
    await untilBuilding(h.built);
    h.engine.interrupt();
    h.release();
    const events = await turn;
    expect(lastOf(events)).toMatchObject({ type: "turn-completed", status: "interrupted" });
    expect(h.provider.requests).toHaveLength(0);
    expect(h.appended.map((m) => [m.role, m.content])).toEqual([["user", "do it"]]);
  });

  it("steering sent while they are built joins the first turn", async () => {
    const h = deferred([textStep("both done")]);
    const turn = collect(h.engine.run(request({ prompt: "first" })));
    await untilBuilding(h.built);
    h.engine.steer("and also this");
    h.release();
    await turn;
    expect(lastUserText(h.provider.lastRequest)).toMatch(/^and also this/);
    expect(h.provider.lastRequest.messages.filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("a second turn is refused while the first builds them", async () => {
    const h = deferred([textStep("ok")]);
    const turn = collect(h.engine.run(request()));
    await untilBuilding(h.built);
    const refused = await collect(h.engine.run(request()));
    expect(refused).toEqual([
      { type: "error", message: "A turn is already running in this conversation.", recoverable: true },
    ]);
    h.release();
    expect(lastOf(await turn)).toMatchObject({ status: "completed" });
    expect(h.built).toHaveLength(1);
  });

  it("a failed build fails that turn only, before any model call; the next turn builds again", async () => {
    const h = deferred([textStep("recovered")]);
    const turn = collect(h.engine.run(request()));
    await untilBuilding(h.built);
    h.fail(new Error("disk gone"));
    const failed = await turn;
    expect(failed.find((e) => e.type === "error")).toMatchObject({
      message: expect.stringContaining("disk gone"),
    });
    expect(lastOf(failed)).toMatchObject({ type: "turn-completed", status: "error" });
    expect(h.provider.requests).toHaveLength(0);
    expect(h.engine.isRunning).toBe(false);
    const retry = collect(h.engine.run(request()));
    await untilBuilding(h.built, 2);
    h.release();
    expect(lastOf(await retry)).toMatchObject({ status: "completed", finalText: "recovered" });
    expect(h.provider.requests.map(systemPrompt)).toEqual(["built"]);
  });

  it("a failure posted into the thread is scrubbed of token-shaped text (the engine's emit scrubs every error and notice)", async () => {
    const h = deferred([]);
    const turn = collect(h.engine.run(request()));
    await untilBuilding(h.built);
    h.fail(
      new Error("fetch https://admin:hunter2secret@vault.internal/v1 failed with xoxb-1234567890-abcdef"),
    );
    const error = (await turn).find((e) => e.type === "error");
    expect(error).toMatchObject({
      message:
        "The turn failed unexpectedly: fetch https://admin:[redacted]@vault.internal/v1 failed with xoxb-[redacted]",
    });
  });

  it("a caller that stops listening stops the turn and its model request", async () => {
    const h = deferred([{ text: ["thinking"], hang: true }]);
    const events = h.engine.run(request());
    const pending = events.next();
    await untilBuilding(h.built);
    h.release();
    let step = await pending;
    while (!step.done && step.value.type !== "text-delta") step = await events.next();
    expect(step.value).toMatchObject({ type: "text-delta", delta: "thinking" });
    expect(h.engine.isRunning).toBe(true);
    await events.return(undefined);
    expect(h.engine.isRunning).toBe(false);
    expect(h.provider.signals[0]?.aborted).toBe(true);
  });
});

describe("SystemPrompt", () => {
  it("puts the fixed part first, then the requester's, with the notices of both", async () => {
    const prompt = new SystemPrompt(
      async () => ({ text: "fixed", notice: "AGENTS.md was not read" }),
      async ({ requester }) => ({ text: `about ${requester.displayName}`, notice: "memories came late" }),
    );
    expect(await prompt.forTurn(request())).toEqual({
      text: "fixed\n\nabout Ana",
      notices: ["AGENTS.md was not read", "memories came late"],
    });
  });

  it("keeps the built fixed part: later turns do not build it again and repeat no notice of it", async () => {
    let builds = 0;
    const prompt = new SystemPrompt(async () => {
      builds++;
      return { text: `fixed ${builds}`, notice: "AGENTS.md was not read" };
    });
    await prompt.forTurn(request());
    expect(await prompt.forTurn(request())).toEqual({ text: "fixed 1", notices: [] });
    expect(builds).toBe(1);
  });

  it("answers at once, without a wait, when the fixed part is settled and there is no requester's part", () => {
    expect(new SystemPrompt("fixed").forTurn(request())).toEqual({ text: "fixed", notices: [] });
    expect(new SystemPrompt("").forTurn(request())).toEqual({ text: "", notices: [] });
  });

  it("leaves out empty parts", async () => {
    expect(await new SystemPrompt("", async () => ({ text: "about Ana" })).forTurn(request())).toEqual({
      text: "about Ana",
      notices: [],
    });
    expect(
      await new SystemPrompt(
        async () => ({}),
        async () => ({}),
      ).forTurn(request()),
    ).toEqual({
      text: "",
      notices: [],
    });
  });
});
