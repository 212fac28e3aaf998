/**
 * unsubscribe_channel names a subscription by channel, and which one that is can change after its
 * card was made: the engine makes every card of a step before any call runs, so a second
 * `unsubscribe_channel #deploys` beside the first one shows the same subscription as the first, and
 * once the first ended it the second would end another one (the person's own in another
 * conversation) that no card showed. An approved call ends only the subscription its card showed.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { createSubscriptionTools } from "../../src/subscriptions/subscription-tools.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { collect, makeHarness, makeRequest, resultOf } from "../engine/helpers/harness.js";
import { ALICE, type Harness, HOME, openHarness } from "./support.js";

const ALICE_DM: ThreadTarget = { ...HOME, channel: "D1ALICE", thread: undefined };
const ALICE_DM_SESSION = "slack:T1:D1ALICE:-";

describe("unsubscribe_channel's approved card", () => {
  let subs: Harness | undefined;
  afterEach(async () => {
    await subs?.close();
    subs = undefined;
  });

  it("ends only the subscription it showed: a second call of the step beside it ends no other one", async () => {
    subs = await openHarness();
    await subs.service.subscribe(ALICE, { channel: "#deploys", instructions: "here" });
    await subs.service.subscribe(
      { sessionId: ALICE_DM_SESSION, target: ALICE_DM, requester: ALICE.requester },
      { channel: "#deploys", instructions: "security alerts in my DM" },
    );
    const [here, inDm] = await subs.service.listForPerson({ platform: "slack", userId: "UALICE" });
    const tools = createSubscriptionTools(subs.service);
    const h = makeHarness({
      steps: [
        toolStep(
          ["u1", "unsubscribe_channel", { channel: "#deploys" }],
          ["u2", "unsubscribe_channel", { channel: "#deploys" }],
        ),
        textStep("done"),
      ],
      extraTools: [...tools],
    });
    const request = makeRequest({
      sessionId: ALICE.sessionId,
      platform: "slack",
      requester: { userId: "UALICE", displayName: "Alice" },
      metadata: { target: HOME },
    });
    const turn = collect(h.engine.run(request));
    const shown: string[] = [];
    for (const id of ["u1", "u2"]) {
      const asked = await h.broker.next(id);
      if (asked.kind === "approval") shown.push(asked.request.preview.summary);
      h.broker.approve(id, "once");
    }
    await turn;
    // Both cards showed the subscription of this conversation, none the one in the DM.
    for (const summary of shown) {
      expect(summary).toContain(`[${here!.id}]`);
      expect(summary).not.toContain(inDm!.id);
    }
    const left = await subs.service.listForPerson({ platform: "slack", userId: "UALICE" });
    expect(left.map((s) => s.id)).toEqual([inDm!.id]);
    expect(resultOf(h.persistence.appended, "u2")).toBe(TOOL_RESULT.changedSinceApproval);
  });
});
