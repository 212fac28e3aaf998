/**
 * A fake Slack in a worker thread of its own (thread-body.ts), for tests that block the main
 * thread on purpose and need Slack to go on meanwhile: it records an ack while the test's event
 * loop is stopped, which the in-process fake could not. The worker loads the TypeScript body
 * through tsx's loader (worker threads run outside vitest's toolchain).
 */
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { type FakeSlackAddress, fakeSlackAddressSchema } from "../../channels/slack/support.js";

export interface FakeSlackThread {
  readonly address: FakeSlackAddress;
  /** Deliver a DM event (after `afterMs`); the returned flag turns 1 (Atomics.notify) when its ack arrives. */
  pushDm(text: string, afterMs?: number): Int32Array;
  close(): Promise<void>;
}

/** Start the fake Slack in a worker thread and wait for its address. */
export async function startFakeSlackThread(): Promise<FakeSlackThread> {
  const body = new URL("./thread-body.ts", import.meta.url).href;
  const worker = new Worker(
    `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(body)}); })`,
    { eval: true },
  );
  const [posted] = (await once(worker, "message")) as [unknown];
  const address = fakeSlackAddressSchema.parse(posted);
  return {
    address,
    pushDm(text, afterMs = 0) {
      const acked = new SharedArrayBuffer(4);
      worker.postMessage({ kind: "push", text, acked, afterMs });
      return new Int32Array(acked);
    },
    async close() {
      const exited = once(worker, "exit");
      worker.postMessage("close");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      await worker.terminate();
    },
  };
}
