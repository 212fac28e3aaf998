/**
 * Turns per person: one person's messages in many threads run at most `maxTurnsPerPerson` turns at
 * once, the rest waiting their turn in order, while other people's turns start as usual. The slots
 * themselves: a cap per person, first come first served, a released slot passing to the next in line.
 */
import { afterEach, describe, expect, it } from "vitest";
import { qualifiedUserId } from "../../src/approvals/authorisation.js";
import { PersonTurnSlots } from "../../src/sessions/person-turn-slots.js";
import type { ScriptedStep } from "../support/scripted-provider.js";
import { ANA, BEN, type Harness, makeHarness, message, thread } from "./helpers/harness.js";

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
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.manager.drain(0);
  await h?.store.close();
  h = undefined;
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
      "Ana, you have 2 turns running in other threads; this one starts when one of them ends.",
    );

    expect(await harness.manager.command(threads[0]!, ANA, "stop", [])).toBe("Stopping the running turn.");
    await harness.outputs.until(() => harness.provider.requests.length === 4 || undefined, "the third turn");
    expect(asked(harness).at(-1)).toBe("ana 3");
  });
});
