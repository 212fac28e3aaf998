/**
 * A card is decided only from its own channel (approvals/press-place.ts): a block_actions payload
 * from another channel carrying the card's button (a copy of the card in the presser's DM) is
 * refused, privately and naming nothing of it, and the card stays open; the press in the card's
 * thread decides it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { NOT_PRESSED_WHERE_ASKED } from "../../../src/approvals/press-place.js";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import {
  ANA,
  buttonId,
  DM,
  type E2E,
  GENERAL,
  MENTION,
  messageWithButton,
  startE2E,
  thread,
} from "./e2e-harness.js";
import { actionIds } from "./support.js";

let e2e: E2E;
afterEach(async () => e2e?.close());

/** The model calls write_note, then reports the tool's result. */
const noteThenReport: FakeHandler = ({ body }) => {
  const last = body.messages.at(-1);
  if (last?.role === "tool") return { text: `Tool said: ${last.content}` };
  return { toolCalls: [{ id: "call_1", name: "write_note", arguments: JSON.stringify({ text: "hi" }) }] };
};

describe("Slack: where a card may be pressed", () => {
  it("refuses a channel card's button pressed in another channel; the card's thread decides it", async () => {
    e2e = await startE2E(noteThenReport);
    const { fake } = e2e;
    const ts = fake.userPosts({ user: ANA, channel: GENERAL, text: `${MENTION} write a note saying hi` }).ts;
    const card = await fake.waitFor(() => messageWithButton(fake, GENERAL, ts, "Approve"), "the card");
    const approve = buttonId(card, "Approve")!;
    // The same buttons on a message of Ana's DM (a copy of the card there).
    const copy = fake.state.addMessage({
      channel: DM,
      ts: fake.state.nextTs(),
      ...(card.user !== undefined ? { user: card.user } : {}),
      ...(card.botId !== undefined ? { botId: card.botId } : {}),
      text: card.text,
      blocks: structuredClone(card.blocks),
    });
    fake.pressButton({ user: ANA, channel: DM, messageTs: copy.ts, actionId: approve });
    const refusal = await fake.waitFor(
      () => fake.state.callsOf("chat.postEphemeral").find((call) => call.args.channel === DM),
      "the refusal",
    );
    expect(refusal.args).toMatchObject({ user: ANA, text: NOT_PRESSED_WHERE_ASKED });
    expect(e2e.runs.count("call_1")).toBe(0);
    expect(actionIds(card.blocks)).toContain(approve);
    fake.pressButton({ user: ANA, channel: GENERAL, messageTs: card.ts, actionId: approve });
    await fake.waitFor(() => thread(fake, GENERAL, ts).find((text) => /Tool said/.test(text)), "the answer");
    expect(e2e.runs.count("call_1")).toBe(1);
  });
});
