/**
 * WrappedStore: the frame of a test or bench Store over another. Each namespace's space is wrapped
 * once, by `wrap` (which a subclass defines to count, hold, fail or crash calls); everything else
 * goes to the inner store.
 */
import type { KeyValueSpace, Store, StoreHealth, StoreNamespace } from "../../src/store/store.js";

/** A Store whose spaces are the inner store's, each wrapped by `wrap`. */
export abstract class WrappedStore implements Store {
  private readonly spaces = new Map<StoreNamespace, KeyValueSpace>();

  constructor(protected readonly inner: Store) {}

  get description(): string {
    return this.inner.description;
  }

  get writesInOrder(): boolean {
    return this.inner.writesInOrder;
  }

  space(namespace: StoreNamespace): KeyValueSpace {
    let space = this.spaces.get(namespace);
    if (!space) {
      space = this.wrap(namespace, this.inner.space(namespace));
      this.spaces.set(namespace, space);
    }
    return space;
  }

  ping(): Promise<StoreHealth> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The space callers get for `namespace`, over the inner store's. */
  protected abstract wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace;
}
