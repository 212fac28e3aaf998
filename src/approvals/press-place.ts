/**
 * Where a card may be pressed: only in its own conversation. A card's buttons can reach another
 * chat (a forwarded Telegram message, a crafted or misrouted Slack payload), and the channel checks
 * the presser only where the press came from — so a person removed from a private group could
 * otherwise decide its cards from their DM and resume the turn there as themselves. The chat (or
 * channel) is compared, not the thread or topic: access is decided per chat on both platforms, and
 * a press names its topic unreliably (Telegram's General topic, replies in a plain group). A
 * Telegram group upgraded to a supergroup is one chat under both ids (`extra.alsoKnownAs`).
 * Every card press says where it counts (ButtonPress.pressedIn is required, also in the session
 * layer's schema), so none goes unchecked: a typed `approve <id>` counts in the card's conversation
 * once sessions/typed-decisions.ts has checked the typer may act there, the console in its own.
 */
import type { ButtonPress } from "../core/button-press.js";
import type { ThreadTarget } from "../core/thread-target.js";

/** A press's refusal when it came from another conversation than its card's; names nothing of the card. */
export const NOT_PRESSED_WHERE_ASKED =
  "This button can only be used in the conversation where the request was asked.";

/** Whether `press` came from another conversation than `asked`, the card's own. */
export function pressedElsewhere(
  press: Extract<ButtonPress, { kind: "card" }>,
  asked: ThreadTarget,
): boolean {
  const where = press.pressedIn;
  if (where.platform !== asked.platform || where.workspace !== asked.workspace) return true;
  const askedIds = idsOf(asked);
  return !idsOf(where).some((id) => askedIds.includes(id));
}

/** A conversation's chat ids: its own, and the one it is also known as (a migrated group). */
function idsOf(target: ThreadTarget): string[] {
  const other = target.extra?.alsoKnownAs;
  return other === undefined ? [target.channel] : [target.channel, String(other)];
}
