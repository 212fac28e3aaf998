/**
 * A press on a card button or a turn control (Stop, Retry) as a channel reports it, and what
 * became of it.
 */
import type { PlatformUser, ThreadTarget } from "./thread-target.js";

export type ButtonPress =
  | {
      readonly kind: "card";
      readonly platform: string;
      readonly pendingId: string;
      readonly action: string;
      readonly user: PlatformUser;
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
