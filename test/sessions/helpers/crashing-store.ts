/**
 * CrashingStore: a Store over another that "dies" after a set number of writes, like a process
 * killed with SIGKILL: the first `writesBeforeCrash` writes go through, every later write (and
 * every write of a space obtained from it) throws without touching the underlying store. Reads
 * keep working. A `setMany` is one write (it is one commit on SQLite).
 */
import type { KeyValueSpace, Store, StoreNamespace } from "../../../src/store/store.js";
import { WrappedStore } from "../../support/wrapped-store.js";
import { guardWrites } from "./guarded-space.js";

/** Thrown by every write after the crash point. */
export class SimulatedCrash extends Error {
  constructor() {
    super("simulated crash: the process is gone");
  }
}

/**
 * A store that stops writing after `writesBeforeCrash` writes. Writes are refused from the crash
 * point on in the order they are issued, so any prefix survives: it keeps the inner store's order.
 */
export class CrashingStore extends WrappedStore {
  /** Writes that reached the underlying store. */
  writes = 0;

  constructor(
    inner: Store,
    private readonly writesBeforeCrash: number,
  ) {
    super(inner);
  }

  /** Whether a write has been refused. */
  get crashed(): boolean {
    return this.writes >= this.writesBeforeCrash;
  }

  override get description(): string {
    return `crashing(${this.inner.description})`;
  }

  /** The underlying store stays open (the next "process" uses it). */
  override async close(): Promise<void> {}

  protected wrap(_namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    return guardWrites(inner, () => {
      if (this.crashed) throw new SimulatedCrash();
      this.writes++;
    });
  }
}
