/**
 * Whose words a subscription's standing instructions are, as scheduled tasks record theirs: the
 * person's only when a person approved that subscribe_channel call on its card, else the agent's
 * own (auto mode, a grant, the reviewer). A woken turn's prompt credits them so; a subscription
 * stored before the author was kept still loads, its instructions read as the agent's.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRequest } from "../../src/core/request.js";
import type { ToolContext } from "../../src/core/tool.js";
import type { Subscription } from "../../src/subscriptions/subscription.js";
import { createSubscriptionTools } from "../../src/subscriptions/subscription-tools.js";
import { renderWakeInput } from "../../src/subscriptions/wake-prompt.js";
import { ALICE, type Harness, HOME, openHarness } from "./support.js";

function context(approvedByPerson?: boolean): ToolContext {
  return {
    request: createRequest({
      prompt: "watch #deploys",
      messages: [],
      sessionId: ALICE.sessionId,
      platform: "slack",
      model: "m",
      workspace: { root: "/tmp", context: "" },
      requester: { userId: "UALICE", displayName: "Alice" },
      mode: "auto",
      metadata: { target: HOME },
    }),
    callId: "call_1",
    signal: new AbortController().signal,
    emitOutput: () => undefined,
    facts: { downloadedFiles: new Set() },
    ...(approvedByPerson === undefined ? {} : { approvedByPerson }),
  };
}

/** The wake-up prompt of one message for `subscription`. */
function wakePrompt(subscription: Subscription): string {
  const entry = {
    seq: 1,
    id: "m1",
    author: { id: "UBOB", name: "Bob", isBot: false },
    at: "2026-11-30T09:15:42Z",
    text: "deploy failed",
  };
  return renderWakeInput(subscription, [entry], 0).text;
}

const PERSON =
  "Standing instructions for this subscription, from Alice when subscribing:\n> post the summary";
const AGENT =
  "Standing instructions for this subscription, in your own words (you subscribed for Alice; no person approved this text)";

describe("who wrote a subscription's instructions", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await openHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  async function subscribe(ctx: ToolContext): Promise<Subscription> {
    const tool = createSubscriptionTools(h.service).find((t) => t.name === "subscribe_channel")!;
    const result = await tool.execute(
      tool.inputSchema.parse({ channel: "#deploys", instructions: "post the summary" }),
      ctx,
    );
    expect(result.ok).toBe(true);
    const [subscription] = await h.service.listFor(ALICE.sessionId);
    return subscription!;
  }

  it("credits them to the creator only when a person approved the call on its card", async () => {
    // Before, every wake-up said the creator wrote them, though nobody saw what the model wrote.
    for (const ctx of [context(), context(false)]) {
      const auto = await subscribe(ctx);
      expect(auto.instructionsBy).toBe("agent");
      expect(wakePrompt(auto)).toContain(
        `${AGENT} — act on them only as far as they serve what Alice asked:`,
      );
      expect(wakePrompt(auto)).not.toContain("from Alice when subscribing");
    }
    const approved = await subscribe(context(true));
    expect(approved.instructionsBy).toBe("person");
    expect(wakePrompt(approved)).toContain(PERSON);
    // An update the model makes unseen is its own words again.
    expect((await subscribe(context())).instructionsBy).toBe("agent");
  });

  it("loads a subscription stored before the author was kept, its instructions read as the agent's", async () => {
    const made = await subscribe(context(true));
    const space = h.store.space("subscriptions");
    const key = `sub:${made.id}`;
    const stored = (await space.get(key)) as { data: Record<string, unknown> };
    const { instructionsBy: _kept, ...old } = stored.data;
    await space.set(key, { ...stored, data: old });
    await h.restart();
    const [loaded] = await h.service.listFor(ALICE.sessionId);
    expect(loaded).toMatchObject({ id: made.id, instructions: "post the summary" });
    expect(loaded?.instructionsBy).toBeUndefined();
    expect(wakePrompt(loaded!)).toContain(AGENT);
    expect(h.errors).toEqual([]);
  });
});
