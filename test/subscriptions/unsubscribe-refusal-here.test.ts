/**
 * unsubscribe_channel refused in a conversation several people share names only the person's
 * subscriptions that wake this conversation, not those of their other conversations (DMs
 * included, with their ids); in the person's DM the refusal lists all of theirs, as before.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createRequest } from "../../src/core/request.js";
import type { Caller } from "../../src/core/thread-target.js";
import type { ToolContext } from "../../src/core/tool.js";
import { createSubscriptionTools } from "../../src/subscriptions/subscription-tools.js";
import { ALICE, type Harness, HOME, openHarness } from "./support.js";

/** Alice in her DM with the bot. */
const ALICE_DM: Caller = {
  sessionId: "slack:T1:D1ALICE:-",
  target: { ...HOME, channel: "D1ALICE", thread: undefined },
  requester: ALICE.requester,
};

function contextOf(caller: Caller): ToolContext {
  return {
    request: createRequest({
      prompt: "stop watching",
      messages: [],
      sessionId: caller.sessionId,
      platform: "slack",
      model: "m",
      workspace: { root: "/tmp", context: "" },
      requester: { userId: caller.requester.id, displayName: caller.requester.name },
      mode: "auto",
      metadata: { target: caller.target },
    }),
    callId: "call_1",
    signal: new AbortController().signal,
    emitOutput: () => undefined,
    facts: { downloadedFiles: new Set() },
  };
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("unsubscribe_channel's refusal", () => {
  it("in a shared thread names only the subscriptions that wake it; in the DM all of the person's", async () => {
    h = await openHarness();
    const fromDm = await h.service.subscribe(ALICE_DM, {
      channel: "#deploys",
      instructions: "my private plan",
    });
    expect(fromDm.ok).toBe(true);
    const [dmSub] = await h.service.listFor(ALICE_DM.sessionId);
    const tool = createSubscriptionTools(h.service).find((t) => t.name === "unsubscribe_channel")!;
    const unsubscribe = (caller: Caller) =>
      tool.execute(tool.inputSchema.parse({ channel: "#nothing" }), contextOf(caller));

    const shared = await unsubscribe(ALICE);
    expect(shared.ok).toBe(false);
    expect(shared.output).toContain("You have no subscription to #nothing");
    expect(shared.output).toContain("Yours that wake this conversation: none");
    expect(shared.output).not.toContain(dmSub!.id);
    expect(shared.output).not.toContain("#deploys");

    const dm = await unsubscribe(ALICE_DM);
    expect(dm.ok).toBe(false);
    expect(dm.output).toContain(dmSub!.id);
  });
});
