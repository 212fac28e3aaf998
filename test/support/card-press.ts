/**
 * A card press as a channel reports it, for tests that press cards below the channels: made in
 * the card's own conversation, which every press must name (ButtonPress.pressedIn) and which
 * approvals/press-place.ts compares with the card's. Tests of presses from elsewhere name the
 * other conversation themselves.
 */
import type { ButtonPress } from "../../src/core/button-press.js";
import type { PlatformUser, ThreadTarget } from "../../src/core/thread-target.js";

/** The press of `action` on card `pendingId` by `user`, on its platform, in `asked`, the card's conversation. */
export function cardPress(
  asked: ThreadTarget,
  pendingId: string,
  action: string,
  user: PlatformUser,
): Extract<ButtonPress, { kind: "card" }> {
  return { kind: "card", platform: asked.platform, pendingId, action, user, pressedIn: asked };
}
