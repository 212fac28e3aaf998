/**
 * End-to-end Retry in a channel thread: a failed turn's Retry pressed by another member is refused
 * privately (naming the requester by name and user id) and runs nothing; pressed by a configured
 * approver, the turn runs again as its requester — the tools act with the requester's access,
 * never the presser's — and the failed reply loses its button.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import {
  ANA,
  BEN,
  BOSS,
  buttonId,
  type E2E,
  GENERAL,
  MENTION,
  messageWithButton,
  startE2E,
} from "./e2e-harness.js";

let e2e: E2E;
afterEach(async () => e2e?.close());

/** The first model call fails; after it, the model reads a note, then says what it read. */
function failsThenReads(): FakeHandler {
  let calls = 0;
  return ({ body }) => {
    if (++calls === 1) return { status: 500 };
    const last = body.messages.at(-1);
    if (last?.role === "tool") return { text: `read: ${last.content}` };
    return {
      toolCalls: [{ id: "call_1", name: "read_note", arguments: JSON.stringify({ name: "ana-notes" }) }],
    };
  };
}

describe("Slack end to end: Retry", () => {
  it("is refused to another member, and runs as the requester when an approver presses it", async () => {
    e2e = await startE2E(failsThenReads());
    const ts = e2e.fake.userPosts({ user: ANA, channel: GENERAL, text: `${MENTION} read ana-notes` }).ts;
    const failed = await e2e.fake.waitFor(
      () => messageWithButton(e2e.fake, GENERAL, ts, "Retry"),
      "the failed reply's Retry button",
    );
    await e2e.current.manager.idle();
    const retry = buttonId(failed, "Retry")!;
    e2e.fake.pressButton({ user: BEN, channel: GENERAL, messageTs: failed.ts, actionId: retry });
    const refusal = await e2e.fake.waitFor(
      () => e2e.fake.state.ephemerals.find((e) => e.user === BEN),
      "Ben's refusal",
    );
    expect(refusal.text).toMatch(/^Only .+ \(id U1ANA\) or a configured approver can retry this\.$/);
    expect(buttonId(failed, "Retry")).toBeDefined();
    expect(e2e.runs.runs).toHaveLength(0);

    e2e.fake.pressButton({ user: BOSS, channel: GENERAL, messageTs: failed.ts, actionId: retry });
    await e2e.runs.started("call_1");
    expect(e2e.runs.runs.map((run) => run.requester)).toEqual([ANA]);
    await e2e.fake.waitFor(() => buttonId(failed, "Retry") === undefined || undefined, "the retired button");
  });
});
