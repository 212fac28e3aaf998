/**
 * A thread's order (slack-inbound.ts) holds each event while Slack answers its access check. A
 * sender flooding a thread while that check is slow has at most ORDER_MAX_WAITING events waiting
 * there: the rest are refused at once, logged without their text, the sender told privately once
 * per burst (never in the thread). Another person's message in that thread is still taken, and
 * handed over once the checks answer. The sender's own stop is let past the bound (by its post's
 * two events): it is the one message that helps them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { LANE_MAX_WAITING } from "../../../src/channels/shared/hand-over-lanes.js";
import { REFUSALS } from "../../../src/channels/slack/slack-access.js";
import { ORDER_FULL } from "../../../src/channels/slack/slack-thread-order.js";
import { mention, startInbound as startOn } from "./inbound-on-fake.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** How many of one sender's events a thread's order holds: twice their lane's cap (slack-thread-order.ts). */
const ORDER_MAX_WAITING = 2 * LANE_MAX_WAITING;

const startInbound = () => startOn(cleanup);

describe("slack: a thread's order while the access check is slow", () => {
  it("holds at most ORDER_MAX_WAITING of one sender's events, refusing the rest (the sender told privately once), and never another sender's", async () => {
    const { fake, gate, inbound, service, logs } = await startInbound();
    const thread = fake.state.nextTs();
    gate.hold();
    const flood = Array.from({ length: ORDER_MAX_WAITING + 5 }, (_, i) => {
      const { event, envelope } = mention(fake, "U9", thread, `secret flood ${i}`);
      return inbound.handle(event, envelope);
    });
    const fromAna = mention(fake, "U1", thread, "my question");
    const ana = inbound.handle(fromAna.event, fromAna.envelope);
    // Before, every event waited in the thread's order, without bound, until Slack answered.
    await fake.waitFor(
      () => fake.state.ephemerals.some((ephemeral) => ephemeral.text === ORDER_FULL),
      "the flooder told the thread's order is full",
    );
    // The refused ones are done while the check is still held.
    await Promise.all(flood.slice(ORDER_MAX_WAITING));
    const refusals = logs.filter((line) => line.msg === "slack thread order full: message not taken");
    expect(refusals).toHaveLength(5);
    expect(refusals.filter((line) => line.told === true)).toHaveLength(1);
    expect(JSON.stringify(logs)).not.toContain("secret flood");
    expect(fake.state.ephemerals).toEqual([
      { channel: "C1", user: "U9", text: ORDER_FULL, threadTs: thread },
    ]);
    expect(fake.state.botMessages("C1", thread)).toEqual([]);

    gate.release();
    await Promise.all([...flood, ana]);
    // Ana's message, in the same thread after the flood, was taken; Mallory's were checked and refused.
    expect(service.received.map((message) => `${message.user.id}: ${message.text}`)).toEqual([
      "U1: my question",
    ]);
    expect(fake.state.ephemerals.map((ephemeral) => `${ephemeral.user}: ${ephemeral.text}`)).toEqual([
      `U9: ${ORDER_FULL}`,
      `U9: ${REFUSALS.guest}`,
    ]);

    // The burst is over once none of Mallory's waits: a new one is told again, once.
    gate.hold();
    const again = Array.from({ length: ORDER_MAX_WAITING + 2 }, (_, i) => {
      const { event, envelope } = mention(fake, "U9", thread, `secret again ${i}`);
      return inbound.handle(event, envelope);
    });
    await Promise.all(again.slice(ORDER_MAX_WAITING));
    expect(fake.state.ephemerals.filter((ephemeral) => ephemeral.text === ORDER_FULL)).toHaveLength(2);
    gate.release();
    await Promise.all(again);
  });

  it("takes the sender's stop when they have ORDER_MAX_WAITING waiting, and still refuses their next message", async () => {
    const { fake, gate, inbound, service, logs } = await startInbound();
    const thread = fake.state.nextTs();
    gate.hold();
    const waiting = Array.from({ length: ORDER_MAX_WAITING }, (_, i) => {
      const { event, envelope } = mention(fake, "U1", thread, `question ${i}`);
      return inbound.handle(event, envelope);
    });
    const fromStop = mention(fake, "U1", thread, "stop");
    const stop = inbound.handle(fromStop.event, fromStop.envelope);
    const afterStop = mention(fake, "U1", thread, "one more");
    await inbound.handle(afterStop.event, afterStop.envelope);
    // The message after the stop is refused (the bound still holds), its sender told once.
    await fake.waitFor(() => fake.state.ephemerals.length > 0, "the sender told the order is full");
    expect(fake.state.ephemerals).toEqual([
      { channel: "C1", user: "U1", text: ORDER_FULL, threadTs: thread },
    ]);
    // Stops are bounded too: one more is taken (a stop's post comes as two events), the next refused.
    const moreStops = [1, 2].map(() => {
      const { event, envelope } = mention(fake, "U1", thread, "stop");
      return inbound.handle(event, envelope);
    });
    await moreStops[1];
    const refused = logs.filter((line) => line.msg === "slack thread order full: message not taken");
    expect(refused).toHaveLength(2);

    gate.release();
    await Promise.all([...waiting, stop, ...moreStops]);
    // Before, the stop was refused like any message past the bound: nothing stopped.
    const texts = service.received.map((message) => message.text);
    expect(texts).toContain("stop");
    expect(texts).not.toContain("one more");
  });
});
