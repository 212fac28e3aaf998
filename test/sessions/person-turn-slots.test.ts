/**
 * Turns per person: one person's messages in many threads run at most `maxTurnsPerPerson` turns at
 * once, the rest waiting their turn in order, while other people's turns start as usual; a turn
 * waiting for a slot holds no session lock, and every slot taken is given back once, however its
 * turn ended; work or a shutdown that comes while the pump asks for a slot is seen before it waits.
 * The slots themselves: a cap per person, first come first served, a released slot passing to the
 * next in line.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { qualifiedUserId } from "../../src/approvals/authorisation.js";
import { markdownToMrkdwn } from "../../src/channels/slack/slack-markdown.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/telegram-html.js";
import { ProviderError } from "../../src/engine/provider/provider.js";
import { PersonTurnSlots } from "../../src/sessions/person-turn-slots.js";
import { InProcessSessionLock } from "../../src/sessions/session-lock.js";
import type { ScriptedStep } from "../support/scripted-provider.js";
import { ANA, BEN, BOSS, type Harness, makeHarness, message, thread } from "./helpers/harness.js";

describe("PersonTurnSlots", () => {
  it("caps each person's running turns and hands a freed slot to their next waiting turn, in order", async () => {
    const slots = new PersonTurnSlots(2);
    const ana = qualifiedUserId("slack", "U1");
    const ben = qualifiedUserId("slack", "U2");
    expect([slots.tryTake(ana), slots.tryTake(ana), slots.tryTake(ana)]).toEqual([true, true, false]);
    expect(slots.tryTake(ben)).toBe(true);
    const started: string[] = [];
    void slots.take(ana).then(() => started.push("third"));
    void slots.take(ana).then(() => started.push("fourth"));
    await Promise.resolve();
    expect(started).toEqual([]);
    slots.release(ana);
    await Promise.resolve();
    expect(started).toEqual(["third"]);
    slots.release(ana);
    slots.release(ana);
    await Promise.resolve();
    expect(started).toEqual(["third", "fourth"]);
    slots.release(ana);
    slots.release(ana);
    expect([slots.tryTake(ana), slots.tryTake(ana), slots.tryTake(ana)]).toEqual([true, true, false]);
    expect(() => new PersonTurnSlots(0)).toThrow(/positive whole number/);
  });

  it("lets a waiting take be given up: it leaves the line, taking nothing, and a freed slot goes to the next", async () => {
    const slots = new PersonTurnSlots(1);
    const ana = qualifiedUserId("slack", "U1");
    expect(slots.tryTake(ana)).toBe(true);
    const quit = new AbortController();
    const givenUp = slots.take(ana, quit.signal);
    const next = slots.take(ana);
    quit.abort();
    expect(await givenUp).toBe(false);
    slots.release(ana);
    expect(await next).toBe(true);
    expect(slots.tryTake(ana)).toBe(false);
    slots.release(ana);
    expect(await slots.take(ana, quit.signal)).toBe(false);
    expect(slots.tryTake(ana)).toBe(true);
  });
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.manager.drain(0);
  await h?.store.close();
  h = undefined;
  vi.restoreAllMocks();
});

const HANG: ScriptedStep = { hang: true };
const asked = (harness: Harness) =>
  harness.provider.requests.map((request) => String(request.messages.at(-1)?.content ?? ""));

describe("one person's turns in many threads", () => {
  it("run two at a time; the third waits for one to end, while another person's turn starts at once", async () => {
    h = await makeHarness({ steps: [HANG, HANG, HANG, HANG], overrides: { maxTurnsPerPerson: 2 } });
    const harness = h;
    const threads = ["1700000000.000001", "1700000000.000002", "1700000000.000003"].map((ts) => thread(ts));
    for (const [i, target] of threads.entries())
      await harness.manager.receive(message(`ana ${i + 1}`, { user: ANA, target }));
    await harness.manager.receive(message("ben 1", { user: BEN, target: thread("1700000000.000004") }));
    await harness.outputs.until(
      () => harness.provider.requests.length === 3 || undefined,
      "three model calls",
    );
    expect(asked(harness).sort()).toEqual(["ana 1", "ana 2", "ben 1"]);
    expect(await harness.manager.command(threads[2]!, ANA, "status", [])).toMatch(/queued/i);
    expect(harness.outputs.for(threads[2]!).texts).toContain(
      "Ana (id U_ANA), you have 2 turns running in other threads; this one starts when one of them ends.",
    );

    expect(await harness.manager.command(threads[0]!, ANA, "stop", [])).toBe("Stopping the running turn.");
    await harness.outputs.until(() => harness.provider.requests.length === 4 || undefined, "the third turn");
    expect(asked(harness).at(-1)).toBe("ana 3");
  });
});

describe("a turn waiting for its person's slot", () => {
  it("waits without its session's lock, and runs under it once a slot is free", async () => {
    const acquire = vi.spyOn(InProcessSessionLock.prototype, "acquire");
    h = await makeHarness({ steps: [HANG, { text: ["second"] }], overrides: { maxTurnsPerPerson: 1 } });
    const harness = h;
    const [first, second] = [thread("1700000000.000011"), thread("1700000000.000012")];
    await harness.manager.receive(message("ana 1", { user: ANA, target: first }));
    await harness.outputs.until(() => harness.provider.requests.length === 1 || undefined, "the first turn");
    await harness.manager.receive(message("ana 2", { user: ANA, target: second }));
    await harness.outputs.until(
      () => harness.outputs.for(second).texts.some((t) => t.includes("starts when one of them ends")),
      "the waiting notice",
    );
    const lock = acquire.mock.contexts[0] as InProcessSessionLock;
    const running = harness.outputs.for(first).turns[0]!.sessionId;
    const waiting = [...new Set(acquire.mock.calls.map(([key]) => key))].filter((key) => key !== running);
    expect(waiting).toHaveLength(1);
    expect(lock.isHeld(running)).toBe(true);
    expect(lock.isHeld(waiting[0]!)).toBe(false);
    expect(await harness.manager.isBusy(waiting[0]!)).toBe(true);

    expect(await harness.manager.command(first, ANA, "stop", [])).toBe("Stopping the running turn.");
    await harness.outputs.until(
      () => harness.outputs.for(second).closedTurns.length === 1,
      "the second turn",
    );
    expect(asked(harness)).toEqual(["ana 1", "ana 2"]);
    expect(acquire.mock.calls.filter(([key]) => key === waiting[0])).toHaveLength(2);
  });
});

describe("shutting down with a turn waiting for its person's slot", () => {
  it("ends the waiting pump at once (its message stays queued), and interrupts only the running turn", async () => {
    h = await makeHarness({ steps: [HANG], overrides: { maxTurnsPerPerson: 1 } });
    const harness = h;
    const [first, second] = [thread("1700000000.000031"), thread("1700000000.000032")];
    await harness.manager.receive(message("ana 1", { user: ANA, target: first }));
    await harness.outputs.until(() => harness.provider.requests.length === 1 || undefined, "the first turn");
    await harness.manager.receive(message("ana 2", { user: ANA, target: second }));
    await harness.outputs.until(
      () => harness.outputs.for(second).texts.some((t) => t.includes("starts when one of them ends")),
      "the waiting notice",
    );
    // Before, the waiting pump counted as a running turn: waited for the grace, then "interrupted".
    expect(await harness.manager.drain(1_000)).toEqual({ finished: 1, interrupted: 1, parked: 0 });
    expect(asked(harness)).toEqual(["ana 1"]);
  });
});

describe("the notice of a turn waiting for a slot", () => {
  it("replies to the waiting message, not to the session's first message (another person's)", async () => {
    h = await makeHarness({ steps: [{ text: ["hi ben"] }, HANG], overrides: { maxTurnsPerPerson: 1 } });
    const harness = h;
    const group = thread("1700000000.000021");
    await harness.manager.receive(
      message("ben 1", { user: BEN, target: { ...group, extra: { replyTo: 41 } } }),
    );
    await harness.outputs.until(() => harness.outputs.for(group).closedTurns.length === 1, "ben's turn");
    const other = thread("1700000000.000022");
    await harness.manager.receive(message("ana 1", { user: ANA, target: other }));
    await harness.outputs.until(
      () => harness.provider.requests.length === 2 || undefined,
      "ana's first turn",
    );
    await harness.manager.receive(
      message("ana 2", { user: ANA, target: { ...group, extra: { replyTo: 42 } } }),
    );
    await harness.outputs.until(
      () => harness.outputs.for(group).texts.some((t) => t.includes("starts when one of them ends")),
      "the waiting notice",
    );
    const noticeTarget = harness.outputs.asked.findLast((target) => target.thread === group.thread);
    expect(noticeTarget?.extra).toEqual({ replyTo: 42 });
  });

  it("names its person as plain text with their user id: a name written as a link stays text", async () => {
    h = await makeHarness({ steps: [HANG, HANG], overrides: { maxTurnsPerPerson: 1 } });
    const harness = h;
    const mallory = { id: "U_MAL", name: "[Approve ✅](https://evil.example)" };
    await harness.manager.receive(message("one", { user: mallory, target: thread("1700000000.000031") }));
    await harness.outputs.until(() => harness.provider.requests.length === 1 || undefined, "the first turn");
    await harness.manager.receive(message("two", { user: mallory, target: thread("1700000000.000032") }));
    const out = harness.outputs.for(thread("1700000000.000032"));
    await harness.outputs.until(() => out.texts.length > 0 || undefined, "the notice");
    const notice = out.texts[0]!;
    expect(notice).toBe(
      "\\[Approve ✅\\]\\(https\\:\\/\\/evil\\.example\\) (id U_MAL), you have 1 turns running in other threads; this one starts when one of them ends.",
    );
    expect(markdownToTelegramHtml(notice)).not.toContain("<a ");
    expect(markdownToMrkdwn(notice)).not.toContain("<https://evil.example");
  });

  it("of a retry an approver pressed waits in the requester's slot, and names the requester", async () => {
    const failed = { error: new ProviderError("server", "The model service failed.", 500) };
    h = await makeHarness({ steps: [failed, HANG, HANG], overrides: { maxTurnsPerPerson: 1 } });
    const harness = h;
    const retried = thread("1700000000.000041");
    await harness.manager.receive(message("ana 1", { user: ANA, target: retried }));
    await harness.outputs.until(
      () => harness.outputs.for(retried).closedTurns.length === 1,
      "the failed turn",
    );
    await harness.manager.receive(message("ana 2", { user: ANA, target: thread("1700000000.000042") }));
    await harness.outputs.until(
      () => harness.provider.requests.length === 2 || undefined,
      "ana's second turn",
    );
    const pressed = await harness.manager.press({
      kind: "control",
      control: "retry",
      target: retried,
      user: BOSS,
    });
    expect(pressed.status).toBe("accepted");
    await harness.outputs.until(
      () => harness.outputs.for(retried).texts.find((t) => t.includes("starts when one of them ends")),
      "the waiting notice",
    );
    expect(harness.outputs.for(retried).texts).toContain(
      "Ana (id U_ANA), you have 1 turns running in other threads; this one starts when one of them ends.",
    );
    expect(harness.provider.requests).toHaveLength(2);
  });
});

describe("the slots a person's turns take", () => {
  it("are all given back, once each, after turns that completed, failed or were stopped", async () => {
    const taken = { now: 0, waited: 0, released: 0 };
    const tryTake = PersonTurnSlots.prototype.tryTake;
    const take = PersonTurnSlots.prototype.take;
    const release = PersonTurnSlots.prototype.release;
    const tryTakes = vi.spyOn(PersonTurnSlots.prototype, "tryTake").mockImplementation(function (
      this: PersonTurnSlots,
      person,
    ) {
      const got = tryTake.call(this, person);
      if (got) taken.now++;
      return got;
    });
    vi.spyOn(PersonTurnSlots.prototype, "take").mockImplementation(function (
      this: PersonTurnSlots,
      person,
      signal,
    ) {
      // A slot taken at once counts through tryTake; one waited for, here.
      const before = taken.now;
      return take.call(this, person, signal).then((got) => {
        if (got && taken.now === before) taken.waited++;
        return got;
      });
    });
    vi.spyOn(PersonTurnSlots.prototype, "release").mockImplementation(function (
      this: PersonTurnSlots,
      person,
    ) {
      taken.released++;
      release.call(this, person);
    });
    const failure = new ProviderError("server", "The model service failed.", 500);
    h = await makeHarness({
      steps: [{ text: ["one"] }, HANG, { error: failure }, HANG, { text: ["five"] }, { text: ["six"] }],
      overrides: { maxTurnsPerPerson: 2 },
    });
    const harness = h;
    const threads = ["21", "22", "23"].map((n) => thread(`1700000000.0000${n}`));
    const [a, b, c] = threads as [
      ReturnType<typeof thread>,
      ReturnType<typeof thread>,
      ReturnType<typeof thread>,
    ];
    // Completed, started at once.
    await harness.manager.receive(message("ana 1", { user: ANA, target: a }));
    await harness.outputs.until(() => harness.outputs.for(a).closedTurns.length === 1, "the first turn");
    // Hangs (stopped later), started at once; a queued message behind it in the same thread.
    await harness.manager.receive(message("ana 2", { user: ANA, target: a }));
    await harness.outputs.until(
      () => harness.provider.requests.length === 2 || undefined,
      "the hanging turn",
    );
    // Fails, started at once in another thread.
    await harness.manager.receive(message("ana 3", { user: ANA, target: b }));
    await harness.outputs.until(() => harness.outputs.for(b).closedTurns.length === 1, "the failed turn");
    // Hangs in a third thread, then a fourth message waits for a slot in the second thread.
    await harness.manager.receive(message("ana 4", { user: ANA, target: c }));
    await harness.outputs.until(() => harness.provider.requests.length === 4 || undefined, "the second hang");
    await harness.manager.receive(message("ana 5", { user: ANA, target: b }));
    await harness.outputs.until(
      () => harness.outputs.for(b).texts.some((t) => t.includes("starts when one of them ends")),
      "the waiting notice",
    );
    await harness.manager.receive(message("ana 6", { user: ANA, target: a }));
    expect(await harness.manager.command(a, ANA, "stop", [])).toMatch(
      /^Stopping the running turn\. Dropped 1/,
    );
    expect(await harness.manager.command(c, ANA, "stop", [])).toBe("Stopping the running turn.");
    await harness.manager.idle();
    expect(asked(harness)).toEqual(["ana 1", "ana 2", "ana 3", "ana 4", "ana 5"]);

    // Five turns ran, the fifth after waiting for a slot; "ana 6", queued behind the hanging turn,
    // was dropped by "stop" before it took one.
    expect(taken).toEqual({ now: 4, waited: 1, released: 5 });
    const slots = tryTakes.mock.contexts[0] as PersonTurnSlots;
    const ana = qualifiedUserId("slack", ANA.id);
    expect([slots.tryTake(ana), slots.tryTake(ana), slots.tryTake(ana)]).toEqual([true, true, false]);
  });
});

describe("a person whose slots are all in use, in a shared thread", () => {
  it("holds up no one else there: others' messages behind theirs start, each person's in order", async () => {
    h = await makeHarness({
      steps: [HANG, ...["ben 1", "ben 2", "ana 1", "ana 2"].map((text) => ({ text: [`re: ${text}`] }))],
      overrides: { maxTurnsPerPerson: 1 },
    });
    const harness = h;
    const [elsewhere, general] = [thread("1700000000.000051"), thread("1700000000.000052")];
    await harness.manager.receive(message("ana elsewhere", { user: ANA, target: elsewhere }));
    await harness.outputs.until(() => harness.provider.requests.length === 1 || undefined, "ana's turn");
    await harness.manager.receive(message("ana 1", { user: ANA, target: general }));
    await harness.outputs.until(
      () => harness.outputs.for(general).texts.some((t) => t.includes("starts when one of them ends")),
      "the waiting notice",
    );
    // Arriving while the thread's turn waits for Ana's slot.
    await harness.manager.receive(message("ben 1", { user: BEN, target: general }));
    await harness.outputs.until(
      () => harness.outputs.for(general).closedTurns.length === 1,
      "ben's first turn",
      3_000,
    );
    await harness.manager.receive(message("ana 2", { user: ANA, target: general }));
    await harness.manager.receive(message("ben 2", { user: BEN, target: general }));
    await harness.outputs.until(
      () => harness.outputs.for(general).closedTurns.length === 2,
      "ben's second turn",
      3_000,
    );
    expect(asked(harness)).toEqual(["ana elsewhere", "ben 1", "ben 2"]);

    expect(await harness.manager.command(elsewhere, ANA, "stop", [])).toBe("Stopping the running turn.");
    await harness.outputs.until(() => harness.outputs.for(general).closedTurns.length === 4, "ana's turns");
    expect(asked(harness)).toEqual(["ana elsewhere", "ben 1", "ben 2", "ana 1", "ana 2"]);
  });

  it("queued behind a running turn, is passed over for the next person with a free slot", async () => {
    h = await makeHarness({
      steps: [HANG, { text: ["re: ben"], delayMs: 300 }, { text: ["re: boss"] }, { text: ["re: ana"] }],
      overrides: { maxTurnsPerPerson: 1 },
    });
    const harness = h;
    const [elsewhere, general] = [thread("1700000000.000061"), thread("1700000000.000062")];
    await harness.manager.receive(message("ana elsewhere", { user: ANA, target: elsewhere }));
    await harness.outputs.until(() => harness.provider.requests.length === 1 || undefined, "ana's turn");
    await harness.manager.receive(message("ben 1", { user: BEN, target: general }));
    await harness.outputs.until(() => harness.provider.requests.length === 2 || undefined, "ben's turn");
    await harness.manager.receive(message("ana 1", { user: ANA, target: general }));
    await harness.manager.receive(message("boss 1", { user: BOSS, target: general }));
    await harness.outputs.until(
      () => harness.outputs.for(general).closedTurns.length === 2,
      "the boss's turn",
      3_000,
    );
    expect(asked(harness)).toEqual(["ana elsewhere", "ben 1", "boss 1"]);

    expect(await harness.manager.command(elsewhere, ANA, "stop", [])).toBe("Stopping the running turn.");
    await harness.outputs.until(() => harness.outputs.for(general).closedTurns.length === 3, "ana's turn");
    expect(asked(harness).at(-1)).toBe("ana 1");
  });
});

/**
 * Make `person`'s slots answer as shared ones do, through the store: a try waits until the returned
 * function is called (tries from then on answer at once, as the in-process slots do).
 */
function answerLater(person: string): () => void {
  const tryTake = PersonTurnSlots.prototype.tryTake;
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  let late = true;
  vi.spyOn(PersonTurnSlots.prototype, "tryTake").mockImplementation(function (
    this: PersonTurnSlots,
    asked: string,
  ) {
    if (!late || asked !== person) return tryTake.call(this, asked);
    return answered.then(() => tryTake.call(this, asked)) as unknown as boolean;
  });
  return () => {
    late = false;
    answer();
  };
}

describe("a message arriving while the pump asks for a capped person's slot", () => {
  it("is not passed over: the pump looks again before it waits, and its sender's free slot runs it", async () => {
    h = await makeHarness({
      steps: [HANG, { text: ["re: ben 1"] }],
      overrides: { maxTurnsPerPerson: 1 },
    });
    const harness = h;
    const [elsewhere, general] = [thread("1700000000.000071"), thread("1700000000.000072")];
    await harness.manager.receive(message("ana elsewhere", { user: ANA, target: elsewhere }));
    await harness.outputs.until(() => harness.provider.requests.length === 1 || undefined, "ana's turn");
    // Ana's slots answer as shared ones do, through the store: later, here once Ben's message is in.
    const answer = answerLater(qualifiedUserId("slack", ANA.id));
    await harness.manager.receive(message("ana 1", { user: ANA, target: general }));
    await harness.manager.receive(message("ben 1", { user: BEN, target: general }));
    answer();
    // Before, the pump waited for Ana's slot alone, the queue looked at before Ben's message came.
    await harness.outputs.until(
      () => harness.outputs.for(general).closedTurns.length === 1,
      "ben's turn",
      3_000,
    );
    expect(asked(harness)).toEqual(["ana elsewhere", "ben 1"]);
  });
});

describe("a shutdown begun while the pump asks for a capped person's slot", () => {
  it("ends the pump before it waits: only the running turn is interrupted", async () => {
    h = await makeHarness({ steps: [HANG], overrides: { maxTurnsPerPerson: 1 } });
    const harness = h;
    const [elsewhere, general] = [thread("1700000000.000081"), thread("1700000000.000082")];
    await harness.manager.receive(message("ana elsewhere", { user: ANA, target: elsewhere }));
    await harness.outputs.until(() => harness.provider.requests.length === 1 || undefined, "ana's turn");
    const answer = answerLater(qualifiedUserId("slack", ANA.id));
    await harness.manager.receive(message("ana 1", { user: ANA, target: general }));
    const draining = harness.manager.drain(1_000);
    answer();
    // Before, the pump went on to wait for Ana's slot past the drain's start: counted as running.
    expect(await draining).toEqual({ finished: 1, interrupted: 1, parked: 0 });
    expect(asked(harness)).toEqual(["ana elsewhere"]);
  });
});

describe("several people whose slots are all in use, in a shared thread", () => {
  it("each say so, and the first of them to get a slot starts there, whoever is first in the queue", async () => {
    h = await makeHarness({
      steps: [HANG, HANG, { text: ["re: ben"] }],
      overrides: { maxTurnsPerPerson: 1 },
    });
    const harness = h;
    const [anas, bens, general] = ["71", "72", "73"].map((n) => thread(`1700000000.0000${n}`)) as [
      ReturnType<typeof thread>,
      ReturnType<typeof thread>,
      ReturnType<typeof thread>,
    ];
    await harness.manager.receive(message("ana elsewhere", { user: ANA, target: anas }));
    await harness.manager.receive(message("ben elsewhere", { user: BEN, target: bens }));
    await harness.outputs.until(() => harness.provider.requests.length === 2 || undefined, "both turns");
    await harness.manager.receive(message("ana 1", { user: ANA, target: general }));
    await harness.manager.receive(message("ben 1", { user: BEN, target: general }));
    await harness.outputs.until(
      () => harness.outputs.for(general).texts.length === 2 || undefined,
      "both waiting notices",
    );
    expect(harness.outputs.for(general).texts).toEqual([
      "Ana (id U_ANA), you have 1 turns running in other threads; this one starts when one of them ends.",
      "Ben (id U_BEN), you have 1 turns running in other threads; this one starts when one of them ends.",
    ]);

    expect(await harness.manager.command(bens, BEN, "stop", [])).toBe("Stopping the running turn.");
    await harness.outputs.until(
      () => harness.outputs.for(general).closedTurns.length === 1,
      "ben's turn",
      3_000,
    );
    expect(asked(harness)).toEqual(["ana elsewhere", "ben elsewhere", "ben 1"]);
  });
});
