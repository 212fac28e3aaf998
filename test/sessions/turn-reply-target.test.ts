/**
 * The trigger of each turn reaches the channel: `beginTurn` gets the `target.extra` of the message
 * that started the turn (not the session's first one), also for a queued follow-up and for a turn
 * resumed after a restart.
 */
import { describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import type { TurnEvents } from "../../src/engine/turn-events.js";
import { ScriptedProvider, textStep, toolStep } from "../support/scripted-provider.js";
import { engineFactory } from "../support/session-stack.js";
import {
  ANA,
  BEN,
  type Harness,
  makeHarness,
  message,
  tempDir,
  thread,
  pressCard,
} from "./helpers/harness.js";
import { sessionTestRegistry, ToolRuns } from "./helpers/test-tools.js";
import { outcomeLine } from "../support/card-outcome.js";

const defaults = { model: "m", provider: "scripted", mode: "interactive" as const, maxSteps: 10 };
const overrides = { defaults: { ...defaults, queueMode: "followup" as const } };

/** The session's thread, as a message with its own platform details arrives in it. */
const from = (replyTo: number): ThreadTarget => ({ ...thread(), extra: { replyTo, chatType: "private" } });

/** The targets the harness's channel output was opened for, one per card it posted. */
function recordCardTargets(h: Harness): ThreadTarget[] {
  return recordTargets(h).cards;
}

/** The targets the harness's channel output was opened for, one per card it posted and per turn it rendered. */
function recordTargets(h: Harness): { cards: ThreadTarget[]; turns: ThreadTarget[] } {
  const cardTargets: ThreadTarget[] = [];
  const turnTargets: ThreadTarget[] = [];
  h.manager.registerOutput("slack", (target) => {
    const output = h.outputs.factory(target);
    return {
      ...output,
      beginTurn: (info) => {
        turnTargets.push(target);
        return output.beginTurn(info);
      },
      updateCard: (ref, card) => output.updateCard(ref, card),
      postText: (text) => output.postText(text),
      postCard: (card) => {
        cardTargets.push(target);
        return output.postCard(card);
      },
    };
  });
  return { cards: cardTargets, turns: turnTargets };
}

/** The group's thread, as a message with its own id (`replyTo`) arrives in it. */
const group = (replyTo: number): ThreadTarget => ({ ...thread(), extra: { replyTo, chatType: "group" } });

/**
 * Ben's message (11) starts the group's session and its turn ends; then a wake-up Ana set up, with
 * `note` her note to the agent, wakes the session: a turn no person's message started.
 */
async function wakeAfterBen(h: Harness, note: string): Promise<void> {
  await h.manager.receive(message("hi all", { user: BEN, target: group(11) }));
  await h.manager.idle();
  const sessionId = /Session (\S+)/.exec(await h.manager.command(thread(), ANA, "status", []))?.[1] ?? "";
  await h.manager.wake({
    sessionId,
    target: group(11),
    prompt: `[Wake-up wak_0123456789ab: you asked to be woken]\n> ${note}`,
    requester: ANA,
    scheduledRun: { taskId: "wak_0123456789ab", dueAt: "2026-12-01T08:01:00.000Z" },
    agentNote: true,
  });
}

describe("the trigger of a turn", () => {
  it("reaches beginTurn for the first turn, a queued follow-up and a turn resumed after a restart", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const first = await makeHarness({
      dataDir,
      runs,
      overrides,
      steps: [toolStep(["c1", "write_note", { text: "a" }])],
    });
    await first.manager.receive(message("write a", { target: from(11) }));
    const out1 = first.outputs.for(thread());
    const card = await first.outputs.until(() => out1.latestCards[0], "card");
    expect(out1.turns.map((turn) => turn.replyTo)).toEqual([{ replyTo: 11, chatType: "private" }]);
    expect((await first.manager.receive(message("then bye", { target: from(12) }))).status).toBe("queued");
    await first.manager.drain(1_000);
    await first.store.close();

    const second = await makeHarness({
      dataDir,
      runs,
      overrides,
      steps: [textStep("wrote it"), textStep("bye")],
    });
    await second.manager.start();
    await pressCard(second, card, "once", ANA);
    await second.manager.idle();
    const turns = second.outputs.for(thread()).closedTurns;
    expect(turns.map((turn) => turn.replyTo)).toEqual([
      { replyTo: 11, chatType: "private" },
      { replyTo: 12, chatType: "private" },
    ]);
    await second.store.close();
  });

  it("is absent for a message without platform details, so the channel uses the session's target", async () => {
    const h = await makeHarness({ steps: [textStep("hi")] });
    await h.manager.receive(message("hello"));
    await h.manager.idle();
    const [turn] = h.outputs.for(thread()).closedTurns;
    expect(turn && "replyTo" in turn).toBe(false);
    await h.store.close();
  });
});

describe("the trigger of a turn's approval card", () => {
  it("is the message that started the turn, not the session's first message", async () => {
    const h = await makeHarness({
      steps: [textStep("hello"), toolStep(["c1", "write_note", { text: "b" }]), textStep("done")],
    });
    const cardTargets = recordCardTargets(h);
    await h.manager.receive(message("hi", { target: from(11) }));
    await h.manager.idle();
    await h.manager.receive(message("write b", { target: from(12) }));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(() => out.latestCards[0], "card");
    expect(cardTargets.map((target) => target.extra?.replyTo)).toEqual([12]);
    await pressCard(h, card);
    await h.manager.idle();
  });
});

describe("the card of a wake-up turn (no person's message started it)", () => {
  it("goes to the chat, not as a reply to the session's first message (another member's), and its requester's answer is taken", async () => {
    const h = await makeHarness({
      steps: [
        textStep("hello"),
        toolStep(["q1", "ask_user", { question: "Deploy now?", options: ["yes", "no"] }]),
        textStep("deploying"),
      ],
    });
    const cardTargets = recordCardTargets(h);
    await wakeAfterBen(h, "Ask Ana whether to deploy.");
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(() => out.latestCards[0], "question card");
    expect(cardTargets.map((target) => target.extra)).toEqual([{ chatType: "group" }]);
    // Nothing in the thread points to Ana: the card names her.
    expect(card.blocks).toContainEqual({
      kind: "fields",
      fields: [
        {
          label: "Woken for",
          value: "Ana (id U_ANA)",
          person: { platform: "slack", id: "U_ANA", name: "Ana" },
        },
      ],
    });
    // Ben, whose message the card once replied to, does not answer it; Ana, who set the wake-up, does.
    expect((await h.manager.receive(message("no", { user: BEN, target: group(12) }))).status).not.toBe(
      "answered",
    );
    expect((await h.manager.receive(message("yes", { target: group(13) }))).status).toBe("answered");
    await h.manager.idle();
    expect(outcomeLine(out.latestCards[0])).toBe("Answered by Ana (id U_ANA): yes");
  });
});

describe("the answer of a wake-up turn (no person's message started it)", () => {
  it("goes to the chat like its cards, not as a reply to the session's first message (another member's)", async () => {
    const h = await makeHarness({ steps: [textStep("hello"), textStep("time to deploy, Ana")] });
    const targets = recordTargets(h);
    await wakeAfterBen(h, "Remind Ana to deploy.");
    await h.manager.idle();
    // Ben's turn replies to his message (its trigger); the wake-up's answer replies to none.
    expect(targets.turns.map((target) => target.extra)).toEqual([
      { replyTo: 11, chatType: "group" },
      { chatType: "group" },
    ]);
    expect(h.outputs.for(thread()).closedTurns.length).toBe(2);
    await h.store.close();
  });
});

describe("the notice of a turn that failed", () => {
  it("replies to the message that started the turn, not to the session's first message (another member's)", async () => {
    const provider = new ScriptedProvider([textStep("hello")]);
    const engines = engineFactory(provider, sessionTestRegistry(new ToolRuns()));
    const h = await makeHarness({
      overrides: {
        createEngine: (ctx) => {
          const engine = engines(ctx);
          const run = engine.run.bind(engine);
          // Ana's turn fails where no event reports it: the session layer posts the notice.
          engine.run = (request) =>
            request.prompt === "deploy now" ? brokenTurn(new Error("the engine broke")) : run(request);
          return engine;
        },
      },
    });
    await h.manager.receive(message("hi all", { user: BEN, target: group(11) }));
    await h.manager.idle();
    await h.manager.receive(message("deploy now", { target: group(12) }));
    await h.manager.idle();
    expect(h.outputs.for(thread()).texts).toEqual(["The turn failed: the engine broke"]);
    // The notice was the last thing posted.
    expect(h.outputs.asked.at(-1)?.extra).toEqual({ replyTo: 12, chatType: "group" });
    await h.store.close();
  });
});

/** A turn whose first step throws `error`. */
function brokenTurn(error: Error): TurnEvents {
  return {
    next: () => Promise.reject(error),
    return: () => Promise.resolve({ done: true, value: undefined }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
