import { describe, expect, it } from "vitest";
import { type PreparedSession, SessionEngine } from "../../src/engine/session-engine.js";
import type { AgentEvent } from "../../src/core/events.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import type { SessionTurnEngine } from "../../src/engine/session-turn-engine.js";
import { TurnEngine, type TurnEngineOptions } from "../../src/engine/turn-engine.js";
import type { TurnEvents } from "../../src/engine/turn-events.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ScriptedProvider, type ScriptedStep, textStep } from "../support/scripted-provider.js";
import { collect, engineContext, lastUserText, request, systemPrompt } from "../support/engine-fixtures.js";

/** A SessionEngine whose preparation waits until the test releases (or fails) it. */
function deferred(steps: ScriptedStep[]) {
  const provider = new ScriptedProvider(steps);
  const { context, appended } = engineContext();
  const options: TurnEngineOptions = {
    provider,
    registry: new ToolRegistry(),
    permissions: new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] }),
    instructions: "base",
    grants: context.grants,
    facts: context.facts,
    persistence: context.persistence,
  };
  /** One entry per preparation begun. */
  const prepared: true[] = [];
  let release: (notices?: string[]) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const engine = new SessionEngine(() => {
    prepared.push(true);
    return new Promise<PreparedSession>((resolve, reject) => {
      release = (notices = []) =>
        resolve({ engine: new TurnEngine({ ...options, instructions: "prepared" }), notices });
      fail = reject;
    });
  });
  return {
    engine,
    provider,
    appended,
    prepared,
    release: (notices?: string[]) => release(notices),
    fail: (error: Error) => fail(error),
  };
}

/** Wait until the preparation was requested (the turn's generator has started). */
async function untilPreparing(prepared: readonly unknown[]): Promise<void> {
  while (prepared.length === 0) await new Promise((resolve) => setImmediate(resolve));
}

const lastOf = (events: AgentEvent[]) => events.at(-1);

describe("SessionEngine", () => {
  it("prepares once, on the first turn, and runs every turn on the prepared engine", async () => {
    const h = deferred([textStep("one"), textStep("two")]);
    const first = collect(h.engine.run(request()));
    await untilPreparing(h.prepared);
    expect(h.engine.isRunning).toBe(true);
    expect(h.engine.prepared).toBe(false);
    h.release(["AGENTS.md was not read"]);
    const events = await first;
    expect(events[0]).toMatchObject({ type: "notice", level: "warning", message: "AGENTS.md was not read" });
    expect(lastOf(events)).toMatchObject({ type: "turn-completed", status: "completed", finalText: "one" });
    const second = await collect(
      h.engine.run(
        request({ messages: h.engine.messages, requester: { userId: "U_BEN", displayName: "Ben" } }),
      ),
    );
    expect(second.some((e) => e.type === "notice")).toBe(false);
    expect(lastOf(second)).toMatchObject({ type: "turn-completed", finalText: "two" });
    expect(h.prepared).toHaveLength(1);
    expect(h.provider.requests.map(systemPrompt)).toEqual(["prepared", "prepared"]);
    expect(h.engine.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(h.engine.isRunning).toBe(false);
  });

  it("a stop while preparing ends the turn as interrupted, with the user message stored and no model call", async () => {
    const h = deferred([]);
    const turn = collect(h.engine.run(request({ prompt: "do it" })));
    await untilPreparing(h.prepared);
    h.engine.interrupt();
    h.release();
    const events = await turn;
    expect(lastOf(events)).toMatchObject({ type: "turn-completed", status: "interrupted" });
    expect(h.provider.requests).toHaveLength(0);
    expect(h.appended.map((m) => [m.role, m.content])).toEqual([["user", "do it"]]);
  });

  it("steering sent while preparing joins the first turn", async () => {
    const h = deferred([textStep("both done")]);
    const turn = collect(h.engine.run(request({ prompt: "first" })));
    await untilPreparing(h.prepared);
    h.engine.steer("and also this");
    h.release();
    await turn;
    expect(lastUserText(h.provider.lastRequest)).toMatch(/^and also this/);
    expect(h.provider.lastRequest.messages.filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("refuses a second turn while the first is preparing", async () => {
    const h = deferred([textStep("ok")]);
    const turn = collect(h.engine.run(request()));
    await untilPreparing(h.prepared);
    const refused = await collect(h.engine.run(request()));
    expect(refused).toEqual([
      { type: "error", message: "A turn is already running in this conversation.", recoverable: true },
    ]);
    h.release();
    expect(lastOf(await turn)).toMatchObject({ status: "completed" });
  });

  it("a failed preparation fails that turn only; the next turn prepares again", async () => {
    const h = deferred([textStep("recovered")]);
    const turn = collect(h.engine.run(request()));
    await untilPreparing(h.prepared);
    h.fail(new Error("disk gone"));
    await expect(turn).rejects.toThrow("disk gone");
    expect(h.engine.isRunning).toBe(false);
    const retry = collect(h.engine.run(request()));
    await untilPreparing(h.prepared.slice(1));
    h.release();
    expect(lastOf(await retry)).toMatchObject({ status: "completed", finalText: "recovered" });
    expect(h.prepared).toHaveLength(2);
  });

  it("a caller that stops listening stops the real turn and its model request", async () => {
    const h = deferred([{ text: ["thinking"], hang: true }]);
    const events = h.engine.run(request());
    const pending = events.next();
    await untilPreparing(h.prepared);
    h.release();
    let step = await pending;
    while (!step.done && step.value.type !== "text-delta") step = await events.next();
    expect(step.value).toMatchObject({ type: "text-delta", delta: "thinking" });
    expect(h.engine.isRunning).toBe(true);
    await events.return(undefined);
    expect(h.engine.isRunning).toBe(false);
    expect(h.provider.signals[0]?.aborted).toBe(true);
  });

  it("once prepared, hands each turn's events straight from the prepared engine", async () => {
    const direct: TurnEvents = {
      [Symbol.asyncIterator]() {
        return this;
      },
      next: async () => ({ value: undefined, done: true }),
      return: async () => ({ value: undefined, done: true }),
    };
    const inner: SessionTurnEngine = {
      run: () => direct,
      resume: () => direct,
      retry: () => direct,
      interrupt: () => undefined,
      steer: () => undefined,
      messages: [],
      isRunning: false,
    };
    const engine = new SessionEngine(async () => ({ engine: inner, notices: [] }));
    const first = engine.run(request());
    expect(first).not.toBe(direct);
    expect(await collect(first)).toEqual([]);
    expect(engine.run(request())).toBe(direct);
    expect(engine.resume(request())).toBe(direct);
    expect(engine.retry(request())).toBe(direct);
  });
});
