import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EditPacer, type SendOutcome } from "../../../src/channels/shared/edit-pacer.js";

/** A pacer whose sends are recorded (at the fake clock's time) and answered by `answer`. */
function pacerWith(options: { answer?: () => SendOutcome | Promise<SendOutcome> } = {}) {
  const sends: number[] = [];
  const errors: unknown[] = [];
  const start = Date.now();
  const pacer = new EditPacer({
    budget: { intervalMs: 1_000, firstDelayMs: 500 },
    send: async () => {
      sends.push(Date.now() - start);
      return (await options.answer?.()) ?? "sent";
    },
    onError: (error) => errors.push(error),
  });
  return { pacer, sends, errors };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("EditPacer", () => {
  it("sends nothing before the first delay, then at most once per interval however often it changes", async () => {
    const { pacer, sends } = pacerWith();
    pacer.changed();
    await vi.advanceTimersByTimeAsync(499);
    expect(sends).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sends).toEqual([500]);
    for (let i = 0; i < 10; i++) {
      pacer.changed();
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(sends).toEqual([500, 1_500]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sends).toEqual([500, 1_500]);
  });

  it("counts the first delay from its creation (the turn's start), not from the first change", async () => {
    const { pacer, sends } = pacerWith();
    await vi.advanceTimersByTimeAsync(300);
    pacer.changed();
    await vi.advanceTimersByTimeAsync(199);
    expect(sends).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sends).toEqual([500]);
  });

  it("sends content that first appears after the hold-back at the next change, with all of it", async () => {
    const { pacer, sends } = pacerWith();
    await vi.advanceTimersByTimeAsync(2_000);
    pacer.changed();
    await vi.advanceTimersByTimeAsync(0);
    expect(sends).toEqual([]);
    await vi.advanceTimersByTimeAsync(50);
    pacer.changed();
    pacer.changed();
    expect(sends).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(sends).toEqual([2_050]);
  });

  it("sends late content alone once the first delay has passed since it appeared", async () => {
    const { pacer, sends } = pacerWith();
    await vi.advanceTimersByTimeAsync(2_000);
    pacer.changed();
    await vi.advanceTimersByTimeAsync(499);
    expect(sends).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sends).toEqual([2_500]);
  });

  it("does not spend the budget on a send that changed nothing", async () => {
    const answers: SendOutcome[] = ["unchanged", "sent"];
    const { pacer, sends } = pacerWith({ answer: () => answers.shift() ?? "sent" });
    pacer.changed();
    await vi.advanceTimersByTimeAsync(500);
    pacer.changed();
    await vi.advanceTimersByTimeAsync(0);
    expect(sends).toEqual([500, 500]);
  });

  it("backs off after a rate limit and then sends again without a new change", async () => {
    const answers: SendOutcome[] = [{ retryAfterMs: 3_000 }];
    const { pacer, sends } = pacerWith({ answer: () => answers.shift() ?? "sent" });
    pacer.changed();
    await vi.advanceTimersByTimeAsync(3_499);
    expect(sends).toEqual([500]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sends).toEqual([500, 3_500]);
  });

  it("never runs two sends at once, and reports a failed send", async () => {
    let release: () => void = () => undefined;
    let calls = 0;
    const { pacer, sends, errors } = pacerWith({
      answer: () => {
        calls += 1;
        if (calls === 1) return new Promise<SendOutcome>((resolve) => (release = () => resolve("sent")));
        throw new Error("boom");
      },
    });
    pacer.changed();
    await vi.advanceTimersByTimeAsync(500);
    pacer.changed();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(sends).toEqual([500]);
    release();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sends).toEqual([500, 4_500]);
    expect(errors).toEqual([new Error("boom")]);
  });

  it("finishes by cancelling what is due and waiting for the send in flight", async () => {
    let release: () => void = () => undefined;
    const { pacer, sends } = pacerWith({
      answer: () => new Promise<SendOutcome>((resolve) => (release = () => resolve("sent"))),
    });
    pacer.changed();
    await vi.advanceTimersByTimeAsync(500);
    pacer.changed();
    let finished = false;
    const finishing = pacer.finish().then(() => {
      finished = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(finished).toBe(false);
    release();
    await finishing;
    pacer.changed();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sends).toEqual([500]);
  });

  it("tells when the next send is allowed, for a final edit", async () => {
    const { pacer } = pacerWith();
    let ready = false;
    await pacer.nextSlot();
    pacer.changed();
    await vi.advanceTimersByTimeAsync(500);
    const slot = pacer.nextSlot().then(() => {
      ready = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(ready).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await slot;
    expect(ready).toBe(true);
  });
});
