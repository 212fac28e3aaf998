/**
 * The record saves nothing waits on — a plan approval's mode, a grant an "Always allow" press
 * adds — when the store write fails: the failure is logged with the session's id and is never an
 * unhandled rejection (the app ends the process on one, every session with it). The change stays
 * in memory and the next save carries it; no tool starts meanwhile, so the turn's next call fails
 * with the store's error, shown in the thread.
 */
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import type { KeyValueSpace, StoreNamespace } from "../../src/store/store.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { WrappedStore } from "../support/wrapped-store.js";
import { BOSS, type Harness, makeHarness, message, openStore, pressCard, thread } from "./helpers/harness.js";
import { ToolRuns } from "./helpers/test-tools.js";

/** Fails the first session-record write whose JSON contains `marker`. */
class FailRecordWriteOnce extends WrappedStore {
  failed = false;
  constructor(
    inner: ConstructorParameters<typeof WrappedStore>[0],
    private readonly marker: string,
  ) {
    super(inner);
  }

  protected wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    if (namespace !== "sessions") return inner;
    const failOnce =
      (write: (...args: never[]) => Promise<unknown>) =>
      async (...args: never[]) => {
        if (!this.failed && JSON.stringify(args).includes(this.marker)) {
          this.failed = true;
          throw new Error("transient store error");
        }
        return write(...args);
      };
    return new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        const bound = value.bind(target);
        return prop === "set" || prop === "setMany" ? failOnce(bound) : bound;
      },
    });
  }
}

let h: Harness | undefined;
const unhandled: unknown[] = [];
const onRejection = (error: unknown) => unhandled.push(error);
afterEach(async () => {
  process.off("unhandledRejection", onRejection);
  unhandled.length = 0;
  await h?.manager.drain(1_000);
  await h?.store.close();
  h = undefined;
});

/** A harness over a store failing one record write, logging errors into `logged`. */
async function failingHarness(
  marker: string,
  mode: "plan" | "interactive",
  steps: Parameters<typeof makeHarness>[0],
) {
  process.on("unhandledRejection", onRejection);
  const store = new FailRecordWriteOnce(await openStore(), marker);
  const logged: Record<string, unknown>[] = [];
  const logger = pino({ level: "error" }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const defaults = { model: "m", provider: "scripted", mode, maxSteps: 10, queueMode: "followup" as const };
  h = await makeHarness({ ...steps, store, overrides: { defaults, logger } });
  return { h, store, logged };
}

/** After the microtasks and the next turn of the event loop: where an unhandled rejection shows. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("record saves nothing waits on", () => {
  it("a failed save of a plan approval's mode is logged, its turn's next tool does not start, the turn's end saves the mode", async () => {
    const runs = new ToolRuns();
    const { h, store, logged } = await failingHarness('"mode":"interactive"', "plan", {
      runs,
      steps: [
        toolStep(["p1", "propose_plan", { plan: "1. write b." }]),
        toolStep(["c1", "write_note", { text: "b" }]),
        textStep("done"),
      ],
    });
    await h.manager.receive(message("plan it"));
    const out = h.outputs.for(thread());
    const plan = await h.outputs.until(() => out.latestCards.find((c) => c.kind === "plan"), "plan card");
    expect((await pressCard(h, plan, "plan_interactive", BOSS)).status).toBe("accepted");
    const card = await h.outputs.until(
      () => out.latestCards.find((c) => c.tool === "write_note"),
      "write card",
    );
    expect((await pressCard(h, card, "once", BOSS)).status).toBe("accepted");
    const turn = await h.outputs.until(() => out.closedTurns[0], "turn end");
    await h.manager.idle();
    await settled();
    expect(store.failed).toBe(true);
    expect(unhandled.map(String)).toEqual([]);
    const sessionId = turn.sessionId;
    expect(logged.map((l) => [l.sessionId, l.msg])).toContainEqual([
      sessionId,
      "the switch to interactive mode could not be saved",
    ]);
    expect(runs.count("c1")).toBe(0);
    expect(turn.events.find((e) => e.type === "error")).toMatchObject({
      message: expect.stringContaining("transient store error"),
    });
    const records = new SessionRecords(h.store.space("sessions"));
    const stored = await records.get((await records.currentId(sessionKeyOf(thread()))) ?? "");
    expect(stored?.mode).toBe("interactive");
  });

  it("a failed save of a grant an 'Always allow' press adds is logged, never unhandled", async () => {
    const runs = new ToolRuns();
    const { h, store, logged } = await failingHarness('"grants":[{', "interactive", {
      runs,
      steps: [toolStep(["c1", "write_note", { text: "b" }]), textStep("done")],
    });
    await h.manager.receive(message("write b"));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(() => out.latestCards[0], "card");
    expect((await pressCard(h, card, "always_tool", BOSS)).status).toBe("accepted");
    const turn = await h.outputs.until(() => out.closedTurns[0], "turn end");
    await h.manager.idle();
    await settled();
    expect(store.failed).toBe(true);
    expect(unhandled.map(String)).toEqual([]);
    expect(logged.map((l) => [l.sessionId, l.msg])).toContainEqual([
      turn.sessionId,
      "the session's grants could not be saved",
    ]);
  });
});
