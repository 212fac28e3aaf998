/**
 * cancel_scheduled_task's approval card says what goes away: the task or wake-up's text (capped)
 * and the conversation it posts in. It shows only the id asked for when the task is not the
 * person's own — another person's, or none — so the card reveals nothing of a task they may not
 * cancel, nor whether it exists. It is worded from the decision the cancel itself makes
 * (ScheduleService.toCancel), so the two agree: a task another process created is named and then
 * ended, a cancel that will be refused says so. It weighs as unsubscribe_channel does (a write of
 * medium risk).
 */
import { afterEach, describe, expect, it } from "vitest";
import { markdownLiteral } from "../../src/core/person-text.js";
import type { AnyTool, ToolContext } from "../../src/core/tool.js";
import type { Caller } from "../../src/core/thread-target.js";
import { actorOf, createScheduleTools } from "../../src/schedules/schedule-tools.js";
import { request } from "../support/engine-fixtures.js";
import { ANA_HOME, ANA_OTHER, BEN, type Harness, iso, MIN, openHarness, T0 } from "./support.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An approver (the harness's "slack:U9BOSS") in a thread of #general. */
const BOSS: Caller = {
  sessionId: "s-boss",
  target: { platform: "slack", workspace: "T1", channel: "C1GEN", thread: "400.4" },
  requester: { id: "U9BOSS", name: "Boss" },
};

/** The context of a call made by `caller`'s turn in its conversation. */
function contextOf(caller: Caller): Pick<ToolContext, "request" | "facts"> {
  return {
    request: request({
      sessionId: caller.sessionId,
      requester: { userId: caller.requester.id, displayName: caller.requester.name },
      metadata: { target: caller.target },
    }),
    facts: { downloadedFiles: new Set() },
  };
}

function cancelTool(harness: Harness): AnyTool {
  return createScheduleTools(harness.service).find((t) => t.name === "cancel_scheduled_task")!;
}

/** The id of the task `caller` creates with `prompt`. */
async function created(harness: Harness, caller: Caller, prompt: string): Promise<string> {
  const outcome = await harness.service.create(caller, { prompt, at: iso(T0 + 10 * MIN) });
  const id = /tsk_\w+/.exec(outcome.message)?.[0];
  if (id === undefined) throw new Error(outcome.message);
  return id;
}

describe("cancel_scheduled_task's card", () => {
  it("is a write of medium risk", async () => {
    h = await openHarness();
    expect(cancelTool(h)).toMatchObject({ category: "write", risk: "medium" });
  });

  it("names the task's text and where it posts, from this conversation or another", async () => {
    h = await openHarness();
    const id = await created(h, ANA_HOME, "summarise #deploys\nand  post the failures");
    const preview = (caller: Caller) => cancelTool(h!).preview!({ id: ` ${id} ` }, contextOf(caller));
    expect(await preview(ANA_HOME)).toEqual({
      summary: `cancel task ${id}: "summarise \\#deploys and post the failures", which posts in this conversation`,
    });
    expect((await preview(ANA_OTHER)).summary).toBe(
      `cancel task ${id}: "summarise \\#deploys and post the failures", which posts in slack D1ANA, thread 100.1`,
    );
  });

  it("names a wake-up by its note, capped", async () => {
    h = await openHarness();
    const outcome = await h.service.wakeLater(ANA_HOME, {
      note: `check the deploy ${"again ".repeat(60)}`,
      in_s: 60,
    });
    const id = /wak_\w+/.exec(outcome.message)![0];
    const { summary } = await cancelTool(h).preview!({ id }, contextOf(ANA_HOME));
    expect(summary).toMatch(
      new RegExp(`^cancel wake-up ${id}: "check the deploy again .*…", which posts in this conversation$`),
    );
    expect(summary.length).toBeLessThan(300);
  });

  it("says only the id for another person's task or one that does not exist, and that it will be refused", async () => {
    h = await openHarness();
    const id = await created(h, ANA_HOME, "summarise #deploys");
    for (const asked of [id, "tsk_000000000000"])
      expect(await cancelTool(h).preview!({ id: asked }, contextOf(BEN))).toEqual({
        summary: `cancel scheduled task ${markdownLiteral(asked)} (will be refused: not a task this person may cancel)`,
      });
  });

  it("names a task another process created, which the cancel then ends", async () => {
    h = await openHarness();
    // A second service on the same store, opened after this one loaded its tasks.
    const other = await openHarness({ store: h.store });
    try {
      const id = await created(other, ANA_HOME, "post the on-call rota");
      const { summary } = await cancelTool(h).preview!({ id }, contextOf(ANA_HOME));
      expect(summary).toBe(`cancel task ${id}: "post the on\\-call rota", which posts in this conversation`);
      expect(await h.service.cancel(actorOf(ANA_HOME), id)).toEqual({
        ok: true,
        message: `Cancelled task ${id} (posted in this conversation).`,
      });
    } finally {
      await other.service.shutdown();
    }
  });

  it("agrees with the cancel for the owner, another person, an approver and an unknown id", async () => {
    h = await openHarness();
    const cases: { caller: Caller; own: boolean; unknown?: true; shown: (id: string) => string }[] = [
      {
        caller: ANA_OTHER,
        own: true,
        shown: (id) => `cancel task ${id}: "digest", which posts in slack D1ANA, thread 100.1`,
      },
      {
        caller: BEN,
        own: false,
        shown: (id) =>
          `cancel scheduled task ${markdownLiteral(id)} (will be refused: not a task this person may cancel)`,
      },
      {
        caller: BOSS,
        own: false,
        shown: (id) => `cancel scheduled task ${markdownLiteral(id)} (Ana (id ${ANA_HOME.requester.id})'s)`,
      },
      {
        caller: BOSS,
        own: false,
        unknown: true,
        shown: (id) =>
          `cancel scheduled task ${markdownLiteral(id)} (will be refused: not a task this person may cancel)`,
      },
    ];
    for (const { caller, own, unknown, shown } of cases) {
      const id = unknown ? "tsk_000000000000" : await created(h, ANA_HOME, "digest");
      const target = await h.service.toCancel(actorOf(caller), id);
      const { summary } = await cancelTool(h).preview!({ id }, contextOf(caller));
      expect(summary).toBe(shown(id));
      // Asking changed nothing; the cancel then does what the card said.
      expect((await h.service.toCancel(actorOf(caller), id)).ok).toBe(target.ok);
      const outcome = await h.service.cancel(actorOf(caller), id);
      expect(outcome.ok).toBe(!summary.includes("will be refused"));
      expect(outcome.ok).toBe(target.ok);
      expect(target.ok && target.own).toBe(own);
      if (!target.ok) expect(outcome.message).toBe(target.message);
    }
  });
});
