/**
 * pressedElsewhere: a card press counts only from the card's own chat or channel — any thread or
 * topic of it, either id of a Telegram group upgraded to a supergroup. Every press says where it
 * was pressed (the session layer refuses one that does not: test/sessions/inbound-schema.test.ts).
 */
import { describe, expect, it } from "vitest";
import { pressedElsewhere } from "../../src/approvals/press-place.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { cardPress } from "../support/card-press.js";

const press = (pressedIn: ThreadTarget) => cardPress(pressedIn, "p1", "once", { id: "U1", name: "Ann" });

const SLACK_CARD: ThreadTarget = {
  platform: "slack",
  workspace: "T1",
  channel: "C1",
  thread: "1.1",
  extra: { kind: "channel" },
};
const GROUP = -4242;
const SUPERGROUP = -1004242;
const tg = (channel: number, extra?: ThreadTarget["extra"], thread?: string): ThreadTarget => ({
  platform: "telegram",
  workspace: "tg",
  channel: String(channel),
  ...(thread ? { thread } : {}),
  ...(extra ? { extra } : {}),
});

describe("pressedElsewhere", () => {
  it("takes a press in the card's channel, in any of its threads", () => {
    expect(pressedElsewhere(press({ ...SLACK_CARD, extra: { user: "U1" } }), SLACK_CARD)).toBe(false);
    expect(pressedElsewhere(press({ ...SLACK_CARD, thread: "9.9" }), SLACK_CARD)).toBe(false);
    expect(
      pressedElsewhere(press(tg(GROUP, undefined, "12")), tg(GROUP, { chatType: "supergroup" }, "11")),
    ).toBe(false);
  });

  it("refuses a press in another channel, workspace or platform", () => {
    expect(pressedElsewhere(press({ ...SLACK_CARD, channel: "D1" }), SLACK_CARD)).toBe(true);
    expect(pressedElsewhere(press({ ...SLACK_CARD, workspace: "T2" }), SLACK_CARD)).toBe(true);
    expect(pressedElsewhere(press(tg(1001)), tg(GROUP))).toBe(true);
    expect(pressedElsewhere(press({ ...tg(1), channel: "C1" }), SLACK_CARD)).toBe(true);
  });

  it("takes a group's card pressed in the supergroup it became, whichever id the card was asked under", () => {
    // The press as the channel reports it: the session's chat (the group), the supergroup beside it.
    const inSupergroup = press(tg(GROUP, { alsoKnownAs: SUPERGROUP }));
    expect(pressedElsewhere(inSupergroup, tg(GROUP, { chatType: "group" }))).toBe(false);
    expect(pressedElsewhere(inSupergroup, tg(SUPERGROUP, { chatType: "supergroup" }))).toBe(false);
    expect(pressedElsewhere(inSupergroup, tg(GROUP, { alsoKnownAs: SUPERGROUP }))).toBe(false);
    expect(pressedElsewhere(press(tg(SUPERGROUP)), tg(GROUP, { alsoKnownAs: SUPERGROUP }))).toBe(false);
    expect(pressedElsewhere(inSupergroup, tg(-999))).toBe(true);
  });
});
