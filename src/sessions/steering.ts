/**
 * Whether a message may steer the session's running turn — answered at once, with no await, so a
 * caller that has counted input as taken in (the shared queue's take, lease-gate.ts) decides
 * where it goes before any record can be built in between (TurnScheduler.steer checks the same).
 */
import type { PlatformUser } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";

/**
 * Whether a message from `user` would be sent into the session's running turn: a turn is running,
 * as them (another person's words become a follow-up turn of their own).
 */
export function takesSteeringFrom(live: LiveSession, user: PlatformUser): boolean {
  return (
    live.activeTurn !== undefined && live.engine.isRunning && live.activeTurn.requester.userId === user.id
  );
}
