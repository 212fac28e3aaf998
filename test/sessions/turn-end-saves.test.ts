/**
 * TurnEndSaves on its own: a waiting end is saved once (by the timer or at once, not both), the
 * ends waiting together are saved together (one store commit), a failed save is logged rather than
 * lost in silence, and `settled` waits for a save under way.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { LiveSession } from "../../src/sessions/live-session.js";
import { END_SAVES_PER_GROUP, TurnEndSaves } from "../../src/sessions/turn-end-saves.js";

/** A session stand-in whose flush is counted and can be made to fail or to wait. */
function session(id: string, flush: () => Promise<void>) {
  let flushes = 0;
  const live = {
    id,
    hasUnsavedChange: true,
    flush: () => {
      flushes += 1;
      return flush();
    },
  } as unknown as LiveSession;
  return { live, flushes: () => flushes };
}

function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: "error" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe("TurnEndSaves", () => {
  it("saves a waiting end once: by its timer, or at once (which cancels the timer)", async () => {
    const saves = new TurnEndSaves(pino({ level: "silent" }), 20);
    const timed = session("a", async () => undefined);
    saves.later(timed.live);
    saves.later(timed.live);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(timed.flushes()).toBe(1);

    const early = session("b", async () => undefined);
    saves.later(early.live);
    await saves.now(early.live);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(early.flushes()).toBe(1);
  });

  it("saves every end waiting when the timer fires in the same loop turn, within the delay of the first", async () => {
    const saves = new TurnEndSaves(pino({ level: "silent" }), 40);
    const flushedAt: Array<[string, number]> = [];
    let turn = 0;
    const ticking = setInterval(() => (turn += 1), 1);
    const first = session("a", async () => void flushedAt.push(["a", turn]));
    saves.later(first.live);
    await new Promise((resolve) => setTimeout(resolve, 15));
    const second = session("b", async () => void flushedAt.push(["b", turn]));
    saves.later(second.live);
    await new Promise((resolve) => setTimeout(resolve, 100));
    clearInterval(ticking);
    expect(flushedAt.map(([id]) => id).sort()).toEqual(["a", "b"]);
    expect(flushedAt[0]![1]).toBe(flushedAt[1]![1]);
    expect([first.flushes(), second.flushes()]).toEqual([1, 1]);
  });

  it("saves many waiting ends in groups, one loop turn each, and arms again for ends that came meanwhile", async () => {
    const saves = new TurnEndSaves(pino({ level: "silent" }), 20);
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn += 1;
      if (ticking) setImmediate(tick);
    };
    tick();
    const turns: number[] = [];
    const late = session("late", async () => void turns.push(turn));
    const count = END_SAVES_PER_GROUP * 2 + 5;
    const sessions = Array.from({ length: count }, (_, i) =>
      session(`s${i}`, async () => {
        turns.push(turn);
        // An end that comes while the due ones are being saved waits for the next timer.
        if (i === 0) saves.later(late.live);
      }),
    );
    for (const { live } of sessions) saves.later(live);
    await new Promise((resolve) => setTimeout(resolve, 120));
    ticking = false;
    const groups = [...new Set(turns)].map((t) => turns.filter((x) => x === t).length);
    expect(groups).toEqual([END_SAVES_PER_GROUP, END_SAVES_PER_GROUP, 5, 1]);
    expect(sessions.every(({ flushes }) => flushes() === 1)).toBe(true);
    expect(late.flushes()).toBe(1);
  });

  it("logs a failed save, and settled() waits for a save under way", async () => {
    const { logger, lines } = recordingLogger();
    const saves = new TurnEndSaves(logger, 60_000);
    let fail!: (error: Error) => void;
    const failing = session("c", () => new Promise<void>((_, reject) => (fail = reject)));
    saves.later(failing.live);
    const all = saves.all();
    let settled = false;
    const waiting = saves.settled("c").then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    fail(new Error("disk full"));
    await Promise.all([all, waiting]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ sessionId: "c", msg: "saving a turn's end failed" });
  });
});
