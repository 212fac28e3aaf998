/**
 * What a scheduled run leaves on its task, with one or two processes on one store: a run's end is
 * written on the task as stored now (a task cancelled or paused elsewhere, or while the end was
 * being recorded, stays so; an end reported for an earlier run changes nothing), and a run the
 * session layer could not take (its platform not connected yet, a drain, a restart) is no failed
 * run: it is tried again — here, on the other process or at the next start — and once a whole
 * catch-up window has passed with no run of the task taken (a repeating task's across its
 * occurrences and a restart), the task is paused and its creator told, once.
 */
import { describe, expect, it } from "vitest";
import { WakeAccess } from "../../src/app/wake-access.js";
import type { Caller } from "../../src/core/thread-target.js";
import { formatIn } from "../../src/schedules/occurrences.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { spaceLike } from "../support/space-like.js";
import type { ScheduleArgs } from "../../src/schedules/task-planner.js";
import { ANA_ACTOR, advance, closeAfterEach, stored } from "./support-processes.js";
import { ANA_HOME, flush, type Harness, iso, MIN, openHarness, T0 } from "./support.js";
import os from "node:os";

const closeLater = closeAfterEach();

async function one(options: Parameters<typeof openHarness>[0] = {}): Promise<Harness> {
  const h = await openHarness(options);
  closeLater(h);
  return h;
}

/** Two processes on one store and one clock, both knowing the person's tasks; the second is closed first. */
async function two(): Promise<[Harness, Harness]> {
  const a = await one();
  const b = await openHarness({ store: a.store, clock: a.clock });
  closeLater({ ...b, close: () => b.service.shutdown() });
  return [a, b];
}

/** The task `caller` creates on `h`: its id. */
async function created(h: Harness, args: ScheduleArgs, caller: Caller = ANA_HOME): Promise<string> {
  const outcome = await h.service.create(caller, args);
  const id = /(tsk|wak)_[0-9a-f]{12}/.exec(outcome.message)?.[0];
  if (!outcome.ok || id === undefined) throw new Error(outcome.message);
  return id;
}

/** Fire the timers due now (a start arms overdue tasks at once) and let their work finish. */
async function settle(h: Harness): Promise<void> {
  h.clock.advance(0);
  await flush(h.service);
}

const turnsOf = (...harnesses: Harness[]) => harnesses.flatMap((h) => h.sessions.turns);

const rejecting = (message: string) => async () => {
  throw new Error(message);
};

describe("a run's end is written on the task as stored now", () => {
  it("a task cancelled on one process stays cancelled when its run's turn ends on the other", async () => {
    const [a, b] = await two();
    const id = await created(a, { prompt: "hourly check", cron: "0 * * * *", timezone: "UTC" });
    await stored(b);
    await advance([a, b], 60 * MIN);
    const [turn] = turnsOf(a, b);
    expect(turn?.scheduledRun?.taskId).toBe(id);
    expect((await a.service.cancel(ANA_ACTOR, id)).ok).toBe(true);
    await b.service.turnEnded(id, "completed", turn!.scheduledRun!.dueAt);
    await b.service.turnEnded(id, "error");
    expect(await stored(a)).toEqual([]);
    await advance([a, b], 60 * MIN);
    expect(turnsOf(a, b)).toHaveLength(1);
  });

  it("a failed run ending on the other process leaves a task paused there paused, its run counted", async () => {
    const [a, b] = await two();
    const id = await created(a, { prompt: "hourly check", cron: "0 * * * *", timezone: "UTC" });
    await stored(b);
    await advance([a, b], 60 * MIN);
    expect(await a.service.channelGone({ platform: "slack", workspace: "T1", channel: "D1ANA" })).toBe(1);
    await b.service.turnEnded(id, "error", turnsOf(a, b)[0]!.scheduledRun!.dueAt);
    expect(await stored(a)).toEqual([
      expect.objectContaining({ id, status: "paused", runs: 1, failures: 0, nextRunAt: iso(T0 + 120 * MIN) }),
    ]);
  });

  it("a turn's end reported for an earlier run than the task's latest changes nothing", async () => {
    const h = await one();
    const id = await created(h, { prompt: "check", cron: "*/10 * * * *", timezone: "UTC" });
    await advance([h], 20 * MIN);
    const [first, second] = h.sessions.turns;
    await h.service.turnEnded(id, "completed", second!.scheduledRun!.dueAt);
    await h.service.turnEnded(id, "error", first!.scheduledRun!.dueAt);
    expect(await stored(h)).toEqual([expect.objectContaining({ id, failures: 0, lastResult: "completed" })]);
  });

  it("a task cancelled while its run's end is being recorded stays cancelled", async () => {
    // The store holds the cancel's catalog write until the turn's end has been reported.
    const inner = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    let hold: Promise<void> | undefined;
    let holding: (() => void) | undefined;
    const started = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const store: Store = Object.assign(Object.create(inner) as Store, {
      space: (namespace: Parameters<Store["space"]>[0]): KeyValueSpace => {
        const space = inner.space(namespace);
        const held = async <R>(key: string, write: () => Promise<R>): Promise<R> => {
          if (hold && key.startsWith("catalog:")) {
            holding?.();
            await hold;
          }
          return write();
        };
        return spaceLike(space, {
          replaceIf: (key, expected, value, ttlMs) =>
            held(key, () => space.replaceIf(key, expected, value, ttlMs)),
          set: (key, value, ttl) => held(key, () => space.set(key, value, ttl)),
        });
      },
      close: () => inner.close(),
    });
    const h = await one({ store });
    const id = await created(h, { prompt: "hourly check", cron: "0 * * * *", timezone: "UTC" });
    await advance([h], 60 * MIN);
    let release!: () => void;
    hold = new Promise((resolve) => {
      release = resolve;
    });
    const cancelling = h.service.cancel(ANA_ACTOR, id);
    await started;
    const ending = h.service.turnEnded(id, "completed");
    release();
    expect((await cancelling).ok).toBe(true);
    await ending;
    hold = undefined;
    expect(await stored(h)).toEqual([]);
  });
});

describe("a run the session layer could not take", () => {
  it("a wake-up and a one-off task due before the platform connected run once it has, with no notice", async () => {
    const access = new WakeAccess({ holdMs: 0 });
    // The harness's sessions behind the app's guard, with no platform's rules registered yet.
    let h!: Harness;
    h = await one({
      extra: {
        sessions: {
          wake: (turn) =>
            access
              .guard({ wake: (t) => h.sessions.wake(t), isBusy: () => false, notify: async () => undefined })
              .wake(turn),
          isBusy: () => false,
        },
      },
    });
    expect((await h.service.wakeLater(ANA_HOME, { note: "check the deploy", in_s: 600 })).ok).toBe(true);
    await created(h, { prompt: "remind me", at: iso(T0 + 10 * MIN) });
    await advance([h], 11 * MIN);
    expect(h.sessions.turns).toEqual([]);
    expect((await stored(h)).map((t) => [t.status, t.failures, t.lastResult])).toEqual([
      [
        "active",
        0,
        "not started, trying again: slack is not connected: cannot check whether Ana (id U1ANA) may still use Coworker there",
      ],
      [
        "active",
        0,
        "not started, trying again: slack is not connected: cannot check whether Ana (id U1ANA) may still use Coworker there",
      ],
    ]);
    access.register("slack", async () => true);
    await advance([h], 2 * MIN);
    expect(
      h.sessions.turns.map((t) => t.prompt.includes("check the deploy") || t.prompt.includes("remind me")),
    ).toEqual([true, true]);
    await advance([h], 60 * MIN);
    expect(h.sessions.turns).toHaveLength(2);
    expect(h.sessions.notices).toEqual([]);
    expect(await stored(h)).toEqual([]);
  });

  it("an overdue one-off the first start could not hand over runs at the next start", async () => {
    const h = await one();
    await created(h, { prompt: "remind me", at: iso(T0 + 10 * MIN) });
    await h.service.shutdown();
    h.clock.advance(20 * MIN);
    const wake = h.sessions.wake.bind(h.sessions);
    h.sessions.wake = rejecting("the session layer is shutting down");
    await h.restart();
    await settle(h);
    h.sessions.wake = wake;
    await h.restart();
    await settle(h);
    expect(h.sessions.turns.map((t) => t.scheduledRun?.dueAt)).toEqual([iso(T0 + 10 * MIN)]);
    expect(await stored(h)).toEqual([]);
  });

  it("a repeating task's run is tried again, not counted as a failed run", async () => {
    const h = await one({ settings: { maxFailures: 1 } });
    const id = await created(h, { prompt: "hourly check", cron: "0 * * * *", timezone: "UTC" });
    const wake = h.sessions.wake.bind(h.sessions);
    h.sessions.wake = rejecting("its thread is being switched to a new session");
    await advance([h], 60 * MIN);
    h.sessions.wake = wake;
    await advance([h], MIN);
    expect(h.sessions.turns.map((t) => t.scheduledRun)).toEqual([{ taskId: id, dueAt: iso(T0 + 60 * MIN) }]);
    expect(await stored(h)).toEqual([
      expect.objectContaining({ status: "active", failures: 0, runs: 1, nextRunAt: iso(T0 + 120 * MIN) }),
    ]);
  });

  it("a one-off still not taken when the catch-up window passes is paused and its creator told", async () => {
    const h = await one();
    const id = await created(h, { prompt: "remind me", at: iso(T0 + 10 * MIN) });
    h.sessions.wake = rejecting("the session layer is shutting down");
    await advance([h], 80 * MIN);
    expect(await stored(h)).toEqual([
      expect.objectContaining({
        id,
        status: "paused",
        statusNote: "not started: the session layer is shutting down",
      }),
    ]);
    expect(h.sessions.notices).toEqual([
      {
        target: { platform: "slack", workspace: "T1", channel: "U1ANA" },
        text: `I could not start your scheduled task ${id} ("remind me") due ${formatIn(T0 + 10 * MIN, "UTC")}, and stopped trying after 60 min: the session layer is shutting down. I paused it; cancel it with \`cancel_scheduled_task\` or set it up again.`,
      },
    ]);
  });

  it("the notice of a task not taken quotes its text as plain text, never a link or mention", async () => {
    const h = await one();
    await created(h, { prompt: "[click](https://evil.example) <!channel>", at: iso(T0 + 10 * MIN) });
    h.sessions.wake = rejecting("the session layer is shutting down");
    await advance([h], 80 * MIN);
    expect(h.sessions.notices.map((n) => n.text)).toEqual([
      expect.stringContaining(String.raw`("\[click\]\(https\:\/\/evil\.example\) \<\!channel\>")`),
    ]);
  });

  it("the paused notice quotes the task's text cut between whole characters", async () => {
    const h = await one();
    // An emoji at units 79-80: a cut at 80 units would keep only its first half.
    const prompt = `${"r".repeat(79)}😀 and the rest`;
    await created(h, { prompt, at: iso(T0 + 10 * MIN) });
    h.sessions.wake = rejecting("the session layer is shutting down");
    await advance([h], 80 * MIN);
    expect(h.sessions.notices.map((n) => n.text)).toEqual([
      expect.stringContaining(`("${"r".repeat(79)}…")`),
    ]);
  });

  it("the paused notice quotes a task's text of several lines on one line, inside its sentence", async () => {
    const h = await one();
    await created(h, { prompt: "check the deploy\n\nthen report", at: iso(T0 + 10 * MIN) });
    h.sessions.wake = rejecting("the session layer is shutting down");
    await advance([h], 80 * MIN);
    expect(h.sessions.notices.map((n) => n.text)).toEqual([
      expect.stringContaining(`("check the deploy then report")`),
    ]);
  });

  it("a reason cut to fit the task's lastResult never leaves half an emoji", async () => {
    const h = await one();
    // errorText keeps 160 characters: its cut at 159 falls between the emoji's two halves.
    h.sessions.wake = rejecting(`${"x".repeat(158)}😀 and more`);
    await created(h, { prompt: "remind me", at: iso(T0 + 10 * MIN) });
    await advance([h], 11 * MIN);
    expect((await stored(h)).map((t) => t.lastResult)).toEqual([
      `not started, trying again: ${"x".repeat(158)}…`,
    ]);
  });

  it("an hourly task none of whose runs can be handed over is paused after one catch-up window, its creator told once", async () => {
    const h = await one();
    const id = await created(h, { prompt: "hourly check", cron: "0 * * * *", timezone: "UTC" });
    let attempts = 0;
    h.sessions.wake = async () => {
      attempts += 1;
      throw new Error("slack is not connected: cannot check whether Ana may still use Coworker there");
    };
    await advance([h], 121 * MIN);
    const tried = attempts;
    await advance([h], 5 * 60 * MIN);
    expect(attempts).toBe(tried);
    expect(await stored(h)).toEqual([
      expect.objectContaining({
        id,
        status: "paused",
        statusNote:
          "not started: slack is not connected: cannot check whether Ana may still use Coworker there",
        lastResult:
          "paused, no run started in 60 min: slack is not connected: cannot check whether Ana may still use Coworker there",
      }),
    ]);
    expect(h.sessions.notices).toEqual([
      {
        target: { platform: "slack", workspace: "T1", channel: "U1ANA" },
        text: `I could not start your scheduled task ${id} ("hourly check") due ${formatIn(T0 + 60 * MIN, "UTC")} nor any run since, and stopped trying after 60 min: slack is not connected: cannot check whether Ana may still use Coworker there. I paused it; cancel it with \`cancel_scheduled_task\` or set it up again.`,
      },
    ]);
  });

  it("a task repeating more often than the catch-up window is paused one window after its first run not taken, a restart between", async () => {
    const h = await one({ settings: { catchUpMs: 30 * MIN } });
    const id = await created(h, { prompt: "check", cron: "*/10 * * * *", timezone: "UTC" });
    h.sessions.wake = rejecting("the session layer is shutting down");
    await advance([h], 25 * MIN);
    expect(await stored(h)).toEqual([
      expect.objectContaining({ id, status: "active", notTakenSince: iso(T0 + 10 * MIN) }),
    ]);
    await h.restart();
    await advance([h], 16 * MIN);
    expect(await stored(h)).toEqual([expect.objectContaining({ id, status: "paused" })]);
    expect(h.sessions.notices.map((n) => n.text)).toEqual([
      expect.stringContaining(`due ${formatIn(T0 + 10 * MIN, "UTC")} nor any run since`),
    ]);
  });

  it("a run handed over starts the count again: runs not taken for most of a window on each side of it pause nothing", async () => {
    const h = await one({ settings: { catchUpMs: 30 * MIN } });
    const id = await created(h, { prompt: "check", cron: "*/10 * * * *", timezone: "UTC" });
    const wake = h.sessions.wake.bind(h.sessions);
    h.sessions.wake = rejecting("its thread is being switched to a new session");
    await advance([h], 35 * MIN);
    h.sessions.wake = wake;
    await advance([h], MIN);
    expect(h.sessions.turns).toHaveLength(1);
    h.sessions.wake = rejecting("its thread is being switched to a new session");
    await advance([h], 29 * MIN);
    expect(await stored(h)).toEqual([
      expect.objectContaining({ id, status: "active", failures: 0, notTakenSince: iso(T0 + 40 * MIN) }),
    ]);
    expect(h.sessions.notices).toEqual([]);
  });

  it("a one-off one process could not hand over is run once by the other", async () => {
    const [a, b] = await two();
    const id = await created(a, { prompt: "remind me", at: iso(T0 + 10 * MIN) });
    await stored(b);
    a.sessions.wake = rejecting("the session layer is shutting down");
    await advance([a, b], 11 * MIN);
    await a.service.shutdown();
    await advance([b], 5 * MIN);
    expect(turnsOf(a, b).map((t) => t.scheduledRun?.taskId)).toEqual([id]);
    expect(b.sessions.turns).toHaveLength(1);
    expect(await stored(b)).toEqual([]);
  });
});
