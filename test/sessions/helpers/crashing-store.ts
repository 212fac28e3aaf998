/**
 * CrashingStore: a Store over another that "dies" after a set number of writes, like a process
 * killed with SIGKILL: the first `writesBeforeCrash` writes go through, every later write (and
 * every write of a space obtained from it) throws without touching the underlying store. Reads
 * keep working. A `setMany` is one write (it is one commit on SQLite).
 */
import type { KeyValueSpace, Store, StoreNamespace } from "../../../src/store/store.js";
import { guardWrites } from "./guarded-space.js";

/** Thrown by every write after the crash point. */
export class SimulatedCrash extends Error {
  constructor() {
    super("simulated crash: the process is gone");
  }
}

/** A store that stops writing after `writesBeforeCrash` writes. */
export class CrashingStore implements Store {
  /** Writes that reached the underlying store. */
  writes = 0;
  private readonly spaces = new Map<StoreNamespace, KeyValueSpace>();

  constructor(
    private readonly inner: Store,
    private readonly writesBeforeCrash: number,
  ) {}

  /** Whether a write has been refused. */
  get crashed(): boolean {
    return this.writes >= this.writesBeforeCrash;
  }

  get description(): string {
    return `crashing(${this.inner.description})`;
  }

  /** Writes are refused from the crash point on in the order they are issued: any prefix survives. */
  get writesInOrder(): boolean {
    return this.inner.writesInOrder;
  }

  space(namespace: StoreNamespace): KeyValueSpace {
    let space = this.spaces.get(namespace);
    if (!space) {
      space = this.wrap(this.inner.space(namespace));
      this.spaces.set(namespace, space);
    }
    return space;
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  /** The underlying store stays open (the next "process" uses it). */
  async close(): Promise<void> {}

  private wrap(inner: KeyValueSpace): KeyValueSpace {
    return guardWrites(inner, () => {
      if (this.crashed) throw new SimulatedCrash();
      this.writes++;
    });
  }
}
