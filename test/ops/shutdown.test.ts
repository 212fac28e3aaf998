import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { Shutdown } from "../../src/ops/shutdown.js";

const logger = createLogger({ level: "silent" });

function setup(graceMs = 10_000, interruptMs = 5_000) {
  const signals = new EventEmitter();
  const forced: number[] = [];
  const steps: string[] = [];
  const shutdown = new Shutdown({
    logger,
    graceMs,
    interruptMs,
    forceExit: (code) => forced.push(code),
    signals,
  });
  shutdown.install();
  return { signals, forced, steps, shutdown };
}

describe("Shutdown", () => {
  it("on SIGTERM stops intake, drains, then closes newest first and reports 0", async () => {
    const { signals, steps, shutdown, forced } = setup();
    let finishTurn: () => void = () => undefined;
    shutdown.onStopIntake("slack", () => {
      steps.push("intake:slack");
    });
    shutdown.addDrainer("turns", async (deadline) => {
      steps.push(`drain:start aborted=${deadline.aborted}`);
      await new Promise<void>((resolve) => {
        finishTurn = resolve;
      });
      steps.push("drain:done");
    });
    shutdown.addCloser("store", async () => {
      steps.push("close:store");
    });
    shutdown.addCloser("slack", async () => {
      steps.push("close:slack");
    });
    expect(shutdown.stopping).toBe(false);
    signals.emit("SIGTERM");
    expect(shutdown.stopping).toBe(true);
    await expect.poll(() => steps).toContain("drain:start aborted=false");
    expect(steps).toEqual(["intake:slack", "drain:start aborted=false"]);
    finishTurn();
    expect(await shutdown.done).toBe(0);
    expect(steps).toEqual([
      "intake:slack",
      "drain:start aborted=false",
      "drain:done",
      "close:slack",
      "close:store",
    ]);
    expect(forced).toEqual([]);
    expect(signals.listenerCount("SIGTERM")).toBe(0);
  });

  it("aborts the drainers' signal when the grace period is over", async () => {
    const { shutdown, steps } = setup(10);
    shutdown.addDrainer("turns", async (deadline) => {
      await new Promise<void>((resolve) => deadline.addEventListener("abort", () => resolve()));
      steps.push(`interrupted: ${(deadline.reason as Error).message}`);
    });
    expect(await shutdown.run("test")).toBe(0);
    expect(steps).toEqual(["interrupted: shutdown grace period over"]);
  });

  it("gives up on a drainer that ignores the interruption, closes anyway and reports 1", async () => {
    const { shutdown, steps } = setup(5, 5);
    shutdown.addDrainer("stuck", () => new Promise<void>(() => undefined));
    shutdown.addCloser("store", async () => {
      steps.push("close:store");
    });
    expect(await shutdown.run("test")).toBe(1);
    expect(steps).toEqual(["close:store"]);
  });

  it("keeps going when a step throws, and reports 1", async () => {
    const { shutdown, steps } = setup();
    shutdown.addCloser("first", async () => {
      steps.push("close:first");
    });
    shutdown.addCloser("bad", async () => {
      throw new Error("socket already closed");
    });
    expect(await shutdown.run("test")).toBe(1);
    expect(steps).toEqual(["close:first"]);
  });

  it("runs once however often it is asked, and a second signal forces exit", async () => {
    const { shutdown, signals, forced } = setup();
    let release: () => void = () => undefined;
    shutdown.addDrainer("turns", () => new Promise<void>((resolve) => (release = resolve)));
    const first = shutdown.run("first");
    expect(shutdown.run("again")).toBe(first);
    signals.emit("SIGINT");
    expect(forced).toEqual([130]);
    release();
    expect(await first).toBe(0);
  });
});
