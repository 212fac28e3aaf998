/**
 * A turn's start is saved while its model call is already under way: the call does not wait for
 * the write, but the turn shows nothing and starts no tool before the write is done, and a turn
 * whose start cannot be saved is stopped before it shows anything.
 */
import { describe, expect, it } from "vitest";
import type { KeyValueSpace, Store, StoreNamespace } from "../../src/store/store.js";
import { type ScriptedStep, textStep, toolStep } from "../support/scripted-provider.js";
import { WrappedStore } from "../support/wrapped-store.js";
import { guardWrites } from "./helpers/guarded-space.js";
import { makeHarness, message, openStore, thread } from "./helpers/harness.js";

/**
 * A store whose session-record writes wait while held, or fail while failing; it counts the writes
 * issued to every other namespace, and may claim that writes overtake each other (as on Postgres).
 */
class HeldRecordsStore extends WrappedStore {
  /** Writes issued so far, by namespace (session records not counted). */
  readonly writes = new Map<StoreNamespace, number>();
  private holding = true;
  private failure: Error | undefined;
  private readonly waiting: Array<() => void> = [];

  constructor(
    inner: Store,
    private readonly inOrder = inner.writesInOrder,
  ) {
    super(inner);
  }

  override get writesInOrder(): boolean {
    return this.inOrder;
  }

  /** Let the held record writes (and every later one) through. */
  release(): void {
    this.holding = false;
    for (const go of this.waiting.splice(0)) go();
  }

  /** Fail the held record writes (and every later one) with `error`. */
  fail(error: Error): void {
    this.failure = error;
    this.release();
  }

  protected wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    if (namespace !== "sessions")
      return guardWrites(inner, () => {
        this.writes.set(namespace, (this.writes.get(namespace) ?? 0) + 1);
      });
    return guardWrites(inner, async () => {
      if (this.holding) await new Promise<void>((go) => this.waiting.push(go));
      if (this.failure) throw this.failure;
    });
  }
}

/** A few turns of the event loop: enough for in-memory work that is not waiting on anything. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function heldHarness(steps: readonly ScriptedStep[], writesInOrder?: boolean) {
  const store = new HeldRecordsStore(await openStore(), writesInOrder);
  const h = await makeHarness({ store, steps });
  return { h, store, out: h.outputs.for(thread()) };
}

describe("a turn whose start is still being saved", () => {
  it("calls the model at once but shows nothing until the start is saved", async () => {
    const { h, store, out } = await heldHarness([textStep("hello there")]);
    const received = h.manager.receive(message("hi"));
    await settle();
    expect(h.provider.requests).toHaveLength(1);
    expect(out.turns).toEqual([]);
    store.release();
    expect(await received).toMatchObject({ status: "started" });
    await h.manager.idle();
    expect(out.closedTurns.map((turn) => turn.events.some((e) => e.type === "text-delta"))).toEqual([true]);
  });

  it("starts no tool until the start is saved", async () => {
    const { h, store } = await heldHarness([toolStep(["c1", "read_note", { name: "a" }]), textStep("done")]);
    const received = h.manager.receive(message("read note a"));
    await settle();
    expect(store.writes.get("journal")).toBe(1);
    expect(h.runs.count("c1")).toBe(0);
    store.release();
    await received;
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(1);
  });

  it("is stopped, runs no tool and shows nothing when the start cannot be saved", async () => {
    const { h, store, out } = await heldHarness([
      toolStep(["c1", "read_note", { name: "a" }]),
      textStep("done"),
    ]);
    const received = h.manager.receive(message("read note a"));
    await settle();
    store.fail(new Error("disk full"));
    await expect(received).rejects.toThrow("disk full");
    await h.manager.idle();
    expect(h.runs.count("c1")).toBe(0);
    expect(out.turns).toEqual([]);
    expect(out.texts).toEqual([]);
  });

  it("writes none of its history before the start is saved where writes may overtake each other", async () => {
    const { h, store, out } = await heldHarness([textStep("hello there")], false);
    const received = h.manager.receive(message("hi"));
    await settle();
    expect(h.provider.requests).toHaveLength(1);
    expect(store.writes.get("history")).toBeUndefined();
    store.release();
    await received;
    await h.manager.idle();
    expect(store.writes.get("history")).toBe(1);
    expect(out.closedTurns).toHaveLength(1);
  });
});
