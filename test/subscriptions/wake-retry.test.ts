/**
 * Wake-ups that are not delivered the first time: a hand-over the session layer rejects (draining,
 * a thread switching to "new", the platform not connected yet) is tried again with what came
 * meanwhile, and the wake marker never passes an undelivered message; after an hour of failures
 * the subscriber is told, once per run of them across processes (a notice that could not be
 * posted is asked for again); a batch rebuilt before its platform connects goes once it does;
 * one subscription's hand-overs go one at a time, in order, and the marker only moves forward.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import { SubscriptionService } from "../../src/subscriptions/subscription-service.js";
import { DEFAULT_SUBSCRIPTION_SETTINGS } from "../../src/subscriptions/subscription-settings.js";
import type { Subscription } from "../../src/subscriptions/subscription.js";
import type { WakeBatch } from "../../src/subscriptions/wake-sink.js";
import { ALICE, type Harness, message } from "./support.js";
import { closeOnFakeTime, openOnFakeTime, settle, woken } from "./support-fake-time.js";

const DEBOUNCE = DEFAULT_SUBSCRIPTION_SETTINGS.debounceMs;
const HOUR = 3_600_000;

describe("wake-ups that are not delivered the first time", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await openOnFakeTime();
  });

  afterEach(() => closeOnFakeTime(h));

  /** The sink rejects the next `count` hand-overs as a draining session layer does. */
  function rejectNext(count: number): void {
    const realWake = h.sink.wake.bind(h.sink);
    let left = count;
    h.sink.wake = async (subscription: Subscription, batch: WakeBatch) => {
      if (left > 0) {
        left -= 1;
        throw new Error("the session layer is shutting down");
      }
      return realWake(subscription, batch);
    };
  }

  it("a rejected hand-over is tried again with the messages that came meanwhile, and a restart wakes for nothing twice", async () => {
    rejectNext(2);
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    await h.service.observe(message("deploy 7 FAILED on web-3"));
    await settle(h, DEBOUNCE);
    expect(h.errors.map((e) => e.context)).toEqual([expect.stringMatching(/^waking subscription sub_/)]);
    await h.service.observe(message("deploy 8 ok"));
    // The second try (15 s later) is rejected too; the third (30 s after that) goes.
    await settle(h, 15_000);
    expect(h.errors).toHaveLength(2);
    expect(woken(h)).toEqual([]);
    await settle(h, 30_000);
    expect(woken(h)).toEqual([["deploy 7 FAILED on web-3", "deploy 8 ok"]]);

    await h.restart();
    await settle(h, HOUR);
    expect(woken(h)).toHaveLength(1);
    const caught = await h.service.catchUp(ALICE, { channel: "#deploys" });
    expect(caught.message).toContain("no unread messages");
  });

  it("hand-overs failing for an hour tell the subscriber once, and again only after one went in between", async () => {
    const realWake = h.sink.wake.bind(h.sink);
    let failing = true;
    h.sink.wake = async (subscription: Subscription, batch: WakeBatch) => {
      if (failing) throw new Error("the session layer is shutting down");
      return realWake(subscription, batch);
    };
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    const [subscription] = await h.service.listFor(ALICE.sessionId);
    await h.service.observe(message("deploy 7 FAILED on web-3"));
    await settle(h, DEBOUNCE);
    expect(h.errors).toHaveLength(1);
    // Tries at 15 s, 45 s, 1:45, 3:45, 7:45, 12:45, then every 5 min: the first past the hour is at 1:02:45.
    await settle(h, HOUR);
    expect(h.errors.length).toBeGreaterThan(10);
    expect(h.notices).toEqual([]);
    await settle(h, 5 * 60_000);
    const notice = {
      target: ALICE.target,
      text: expect.stringMatching(/over an hour .* \\#deploys \(subscription sub_\w+\)\. I keep trying/),
    };
    expect(h.notices).toEqual([notice]);
    expect(h.notices[0]?.text).toContain(subscription?.id);
    // Still failing hours later: no second notice.
    await settle(h, 3 * HOUR);
    expect(h.notices).toHaveLength(1);
    expect(woken(h)).toEqual([]);

    failing = false;
    await settle(h, 5 * 60_000);
    expect(woken(h)).toEqual([["deploy 7 FAILED on web-3"]]);
    // A new run of failures is told again, once it has lasted an hour.
    failing = true;
    await h.service.observe(message("deploy 8 FAILED"));
    await settle(h, DEBOUNCE + HOUR);
    expect(h.notices).toHaveLength(1);
    await settle(h, 5 * 60_000);
    expect(h.notices).toEqual([notice, notice]);
  });

  it("a failure notice that could not be posted is not taken as told: the next failing try tells", async () => {
    h.sink.wake = async () => {
      throw new Error("the session layer is shutting down");
    };
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    await h.service.observe(message("deploy 7 FAILED on web-3"));
    h.unpostableNotices = 1;
    // The first try past the hour (at 1:02:45) fails, and so does its notice.
    await settle(h, DEBOUNCE + HOUR + 5 * 60_000);
    expect(h.notices).toEqual([]);
    expect(h.errors.map((e) => String(e.error))).toContain(
      "NoticeNotPostedError: the session layer is shutting down (telling the subscriber failed too)",
    );
    expect(h.unpostableNotices).toBe(0);
    // The next failing try, 5 min later, tells; and only that once.
    await settle(h, 5 * 60_000);
    expect(h.notices).toEqual([{ target: ALICE.target, text: expect.stringMatching(/^For over an hour/) }]);
    await settle(h, 3 * HOUR);
    expect(h.notices).toHaveLength(1);
  });

  it("two processes whose hand-overs of one subscription keep failing tell its subscriber once", async () => {
    h.sink.wake = async () => {
      throw new Error("the session layer is shutting down");
    };
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    // A second process on the same store, which sees other messages of the channel.
    const other = await SubscriptionService.open({
      store: h.store,
      directories: [h.directory],
      sink: h.sink,
      notify: async (target, text) => {
        h.notices.push({ target, text });
      },
      settings: DEFAULT_SUBSCRIPTION_SETTINGS,
      onError: (error, context) => h.errors.push({ error, context }),
      wakeBudget: storeSlotBudget(h.store.space("budgets")),
    });
    try {
      await h.service.observe(message("deploy 7 FAILED on web-3"));
      await other.observe(message("deploy 8 FAILED on web-4"));
      await settle(h, DEBOUNCE + HOUR + 10 * 60_000);
      await other.settled();
      expect(h.notices).toEqual([{ target: ALICE.target, text: expect.stringMatching(/^For over an hour/) }]);
    } finally {
      await other.shutdown();
    }
  });

  it("a batch rebuilt at start-up before its platform connected goes once the platform registers", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    await h.service.observe(message("build failed just before the restart"));
    await h.service.shutdown();
    // The app opens subscriptions before the channels connect (conversation-assembly.ts).
    h.service = await SubscriptionService.open({
      store: h.store,
      directories: [],
      sink: h.sink,
      notify: async () => undefined,
      settings: DEFAULT_SUBSCRIPTION_SETTINGS,
      onError: (error, context) => h.errors.push({ error, context }),
      wakeBudget: storeSlotBudget(h.store.space("budgets")),
    });
    await settle(h, DEBOUNCE);
    expect(h.errors.map((e) => String(e.error))).toEqual([
      expect.stringContaining("slack (T1) is not connected: cannot check membership"),
    ]);
    h.service.registerDirectory(h.directory);
    await settle(h, 0);
    expect(woken(h)).toEqual([["build failed just before the restart"]]);
  });

  it("a slow hand-over holds the subscription's next batch: wake-ups arrive in order and a restart repeats none", async () => {
    const realWake = h.sink.wake.bind(h.sink);
    let releaseFirst: (() => void) | undefined;
    h.sink.wake = async (subscription: Subscription, batch: WakeBatch) => {
      // The first hand-over is slow (WakeAccess holding it while the platform reconnects).
      if (releaseFirst === undefined) await new Promise<void>((resolve) => (releaseFirst = resolve));
      return realWake(subscription, batch);
    };
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    await h.service.observe(message("first"));
    await vi.advanceTimersByTimeAsync(DEBOUNCE);
    await vi.waitFor(() => expect(releaseFirst).toBeDefined());
    await h.service.observe(message("second"));
    await vi.advanceTimersByTimeAsync(DEBOUNCE);
    expect(woken(h)).toEqual([]);
    releaseFirst?.();
    await settle(h, 0);
    expect(woken(h)).toEqual([["first"], ["second"]]);
    await h.restart();
    await settle(h, HOUR);
    expect(woken(h)).toEqual([["first"], ["second"]]);
  });
});
