/**
 * The typed `subscriptions` and `unsubscribe` commands in a conversation several people share
 * mark only the subscriptions that wake it as this conversation's (the listing posts cards only
 * for those), and a refused `unsubscribe` there names none of the person's subscriptions from
 * their other conversations, nor does a successful one or a card's Cancel name a subscription
 * waking their DM; in the person's DM both show everything, as before. A card's Cancel of a
 * subscription that wakes the shared thread it is pressed in names it, as the typed command does.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/core/thread-target.js";
import { subscriptionCanceller, subscriptionCommands } from "../../src/subscriptions/session-wake.js";
import { ALICE, type Harness, HOME, openHarness } from "./support.js";

/** Alice in her DM with the bot. */
const ALICE_DM: Caller = {
  sessionId: "slack:T1:D1ALICE:-",
  target: { ...HOME, channel: "D1ALICE", thread: undefined },
  requester: ALICE.requester,
};

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const callOf = (caller: Caller, args: string[]) => ({
  sessionId: caller.sessionId,
  target: caller.target,
  user: caller.requester,
  args,
  startTurn: async () => "started" as const,
});

describe("typed subscription commands in a shared thread", () => {
  it("mark only this conversation's subscriptions, and a refusal names none from elsewhere", async () => {
    h = await openHarness();
    expect(
      (await h.service.subscribe(ALICE_DM, { channel: "#deploys", instructions: "my private plan" })).ok,
    ).toBe(true);
    expect((await h.service.subscribe(ALICE, { channel: "#home" })).ok).toBe(true);
    const [dmSub] = await h.service.listFor(ALICE_DM.sessionId);
    const [threadSub] = await h.service.listFor(ALICE.sessionId);
    const [listing, unsubscribe] = subscriptionCommands(h.service);

    const shared = await listing!.run(callOf(ALICE, []));
    expect(typeof shared === "string" ? [] : shared.items.map((item) => [item.id, item.here])).toEqual(
      expect.arrayContaining([
        [dmSub!.id, false],
        [threadSub!.id, true],
      ]),
    );

    const refusal = await unsubscribe!.run(callOf(ALICE, ["#nothing"]));
    expect(refusal).toContain("You have no subscription to #nothing");
    expect(refusal).toContain(`Yours that wake this conversation: #home (${threadSub!.id}`);
    expect(refusal).not.toContain(dmSub!.id);
    expect(refusal).not.toContain("#deploys");

    // In her DM the refusal lists all of hers.
    const inDm = await unsubscribe!.run(callOf(ALICE_DM, ["#nothing"]));
    expect(inDm).toContain(dmSub!.id);
    expect(inDm).toContain(threadSub!.id);
  });

  it("a successful unsubscribe (typed, or a card's Cancel) does not name a DM's subscription there", async () => {
    h = await openHarness();
    for (const channel of ["#deploys", "#home"])
      expect((await h.service.subscribe(ALICE_DM, { channel, instructions: "my private plan" })).ok).toBe(
        true,
      );
    const [typed, pressed] = await h.service.listFor(ALICE_DM.sessionId);
    const [, unsubscribe] = subscriptionCommands(h.service);

    const done = await unsubscribe!.run(callOf(ALICE, [typed!.id]));
    expect(done).toBe(`Unsubscribed ${typed!.id}; it no longer wakes the conversation it was made in.`);
    const card = await subscriptionCanceller(h.service).cancel(ALICE.target, ALICE.requester, pressed!.id);
    expect(card).toEqual({
      ok: true,
      message: `Unsubscribed ${pressed!.id}; it no longer wakes the conversation it was made in.`,
    });

    // In her DM a success names the channel and the conversation: the DM itself, where it was pressed.
    expect((await h.service.subscribe(ALICE_DM, { channel: "#deploys" })).ok).toBe(true);
    const [again] = await h.service.listFor(ALICE_DM.sessionId);
    const inDm = await subscriptionCanceller(h.service).cancel(ALICE_DM.target, ALICE.requester, again!.id);
    expect(inDm.message).toBe("Unsubscribed from #deploys; it no longer wakes this conversation.");
  });

  it("a card's Cancel of a subscription that wakes the shared thread it is pressed in names it there", async () => {
    h = await openHarness();
    expect((await h.service.subscribe(ALICE, { channel: "#deploys" })).ok).toBe(true);
    const [here] = await h.service.listFor(ALICE.sessionId);
    // Before, the press knew no session: the reply was the id alone, as for a DM's subscription.
    expect(await subscriptionCanceller(h.service).cancel(ALICE.target, ALICE.requester, here!.id)).toEqual({
      ok: true,
      message: "Unsubscribed from #deploys; it no longer wakes this conversation.",
    });
    expect(await h.service.listFor(ALICE.sessionId)).toEqual([]);
  });
});
