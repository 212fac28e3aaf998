/**
 * The body of the fake Slack thread (in-thread.ts): runs inside a worker thread, starts a fake
 * Slack there, posts its address, and on each "push" message delivers one DM event over Socket
 * Mode (after `afterMs`); when that envelope's ack arrives it raises the push's flag (shared
 * memory), which the main thread can wait on while its own event loop is blocked.
 */
import { parentPort } from "node:worker_threads";
import { z } from "zod";
import { fakeSlackAddress } from "../../channels/slack/support.js";
import { startFakeSlack } from "./index.js";

const pushSchema = z.object({
  kind: z.literal("push"),
  text: z.string(),
  acked: z.instanceof(SharedArrayBuffer),
  afterMs: z.number().nonnegative(),
});
const port = parentPort;
if (!port) throw new Error("thread-body.ts runs in a worker thread");

const fake = await startFakeSlack();
fake.state.addUser({ id: "U1", name: "ana" });
fake.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["U1"] });

/** Send the DM now; raise `flag` when its ack arrives. */
function deliver(text: string, flag: Int32Array): void {
  const delivery = fake.sendEvent({
    type: "message",
    channel: "D1",
    channel_type: "im",
    user: "U1",
    text,
    ts: "1700000000.000100",
  });
  void delivery.acked.then(() => {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
}

port.on("message", (message: unknown) => {
  if (message === "close") {
    void fake.close().then(() => port.close());
    return;
  }
  const push = pushSchema.parse(message);
  setTimeout(() => deliver(push.text, new Int32Array(push.acked)), push.afterMs);
});
port.postMessage(fakeSlackAddress(fake));
