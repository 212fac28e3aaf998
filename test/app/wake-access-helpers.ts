/**
 * Shared by the WakeAccess tests: a Slack and a console target, a wake-up turn Ana requested (or
 * `id`), and session-layer wakers that record what they wake and notify.
 */
import type { ThreadTarget } from "../../src/core/thread-target.js";
import type { WakeTurn } from "../../src/sessions/wake-turns.js";
import type { NotifyingSessions } from "../../src/subscriptions/session-wake.js";

export const SLACK: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" };
export const CONSOLE: ThreadTarget = { platform: "console", workspace: "local", channel: "console" };

export const turn = (target: ThreadTarget, id = "U1ANA"): WakeTurn => ({
  sessionId: "s1",
  target,
  prompt: "[Wake-up]",
  requester: { id, name: "Ana" },
});

/** Sessions that start every wake-up and record it, record notices, and are busy for session "busy" only. */
export function recordingSessions() {
  const woken: WakeTurn[] = [];
  const notices: string[] = [];
  const sessions: NotifyingSessions = {
    wake: async (t) => {
      woken.push(t);
      return { status: "started" };
    },
    isBusy: (id) => id === "busy",
    notify: async (_target, text) => {
      notices.push(text);
    },
  };
  return { sessions, woken, notices };
}
