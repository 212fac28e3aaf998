/**
 * A holder that stays deaf: A parks a turn at a card and loses its Redis subscription, but keeps
 * renewing its lease. The card pressed through B settles the item; B's "settled" notice reaches no
 * one, and B gives up once A's lease has not lapsed for a TTL and a renewal. When A listens again,
 * it looks at its parked sessions itself: the turn takes the decision and its call runs once.
 */
import { expect, it } from "vitest";
import type { Coordination, Unsubscribe } from "../../src/store/coordination/coordination.js";
import { cardPress } from "../support/card-press.js";
import { ANA, message, thread } from "./helpers/harness.js";
import { answered, openWritingPair, writingPairPerFile } from "./helpers/writing-stacks.js";

/** A coordination whose subscriptions a test can drop and make again, as a lost Redis subscriber. */
function deafenable() {
  const subs: Array<{ channel: string; listener: (m: string) => void; unsubscribe: Unsubscribe }> = [];
  let inner: Coordination | undefined;
  const wrap = (c: Coordination): Coordination => {
    inner = c;
    return new Proxy(c, {
      get(target, prop) {
        if (prop === "subscribe")
          return async (channel: string, listener: (m: string) => void) => {
            const sub = { channel, listener, unsubscribe: await target.subscribe(channel, listener) };
            subs.push(sub);
            return () => sub.unsubscribe();
          };
        return Reflect.get(target, prop, target);
      },
    });
  };
  return {
    wrap,
    async deafen() {
      for (const sub of subs) await sub.unsubscribe();
    },
    async hear() {
      for (const sub of subs) sub.unsubscribe = await inner!.subscribe(sub.channel, sub.listener);
    },
  };
}

const file = writingPairPerFile();
const { outputs, runsA, runsB } = file;

it("a holder deaf past the sender's retries takes the decision once it listens again", async () => {
  const target = thread("1700009500.000001");
  const ears = deafenable();
  const timing = { ttlMs: 600, renewMs: 150 };
  const { a, b } = await openWritingPair(file, { wrap: ears.wrap, timing }, { timing });
  await a.manager.receive(message("write d1", { target }));
  const out = outputs.for(target);
  const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "the card");

  await ears.deafen();
  const pressed = await b.manager.press(cardPress(target, card.pendingId, "once", ANA));
  expect(pressed.status).toBe("accepted");
  // B's notice is sent again until A's lease would have lapsed (TTL and a renewal), then given up.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(answered(out, "wrote")).toBeUndefined();
  await ears.hear();

  await outputs.until(() => answered(out, "wrote"), "A's turn to finish after its call", 10_000);
  expect(runsA.count("call-d1")).toBe(1);
  expect(runsB.count("call-d1")).toBe(0);
}, 30_000);
