/**
 * WakeAccess: a wake-up reaches the session layer only when the requester's platform says they
 * may still use the bot in that conversation; the console (no rules) is not checked, a platform
 * whose channel has not registered its rules yet is held (wake-access-hold.test.ts), and a check
 * that fails rejects the wake (it is tried again later) rather than letting it through.
 */
import { describe, expect, it } from "vitest";
import { WakeAccess } from "../../src/app/wake-access.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/telegram-html.js";
import { CONSOLE, recordingSessions, SLACK, turn } from "./wake-access-helpers.js";

describe("WakeAccess", () => {
  it("refuses a wake-up for someone the platform no longer allows there, and wakes the others", async () => {
    const access = new WakeAccess();
    const asked: string[] = [];
    access.register("slack", async (userId, target) => {
      asked.push(`${userId}@${target.channel}`);
      return userId !== "U1ANA";
    });
    const { sessions, woken } = recordingSessions();
    const guarded = access.guard(sessions);
    expect(await guarded.wake(turn(SLACK))).toEqual({
      status: "refused",
      reason: "Ana (id U1ANA) may no longer use Coworker in this conversation",
    });
    expect(woken).toEqual([]);
    expect(await guarded.wake(turn(SLACK, "U2BEN"))).toEqual({ status: "started" });
    expect(woken.map((t) => t.requester.id)).toEqual(["U2BEN"]);
    expect(asked).toEqual(["U1ANA@C1", "U2BEN@C1"]);
  });

  it("names the refused requester as plain markdown text with their user id: a name written as a link stays text", async () => {
    const access = new WakeAccess();
    access.register("slack", async () => false);
    const { sessions } = recordingSessions();
    const mallory = {
      ...turn(SLACK, "U6MAL"),
      requester: { id: "U6MAL", name: "[Approve ✅](https://evil.example)" },
    };
    const refused = await access.guard(sessions).wake(mallory);
    expect(refused).toEqual({
      status: "refused",
      reason:
        "\\[Approve ✅\\]\\(https\\:\\/\\/evil\\.example\\) (id U6MAL) may no longer use Coworker in this conversation",
    });
    expect(markdownToTelegramHtml(refused.status === "refused" ? refused.reason : "")).not.toContain("<a ");
  });

  it("does not check a platform that registered no rules, and keeps isBusy and notify", async () => {
    const access = new WakeAccess();
    access.register("slack", async () => false);
    const { sessions, woken, notices } = recordingSessions();
    const guarded = access.guard(sessions);
    expect(await guarded.wake(turn(CONSOLE))).toEqual({ status: "started" });
    expect(woken).toHaveLength(1);
    expect([guarded.isBusy("busy"), guarded.isBusy("idle")]).toEqual([true, false]);
    await guarded.notify(SLACK, "hello");
    expect(notices).toEqual(["hello"]);
  });

  it("rejects, without waking, when the platform cannot tell; a later registration replaces the rules", async () => {
    const access = new WakeAccess();
    access.register("slack", async () => {
      throw new Error("users.info failed");
    });
    const { sessions, woken } = recordingSessions();
    const guarded = access.guard(sessions);
    await expect(guarded.wake(turn(SLACK))).rejects.toThrow("users.info failed");
    expect(woken).toEqual([]);
    access.register("slack", async () => true);
    expect(await guarded.wake(turn(SLACK))).toEqual({ status: "started" });
  });

  it("answers a typed decision's check at once: the platform's rules, true without rules, rejected before they are registered", async () => {
    const access = new WakeAccess();
    await expect(access.mayAct("U1ANA", SLACK)).rejects.toThrow(/slack is not connected/);
    access.register("slack", async (userId) => userId !== "U1ANA");
    expect(await access.mayAct("U1ANA", SLACK)).toBe(false);
    expect(await access.mayAct("U2BEN", SLACK)).toBe(true);
    expect(await access.mayAct("local", CONSOLE)).toBe(true);
  });
});
