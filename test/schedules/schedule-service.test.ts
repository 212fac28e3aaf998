import { afterEach, describe, expect, it } from "vitest";
import { ANA_HOME, HOME, ANA_OTHER, BEN, flush, type Harness, openHarness, T0, MIN, iso } from "./support.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Fire timers due now (a restart arms overdue tasks at once) and let their work finish. */
async function settle(harness: Harness): Promise<void> {
  harness.clock.advance(0);
  await flush(harness.service);
}

async function advance(harness: Harness, ms: number, step = MIN): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    harness.clock.advance(Math.min(step, ms - done));
    await flush(harness.service);
  }
}

describe("ScheduleService runs", () => {
  it("runs a one-shot task once at its time, in its thread, as its creator, with a marked input", async () => {
    h = await openHarness();
    const made = await h.service.create(ANA_HOME, { prompt: "summarise #deploys", at: iso(T0 + 10 * MIN) });
    expect(made.ok).toBe(true);
    const id = /tsk_[0-9a-f]{12}/.exec(made.message)![0];
    await advance(h, 9 * MIN);
    expect(h.sessions.turns).toHaveLength(0);
    await advance(h, 2 * MIN);
    expect(h.sessions.turns).toHaveLength(1);
    const turn = h.sessions.turns[0]!;
    expect(turn).toMatchObject({
      sessionId: "s-home",
      target: ANA_HOME.target,
      requester: ANA_HOME.requester,
      scheduledRun: { taskId: id, dueAt: iso(T0 + 10 * MIN) },
    });
    expect(turn.channelContent).toBeUndefined();
    expect(turn.prompt).toContain(`[Scheduled run of task ${id}, set up by Ana]`);
    expect(turn.prompt).toContain("> summarise #deploys");
    expect(turn.prompt).toContain("previous run: none");
    await advance(h, 60 * MIN);
    expect(h.sessions.turns).toHaveLength(1);
    expect(h.service.listFor({ platform: "slack", userId: "U1ANA" })).toEqual([]);
  });

  it("runs a cron task at each occurrence and names the previous run", async () => {
    h = await openHarness();
    const made = await h.service.create(ANA_HOME, {
      prompt: "check the queue",
      cron: "*/10 * * * *",
      timezone: "UTC",
    });
    expect(made.ok).toBe(true);
    await advance(h, 35 * MIN);
    expect(h.sessions.turns).toHaveLength(3);
    expect(h.sessions.turns[1]!.prompt).toContain("previous run: Tue, 1 Dec 2026, 08:10 (UTC)");
    const [task] = h.service.listFor({ platform: "slack", userId: "U1ANA" });
    expect(task).toMatchObject({ runs: 3, lastRunAt: iso(T0 + 30 * MIN), nextRunAt: iso(T0 + 40 * MIN) });
  });

  it("stops a cron task after max_runs", async () => {
    h = await openHarness();
    await h.service.create(ANA_HOME, { prompt: "twice", cron: "*/10 * * * *", timezone: "UTC", max_runs: 2 });
    await advance(h, 60 * MIN);
    expect(h.sessions.turns).toHaveLength(2);
    expect(h.service.listFor({ platform: "slack", userId: "U1ANA" })).toEqual([]);
  });

  it("after a restart runs a run missed within the catch-up window once, and no earlier one", async () => {
    h = await openHarness({ settings: { catchUpMs: 30 * MIN } });
    await h.service.create(ANA_HOME, { prompt: "hourly digest", cron: "0 * * * *", timezone: "UTC" });
    await h.service.shutdown();
    h.clock.advance(3 * 60 * MIN + 20 * MIN); // down from 08:00 to 11:20: 09, 10 and 11 o'clock missed
    await h.restart();
    await settle(h);
    expect(h.sessions.turns).toHaveLength(1);
    expect(h.sessions.turns[0]!.prompt).toContain("this run was due Tue, 1 Dec 2026, 11:00 (UTC)");
    expect(h.sessions.turns[0]!.prompt).toContain("2 earlier runs were missed");
    await h.restart();
    await settle(h);
    expect(h.sessions.turns).toHaveLength(1);
    await advance(h, 41 * MIN);
    expect(h.sessions.turns).toHaveLength(2);
  });

  it("skips a run missed by more than the catch-up window, with a note in the thread", async () => {
    h = await openHarness({ settings: { catchUpMs: 30 * MIN } });
    await h.service.create(ANA_HOME, { prompt: "report", at: iso(T0 + 10 * MIN) });
    await h.service.shutdown();
    h.clock.advance(2 * 60 * MIN);
    await h.restart();
    await settle(h);
    expect(h.sessions.turns).toHaveLength(0);
    expect(h.sessions.notices).toHaveLength(1);
    expect(h.sessions.notices[0]!.target).toEqual(ANA_HOME.target);
    expect(h.sessions.notices[0]!.text).toContain(
      "while I was not running — more than 30 min ago, so I skipped",
    );
    expect(h.service.listFor({ platform: "slack", userId: "U1ANA" })).toEqual([]);
  });

  it("wakes the session once with its note", async () => {
    h = await openHarness();
    const made = await h.service.wakeLater(ANA_HOME, {
      in_s: 600,
      note: "check whether the deploy finished",
    });
    expect(made).toMatchObject({ ok: true });
    await advance(h, 11 * MIN);
    expect(h.sessions.turns).toHaveLength(1);
    expect(h.sessions.turns[0]!.prompt).toMatch(/^\[Wake-up wak_[0-9a-f]{12}: you asked to be woken at/);
    expect(h.sessions.turns[0]!.prompt).toContain("> check whether the deploy finished");
  });

  it("pauses a task whose conversation is gone and tells its creator by direct message", async () => {
    h = await openHarness();
    await h.service.create(ANA_HOME, { prompt: "digest", cron: "0 * * * *", timezone: "UTC" });
    h.sessions.gone.add("s-home");
    await advance(h, 61 * MIN);
    const [task] = h.service.listFor({ platform: "slack", userId: "U1ANA" });
    expect(task).toMatchObject({ status: "paused" });
    expect(h.sessions.notices).toHaveLength(1);
    expect(h.sessions.notices[0]!.target).toEqual({ platform: "slack", workspace: "T1", channel: "U1ANA" });
    expect(h.sessions.notices[0]!.text).toContain("I paused your scheduled task");
    await advance(h, 120 * MIN, 30 * MIN);
    expect(h.sessions.turns).toHaveLength(0);
  });

  it("the notice of a task whose conversation is gone never quotes half an emoji", async () => {
    h = await openHarness();
    // The emoji at units 78-79: the clip's cut (79 units and "…") would fall between its halves.
    const prompt = `${"d".repeat(78)}😀${"e".repeat(10)}`;
    await h.service.create(ANA_HOME, { prompt, cron: "0 * * * *", timezone: "UTC" });
    h.sessions.gone.add("s-home");
    await advance(h, 61 * MIN);
    expect(h.sessions.notices.map((n) => n.text)).toEqual([
      expect.stringContaining(`("${"d".repeat(78)}…")`),
    ]);
  });

  it("the notice of a task whose conversation is gone quotes its text as plain text, never a link or mention", async () => {
    h = await openHarness();
    await h.service.create(ANA_HOME, {
      prompt: "[click](https://evil.example) <!channel>",
      cron: "0 * * * *",
      timezone: "UTC",
    });
    h.sessions.gone.add("s-home");
    await advance(h, 61 * MIN);
    expect(h.sessions.notices.map((n) => n.text)).toEqual([
      expect.stringContaining(String.raw`("\[click\]\(https\:\/\/evil\.example\) \<\!channel\>")`),
    ]);
  });

  it("pauses a task whose creator may no longer use the bot there, and says so in its thread", async () => {
    h = await openHarness();
    await h.service.create(ANA_HOME, { prompt: "digest", cron: "0 * * * *", timezone: "UTC" });
    h.sessions.refused.add("U1ANA");
    await advance(h, 61 * MIN);
    const [task] = h.service.listFor({ platform: "slack", userId: "U1ANA" });
    expect(task).toMatchObject({
      status: "paused",
      statusNote: "Ana may no longer use Coworker in this conversation",
    });
    expect(h.sessions.notices).toEqual([
      {
        target: HOME,
        text: `I paused the scheduled task ${task!.id}, which runs as the person who set it up: Ana may no longer use Coworker in this conversation.`,
      },
    ]);
    await advance(h, 120 * MIN, 30 * MIN);
    expect(h.sessions.turns).toHaveLength(0);
  });

  it("notes a run its session skipped (the previous one still waits) without counting a failure", async () => {
    h = await openHarness();
    await h.service.create(ANA_HOME, { prompt: "digest", cron: "*/10 * * * *", timezone: "UTC" });
    h.sessions.stillWaiting.add("s-home");
    await advance(h, 35 * MIN);
    const [task] = h.service.listFor({ platform: "slack", userId: "U1ANA" });
    expect(task).toMatchObject({
      status: "active",
      failures: 0,
      lastResult: "skipped: its previous run has not started yet",
      nextRunAt: iso(T0 + 40 * MIN),
    });
    h.sessions.stillWaiting.clear();
    await advance(h, 10 * MIN);
    expect(h.sessions.turns).toHaveLength(1);
  });

  it("pauses the tasks of a channel the bot was removed from", async () => {
    h = await openHarness();
    await h.service.create(BEN, { prompt: "digest", cron: "0 * * * *", timezone: "UTC" });
    await h.service.create(ANA_HOME, { prompt: "mine", cron: "0 * * * *", timezone: "UTC" });
    expect(await h.service.channelGone({ platform: "slack", workspace: "T1", channel: "C1GEN" })).toBe(1);
    expect(h.sessions.notices.map((n) => n.target.channel)).toEqual(["U2BEN"]);
    await advance(h, 61 * MIN);
    expect(h.sessions.turns.map((t) => t.sessionId)).toEqual(["s-home"]);
  });

  it("pauses a task after three failed runs in a row, and a success resets the count", async () => {
    h = await openHarness();
    const made = await h.service.create(ANA_HOME, { prompt: "flaky", cron: "*/10 * * * *", timezone: "UTC" });
    const id = /tsk_[0-9a-f]{12}/.exec(made.message)![0];
    const runAndEnd = async (status: string) => {
      await advance(h!, 10 * MIN);
      await h!.service.turnEnded(id, status);
    };
    await runAndEnd("error");
    await runAndEnd("error");
    await runAndEnd("completed");
    await runAndEnd("error");
    await runAndEnd("max_iterations");
    expect(h.service.listFor({ platform: "slack", userId: "U1ANA" })[0]).toMatchObject({
      status: "active",
      failures: 2,
    });
    await runAndEnd("error");
    expect(h.service.listFor({ platform: "slack", userId: "U1ANA" })[0]).toMatchObject({ status: "paused" });
    expect(h.sessions.notices.at(-1)!.text).toContain("failed 3 times in a row");
    const runs = h.sessions.turns.length;
    await advance(h, 60 * MIN, 10 * MIN);
    expect(h.sessions.turns).toHaveLength(runs);
  });
});

describe("ScheduleService guards", () => {
  it("refuses schedules closer than the minimum interval, past times and both or neither of at/cron", async () => {
    h = await openHarness();
    expect((await h.service.create(ANA_HOME, { prompt: "x", cron: "* * * * *" })).message).toContain(
      'Runs of "* * * * *" can come 1 min apart; tasks may run at most every 5 min',
    );
    // Its 23:59 and next day's 00:00 both run only at the end of a February of 28 days.
    const rare = "0,59 0,23 1,4,7,10,13,16,19,22,25,28 * *";
    expect((await h.service.create(ANA_HOME, { prompt: "x", cron: rare })).message).toBe(
      `Runs of "${rare}" can come 1 min apart; tasks may run at most every 5 min.`,
    );
    // Mondays are never a clock change in Berlin, but its times are checked as on every day: the
    // refusal says where the gap comes from.
    expect(
      (await h.service.create(ANA_HOME, { prompt: "x", cron: "0,59 2 * * 1", timezone: "Europe/Berlin" }))
        .message,
    ).toBe(
      'Runs of "0,59 2 * * 1" can come 1 min apart on a day the clocks change in Europe/Berlin (its times are checked as if it ran every day: move them away from the hour the clocks change); tasks may run at most every 5 min.',
    );
    expect((await h.service.create(ANA_HOME, { prompt: "x", at: iso(T0 - MIN) })).message).toContain(
      "in the past",
    );
    expect((await h.service.create(ANA_HOME, { prompt: "x" })).message).toContain("exactly one of");
    expect(
      (await h.service.create(ANA_HOME, { prompt: "x", at: iso(T0 + MIN), cron: "0 9 * * *" })).message,
    ).toContain("exactly one of");
    expect((await h.service.create(ANA_HOME, { prompt: "x", at: "tomorrow 9am" })).message).toContain(
      "not an ISO time",
    );
    expect(h.service.listFor({ platform: "slack", userId: "U1ANA" })).toEqual([]);
  });

  it("caps active tasks per person and per workspace", async () => {
    h = await openHarness({ settings: { maxActivePerPerson: 2, maxActivePerWorkspace: 3 } });
    const hourly = { prompt: "x", cron: "0 * * * *", timezone: "UTC" };
    expect((await h.service.create(ANA_HOME, hourly)).ok).toBe(true);
    expect((await h.service.create(ANA_OTHER, hourly)).ok).toBe(true);
    expect((await h.service.create(ANA_HOME, hourly)).message).toContain(
      "You already have 2 active scheduled tasks",
    );
    expect((await h.service.create(BEN, hourly)).ok).toBe(true);
    const carol = { ...BEN, requester: { id: "U3CAR", name: "Carol" } };
    expect((await h.service.create(carol, hourly)).message).toContain(
      "This workspace has 3 active scheduled tasks",
    );
  });

  it("counts paused tasks toward the tasks a person may hold, so pausing cannot pile them up", async () => {
    h = await openHarness({ settings: { maxActivePerPerson: 3, maxTasksPerPerson: 6 } });
    const hourly = { prompt: "digest", cron: "0 * * * *", timezone: "UTC" };
    const made: boolean[] = [];
    for (let round = 0; round < 3; round += 1) {
      for (let i = 0; i < 3; i += 1) made.push((await h.service.create(BEN, hourly)).ok);
      // The bot is removed from the channel: its tasks are paused, not removed.
      await h.service.channelGone({ platform: "slack", workspace: "T1", channel: "C1GEN" });
    }
    expect(made).toEqual([true, true, true, true, true, true, false, false, false]);
    const held = h.service.listFor({ platform: "slack", userId: "U2BEN" });
    expect(held.map((t) => t.status)).toEqual(Array(6).fill("paused"));
    const refused = await h.service.create(BEN, hourly);
    expect(refused.message).toContain(
      "You already hold 6 scheduled tasks and wake-ups, paused ones included",
    );
    expect(refused.message).toContain("cancel_scheduled_task");
    expect((await h.service.cancel({ platform: "slack", userId: "U2BEN" }, held[0]!.id)).ok).toBe(true);
    expect((await h.service.create(BEN, hourly)).ok).toBe(true);
  });

  it("bounds wake-ups and rate-limits them per session", async () => {
    h = await openHarness({ settings: { wakesPerSessionPerHour: 2, maxWakeMs: 3_600_000 } });
    expect((await h.service.wakeLater(ANA_HOME, { in_s: 7_200, note: "x" })).message).toContain(
      "at most 1 h ahead",
    );
    expect((await h.service.wakeLater(ANA_HOME, { in_s: 60, note: "a" })).ok).toBe(true);
    expect((await h.service.wakeLater(ANA_HOME, { in_s: 60, note: "b" })).ok).toBe(true);
    expect((await h.service.wakeLater(ANA_HOME, { in_s: 60, note: "c" })).message).toContain(
      "the most allowed",
    );
    expect((await h.service.wakeLater(ANA_OTHER, { in_s: 60, note: "d" })).ok).toBe(true);
  });

  it("uses the person's timezone from the platform when the call names none", async () => {
    h = await openHarness({ extra: { timezoneOf: async () => "Asia/Tokyo" } });
    const made = await h.service.create(ANA_HOME, { prompt: "standup", cron: "0 9 * * *" });
    expect(made.message).toContain("in Asia/Tokyo");
    const preview = await h.service.preview(ANA_HOME, { prompt: "standup", cron: "0 9 * * *" });
    expect(preview.detail).toContain("Where: this conversation (slack D1ANA, thread 100.1)");
    expect(preview.detail).toContain(
      "Next: Wed, 2 Dec 2026, 09:00 (Asia/Tokyo, UTC+09:00); Thu, 3 Dec 2026, 09:00 (Asia/Tokyo, UTC+09:00); Fri, 4 Dec 2026, 09:00 (Asia/Tokyo, UTC+09:00)",
    );
  });
});

describe("ScheduleService from any conversation", () => {
  it("lists a person's tasks across conversations, saying where each posts, and cancels from another one", async () => {
    h = await openHarness();
    const made = await h.service.create(ANA_HOME, { prompt: "digest", cron: "0 9 * * *", timezone: "UTC" });
    await h.service.create(BEN, { prompt: "ben's", cron: "0 9 * * *", timezone: "UTC" });
    const id = /tsk_[0-9a-f]{12}/.exec(made.message)![0];
    const lines = h.service.linesFor({ platform: "slack", userId: "U1ANA", sessionId: "s-other" });
    expect(lines[0]).toBe("Scheduled tasks (1):");
    expect(lines[1]).toContain(`[${id}] "digest" — posts in slack D1ANA, thread 100.1`);
    expect(lines[1]).toContain("next Tue, 1 Dec 2026, 09:00 (UTC)");
    const home = h.service.linesFor({ platform: "slack", userId: "U1ANA", sessionId: "s-home" });
    expect(home[1]).toContain("posts in this conversation");

    const benTries = await h.service.cancel({ platform: "slack", userId: "U2BEN" }, id);
    expect(benTries).toMatchObject({ ok: false });
    const cancelled = await h.service.cancel(
      { platform: "slack", userId: "U1ANA", sessionId: "s-other" },
      id,
    );
    expect(cancelled.message).toBe(`Cancelled task ${id} (posted in slack D1ANA, thread 100.1).`);
    await advance(h, 20 * 60 * MIN, 60 * MIN);
    expect(h.sessions.turns.map((t) => t.sessionId)).toEqual(["s-ben"]);
  });

  it("lets an approver cancel anyone's task", async () => {
    h = await openHarness();
    const made = await h.service.create(BEN, { prompt: "digest", cron: "0 9 * * *", timezone: "UTC" });
    const id = /tsk_[0-9a-f]{12}/.exec(made.message)![0];
    expect((await h.service.cancel({ platform: "slack", userId: "U9BOSS" }, id)).ok).toBe(true);
    expect(h.service.listFor({ platform: "slack", userId: "U2BEN" })).toEqual([]);
  });

  it("answers a cancel of an id no task can have as no such task, never with the store's key error", async () => {
    // `cancel_task <id>` takes any word typed: one over 200 characters, or with a NUL, was looked up
    // in the store, which threw ("The cancel_task command failed: store: key in schedules must be …").
    h = await openHarness();
    await h.service.create(ANA_HOME, { prompt: "digest", cron: "0 9 * * *", timezone: "UTC" });
    for (const id of ["x".repeat(300), "tsk_\u0000", "tsk_\ud800"]) {
      const outcome = await h.service.cancel({ platform: "slack", userId: "U1ANA" }, id);
      expect(outcome).toMatchObject({
        ok: false,
        message: expect.stringMatching(/^You have no scheduled task /),
      });
    }
    expect(h.service.listFor({ platform: "slack", userId: "U1ANA" })).toHaveLength(1);
  });

  it("leaves no catalog refresh armed after shutdown, even when it was started twice", async () => {
    h = await openHarness();
    h.service.start();
    await h.service.shutdown();
    await advance(h, 3 * 60 * MIN, 60 * MIN);
    expect(h.clock.pending).toBe(0);
  });
});
