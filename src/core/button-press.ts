/**
 * A press on a card button or a turn control (Stop, Retry) as a channel reports it, and what
 * became of it. A card press says where its button was pressed: a card is decided only from its
 * own conversation (approvals/press-place.ts), never from a copy of its buttons elsewhere.
 */
import type { PlatformUser, ThreadTarget } from "./thread-target.js";

export type ButtonPress =
  | {
      readonly kind: "card";
      readonly platform: string;
      readonly pendingId: string;
      readonly action: string;
      readonly user: PlatformUser;
      /**
       * The conversation the press counts in, which must be the card's own (press-place.ts): where
       * the pressed button's message was (a Telegram chat as its session knows it, with
       * `extra.alsoKnownAs` for a migrated group; a Slack channel and thread; the console's own
       * place). A typed `approve <id>` names the card's conversation once sessions/typed-decisions.ts
       * has checked that the typer may act there. Required, so no channel can forget it.
       */
      readonly pressedIn: ThreadTarget;
    }
  | {
      readonly kind: "control";
      readonly control: "stop" | "retry";
      readonly target: ThreadTarget;
      readonly user: PlatformUser;
    };

/** What a press led to; channels show refusals privately (ephemeral / alert). */
export type PressResult =
  | { readonly status: "accepted"; readonly message: string }
  | {
      readonly status: "not_allowed" | "already_decided" | "expired" | "unknown" | "invalid";
      readonly message: string;
    };
