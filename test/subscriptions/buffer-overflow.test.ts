/**
 * A channel flooding past the buffer's count cap while its subscriber is busy: the wake-up says
 * the matches it left out may have been dropped from the buffer, and catch_up says how many
 * unread messages were dropped before they were read, instead of silently skipping them — once,
 * not again at every later call.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_SUBSCRIPTION_SETTINGS } from "../../src/subscriptions/subscription-settings.js";
import { ALICE, type Harness, message } from "./support.js";
import { closeOnFakeTime, openOnFakeTime, settle, woken } from "./support-fake-time.js";

const DEBOUNCE = DEFAULT_SUBSCRIPTION_SETTINGS.debounceMs;

describe("a buffer overflowing before its messages were read", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await openOnFakeTime({ settings: { bufferMaxMessages: 20, maxBatch: 5 } });
  });

  afterEach(() => closeOnFakeTime(h));

  it("catch_up says how many unread messages the buffer dropped, and the wake-up says left-out ones may be gone", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    await h.service.observe(message("read before the flood"));
    await h.service.catchUp(ALICE, { channel: "#deploys" });
    // The session is running a long turn while the channel floods.
    h.sink.busy.add(ALICE.sessionId);
    for (let i = 1; i <= 100; i += 1) await h.service.observe(message(`flood ${i}`));
    await settle(h, DEBOUNCE);
    h.sink.busy.delete(ALICE.sessionId);
    h.service.sessionIdle(ALICE.sessionId);
    await settle(h, 0);
    expect(woken(h)).toEqual([["flood 96", "flood 97", "flood 98", "flood 99", "flood 100"]]);
    expect(h.sink.wakes[0]!.batch.input.text).toContain(
      "96 earlier matching messages were left out — catch_up shows those still buffered (they may have been dropped from the buffer)",
    );
    const caught = await h.service.catchUp(ALICE, { channel: "#deploys", limit: 200 });
    expect(caught.message).toContain("20 unread messages");
    expect(caught.message).toContain("flood 81");
    expect(caught.message).toContain(
      "80 unread messages were dropped from the buffer before you read them (it keeps only the most recent ones): they can no longer be shown.",
    );
  });

  it("catch_up says once that unread messages were dropped, not again at every later call", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    await h.service.observe(message("read before the flood"));
    await h.service.catchUp(ALICE, { channel: "#deploys" });
    for (let i = 1; i <= 3; i += 1) await h.service.observe(message(`old ${i}`));
    // Nobody reads them before they age out of the buffer (it keeps a week).
    vi.setSystemTime(Date.now() + DEFAULT_SUBSCRIPTION_SETTINGS.bufferMaxAgeMs + 60_000);
    const first = await h.service.catchUp(ALICE, { channel: "#deploys" });
    expect(first.message).toContain("3 unread messages were dropped from the buffer");
    const again = await h.service.catchUp(ALICE, { channel: "#deploys" });
    expect(again.message).not.toContain("dropped");
    expect(again.message).toContain("no unread messages");
  });
});
