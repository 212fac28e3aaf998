import { describe, expect, it } from "vitest";
import { ProviderError } from "../../src/engine/provider/provider.js";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { RecordingOutput } from "../support/recording-output.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import type { KeyValueSpace, Store, StoreNamespace } from "../../src/store/store.js";
import { WrappedStore } from "../support/wrapped-store.js";
import { MAX_QUEUED_MESSAGES } from "../../src/sessions/session-record.js";
import { MAX_QUEUED_PER_PERSON } from "../../src/sessions/queue-cap.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { type PlatformUser, sessionKeyOf, type ThreadTarget } from "../../src/core/thread-target.js";
import { ANA, BEN, BOSS, makeHarness, message, openStore, tempDir, thread } from "./helpers/harness.js";
import { outcomeLine } from "../support/card-outcome.js";
import { cardPress } from "../support/card-press.js";

const followup = { model: "test-model", provider: "scripted", mode: "interactive" as const, maxSteps: 10 };

describe("SessionManager turns", () => {
  it("receive returns before the turn ends; 'stop' interrupts it", async () => {
    const h = await makeHarness({ steps: [{ text: ["thinking"], hang: true }] });
    const received = await h.manager.receive(message("long question"));
    expect(received.status).toBe("started");
    const out = h.outputs.for(thread());
    await h.outputs.until(() => out.turns[0]?.events.some((e) => e.type === "text-delta"), "streaming");
    expect(out.closedTurns).toHaveLength(0);
    expect((await h.manager.receive(message("stop"))).status).toBe("command");
    await h.manager.idle();
    expect(out.texts.at(-1)).toBe("Stopping the running turn.");
    expect(out.closedTurns[0]?.events.at(-1)).toMatchObject({
      type: "turn-completed",
      status: "interrupted",
    });
    expect(h.provider.signals[0]?.aborted).toBe(true);
  });

  it("steers a message sent during a turn into that turn (queue_mode steer)", async () => {
    const h = await makeHarness({ steps: [toolStep(["s1", "slow_task", {}]), textStep("took your note")] });
    await h.manager.receive(message("start the task"));
    await h.runs.started("s1");
    expect((await h.manager.receive(message("also mention cats"))).status).toBe("queued");
    h.runs.release();
    await h.manager.idle();
    const out = h.outputs.for(thread());
    expect(out.closedTurns).toHaveLength(1);
    expect(h.provider.lastRequest.messages.at(-1)).toMatchObject({
      role: "user",
      content: "also mention cats",
    });
    expect(h.provider.requests).toHaveLength(2);
    h.provider.assertAllConsumed();
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/\(idle\)/);
  });

  it("steers only with the turn's own requester: another person's message is a turn of their own", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["s1", "slow_task", {}]),
        textStep("task done"),
        toolStep(["r1", "read_note", { name: "ana-private" }]),
        textStep("Ben's answer"),
      ],
    });
    await h.manager.receive(message("start the task"));
    await h.runs.started("s1");
    // Ana's turn acts with Ana's access: Ben's words must not steer it.
    expect((await h.manager.receive(message("also read ana-private", { user: BEN }))).status).toBe("queued");
    h.runs.release();
    await h.manager.idle();
    const out = h.outputs.for(thread());
    expect(out.closedTurns.map((t) => RecordingOutput.textOf(t))).toEqual(["task done", "Ben's answer"]);
    expect(h.provider.requests[1]!.messages.some((m) => m.content === "also read ana-private")).toBe(false);
    expect(h.runs.runs.find((r) => r.callId === "r1")?.requester).toBe(BEN.id);
  });

  it("queues a message sent during a turn as a follow-up turn (queue_mode followup)", async () => {
    const h = await makeHarness({
      steps: [toolStep(["s1", "slow_task", {}]), textStep("task done"), textStep("and the follow-up")],
      overrides: { defaults: { ...followup, queueMode: "followup" } },
    });
    await h.manager.receive(message("start the task"));
    await h.runs.started("s1");
    expect((await h.manager.receive(message("then summarise"))).status).toBe("queued");
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/a turn is running, 1 queued/);
    h.runs.release();
    await h.manager.idle();
    const out = h.outputs.for(thread());
    expect(out.closedTurns.map((t) => RecordingOutput.textOf(t))).toEqual(["task done", "and the follow-up"]);
    expect(h.provider.requests[1]!.messages.some((m) => m.content === "then summarise")).toBe(false);
    expect(h.provider.lastRequest.messages.at(-1)).toMatchObject({ role: "user", content: "then summarise" });
  });

  it("stop drops queued follow-ups and steering the turn never took", async () => {
    const h = await makeHarness({
      steps: [toolStep(["w1", "write_note", { text: "x" }]), textStep("fresh start")],
    });
    await h.manager.receive(message("write it"));
    const out = h.outputs.for(thread());
    await h.outputs.until(() => out.latestCards[0], "card");
    expect((await h.manager.receive(message("actually, forget cats"))).status).toBe("queued");
    expect(await h.manager.command(thread(), ANA, "stop", [])).toBe(
      "Stopping the running turn. Dropped 1 queued message.",
    );
    await h.manager.idle();
    expect(outcomeLine(out.latestCards[0])).toBe("Cancelled: the turn was stopped");
    await h.manager.receive(message("hello again"));
    await h.manager.idle();
    const sent = h.provider.lastRequest.messages;
    expect(sent.some((m) => m.content === "actually, forget cats")).toBe(false);
    expect(sent.find((m) => m.role === "tool")).toMatchObject({
      content: TOOL_RESULT.notStartedWhileWaiting,
    });
    expect(h.runs.count("w1")).toBe(0);
  });

  it("evicts idle sessions beyond the cap and reloads them from the store with their history", async () => {
    const h = await makeHarness({
      steps: [textStep("hi A"), textStep("hi B"), textStep("A again")],
      overrides: { maxSessionsInMemory: 1 },
    });
    const a = thread("1.1");
    const b = thread("2.2");
    await h.manager.receive(message("I am A", { target: a }));
    await h.manager.idle();
    await h.manager.command(a, BOSS, "mode", ["auto"]);
    await h.manager.receive(message("I am B", { target: b }));
    await h.manager.idle();
    expect(h.manager.sessionsInMemory).toBe(1);
    const enginesBefore = h.engines.length;
    await h.manager.receive(message("remember me?", { target: a }));
    await h.manager.idle();
    expect(h.engines.length).toBe(enginesBefore + 1);
    const sent = h.provider.lastRequest.messages.map((m) => [m.role, m.content]);
    expect(sent).toEqual([
      ["system", "You are a test agent."],
      ["user", "I am A"],
      ["assistant", "hi A"],
      ["user", "remember me?"],
    ]);
    expect(await h.manager.command(a, ANA, "status", [])).toMatch(/Mode: auto \(set by Boss \(id U_BOSS\)\)/);
    expect(h.manager.sessionsInMemory).toBe(1);
  });

  it("a session handed to a message is not evicted before that message holds it (concurrent threads, full cache)", async () => {
    const h = await makeHarness({
      steps: [textStep("hi X"), textStep("hi Y"), textStep("X again")],
      overrides: { maxSessionsInMemory: 1 },
    });
    const x = thread("1.1");
    const y = thread("2.2");
    const started = await Promise.all([
      h.manager.receive(message("I am X", { target: x })),
      h.manager.receive(message("I am Y", { target: y })),
    ]);
    expect(started.map((r) => r.status)).toEqual(["started", "started"]);
    await h.manager.idle();
    // Thread X still names the session its first turn ran in: the conversation goes on there.
    expect(await h.manager.command(x, ANA, "status", [])).toMatch(/Usage: 1 turns/);
    await h.manager.receive(message("remember me?", { target: x }));
    await h.manager.idle();
    const sent = h.provider.lastRequest.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(sent).toEqual(["I am X", "remember me?"]);
  });

  it("answers thread commands: mode, model, status with extras and usage, new, and bad input", async () => {
    const h = await makeHarness({
      steps: [
        { text: ["one"], usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
        textStep("two"),
      ],
      overrides: { statusExtras: async (id) => [`Subscriptions: none (${id.length} char id)`] },
    });
    await h.manager.receive(message("first"));
    await h.manager.idle();
    expect(await h.manager.command(thread(), ANA, "model", ["gpt-x"])).toBe("Model set to gpt-x.");
    expect(await h.manager.command(thread(), ANA, "mode", ["plan"])).toBe("Mode set to plan.");
    const status = await h.manager.command(thread(), ANA, "status", []);
    expect(status).toMatch(/Mode: plan/);
    expect(status).toMatch(/Model: scripted:gpt-x/);
    expect(status).toMatch(/Subscriptions: none \(24 char id\)/);
    expect(status).toMatch(/Usage: 1 turns, 10 input \+ 5 output = 15 tokens/);
    expect(await h.manager.command(thread(), ANA, "mode", ["banana"])).toMatch(/^Usage: mode </);
    expect(await h.manager.command(thread(), ANA, "frobnicate", [])).toMatch(/^Unknown command "frobnicate"/);
    await h.manager.receive(message("/mode@CoworkerBot banana"));
    expect(h.outputs.for(thread()).texts.at(-1)).toMatch(/^Usage: mode </);
    expect(await h.manager.command(thread(), ANA, "new", [])).toMatch(/^Started a new session/);
    await h.manager.receive(message("second"));
    await h.manager.idle();
    expect(h.provider.lastRequest.model).toBe("test-model");
    expect(h.provider.lastRequest.messages.map((m) => m.content)).toEqual([
      "You are a test agent.",
      "second",
    ]);
  });

  it("leaves a command addressed to another bot alone when the channel names its own bot", async () => {
    const h = await makeHarness({ steps: [textStep("hello")] });
    const named = (text: string) => ({ ...message(text), botUsername: "CoworkerBot" });
    expect(await h.manager.receive(named("/mode@OtherBot auto"))).toEqual({
      status: "ignored",
      reason: "another bot's command",
    });
    expect(await h.manager.receive(named("/mode@coworkerbot banana"))).toEqual({ status: "command" });
    expect(h.outputs.for(thread()).texts).toEqual([expect.stringMatching(/^Usage: mode </)]);
    // No name (Slack): the addressee is dropped and the command is run.
    expect(await h.manager.receive(message("/status@OtherBot"))).toEqual({ status: "command" });
    await h.manager.idle();
    expect(h.outputs.for(thread()).closedTurns).toHaveLength(0);
  });

  it("drain interrupts a running tool, leaves no orphaned call, and refuses new messages", async () => {
    const h = await makeHarness({ steps: [toolStep(["s1", "slow_task", {}])] });
    await h.manager.receive(message("start"));
    await h.runs.started("s1");
    expect(await h.manager.drain(20)).toMatchObject({ finished: 0, interrupted: 1, parked: 0 });
    await h.manager.idle();
    const turn = h.outputs.for(thread()).closedTurns[0]!;
    expect(turn.events).toContainEqual(
      expect.objectContaining({ type: "tool-call-finished", status: "interrupted" }),
    );
    expect(turn.events.at(-1)).toMatchObject({ type: "turn-completed", status: "interrupted" });
    expect(await h.manager.receive(message("too late"))).toEqual({
      status: "ignored",
      reason: "shutting down",
    });
  });

  it("the retry control re-runs a turn that ended in a provider error", async () => {
    const h = await makeHarness({
      steps: [
        { error: new ProviderError("server", "The model service failed.", 500) },
        textStep("second try"),
      ],
    });
    await h.manager.receive(message("hello"));
    await h.manager.idle();
    const out = h.outputs.for(thread());
    expect(out.closedTurns[0]?.events.at(-1)).toMatchObject({ type: "turn-completed", status: "error" });
    const retried = await h.manager.press({ kind: "control", control: "retry", target: thread(), user: ANA });
    expect(retried).toEqual({ status: "accepted", message: "Retrying." });
    await h.manager.idle();
    expect(RecordingOutput.textOf(out.closedTurns[1]!)).toBe("second try");
    expect(h.provider.lastRequest.messages.filter((m) => m.role === "user")).toHaveLength(1);
  });

  it("puts the thread target into the request metadata and refuses malformed input", async () => {
    const h = await makeHarness({ steps: [toolStep(["r1", "read_note", { name: "a" }]), textStep("ok")] });
    await h.manager.receive(message("read a"));
    await h.manager.idle();
    expect(h.runs.runs).toEqual([
      { callId: "r1", tool: "read_note", args: { name: "a" }, target: thread(), requester: ANA.id },
    ]);
    const bad = await h.manager.receive({
      ...message("x"),
      target: { platform: "", workspace: "", channel: "" },
    });
    expect(bad).toMatchObject({
      status: "ignored",
      reason: expect.stringMatching(/^invalid message: target\.platform/),
    });
    const badPress = await h.manager.press(cardPress(thread(), "", "", ANA));
    expect(badPress.status).toBe("invalid");
    expect(h.outputs.for(thread()).closedTurns).toHaveLength(1);
  });
});

describe("SessionManager authority", () => {
  it("'model' with no choices configured: the starter and approvers pick any model, others only go back to the configured one", async () => {
    const h = await makeHarness({ steps: [textStep("hello Ana")] });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    expect(await h.manager.command(thread(), BEN, "model", ["pricey-model"])).toBe(
      "Only Ana (id U_ANA), who started the session, or a configured approver can switch it to a model of their choice (an admin can offer models to everyone with model.choices). Anyone can switch back to test-model.",
    );
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/Model: scripted:test-model/);
    expect(await h.manager.command(thread(), ANA, "model", ["gpt-x"])).toBe("Model set to gpt-x.");
    expect(await h.manager.command(thread(), BEN, "model", ["test-model"])).toBe("Model set to test-model.");
    expect(await h.manager.command(thread(), BOSS, "model", ["pricey-model"])).toBe(
      "Model set to pricey-model.",
    );
  });

  it("'model' with choices configured: anyone picks among them, nobody picks another", async () => {
    const h = await makeHarness({
      steps: [textStep("hello Ana")],
      overrides: {
        defaults: { ...followup, queueMode: "steer", model: "test-model", modelChoices: ["small", "large"] },
      },
    });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    expect(await h.manager.command(thread(), BEN, "model", ["large"])).toBe("Model set to large.");
    for (const user of [ANA, BEN, BOSS])
      expect(await h.manager.command(thread(), user, "model", ["pricey-model"])).toBe(
        "pricey-model is not offered here. Choose one of: test-model, small, large.",
      );
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/Model: scripted:large/);
  });

  it("'new' in a shared thread does not hand the thread to whoever typed it: its starter still decides loosening", async () => {
    const h = await makeHarness({
      steps: [textStep("hello Ana"), textStep("hello again")],
      overrides: { approvals: { approvers: [], ttlMs: 60_000 } },
    });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    expect(await h.manager.command(thread(), BEN, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    expect(await h.manager.command(thread(), BEN, "new", [])).toMatch(/^Started a new session/);
    expect(await h.manager.command(thread(), BEN, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      /Mode: interactive[\s\S]*Started by: Ana/,
    );
    await h.manager.receive(message("next", { user: ANA }));
    await h.manager.idle();
    expect(h.provider.lastRequest.messages.map((m) => m.content)).toEqual(["You are a test agent.", "next"]);
  });
  it("'mode' to the mode the session is in changes nothing: an approver's auto stays credited to the approver", async () => {
    const h = await makeHarness({ steps: [textStep("hi")] });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    expect(await h.manager.command(thread(), BOSS, "mode", ["auto"])).toBe("Mode set to auto.");
    expect(await h.manager.command(thread(), BEN, "mode", ["auto"])).toBe("Mode is already auto.");
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      /Mode: auto \(set by Boss \(id U_BOSS\)\)/,
    );
  });

  it("a chat's approvers listed under its newer id may loosen a session begun under its older one", async () => {
    // A Telegram group upgraded to a supergroup keeps its session (under the group's id); the
    // channel tells the supergroup's id on each later message, and an admin may key either.
    const h = await makeHarness({
      steps: [textStep("hello")],
      overrides: {
        approvals: { approvers: [], perChannel: { "telegram:-1002": ["telegram:U_BOSS"] }, ttlMs: 60_000 },
      },
    });
    const group: ThreadTarget = {
      platform: "telegram",
      workspace: "tg",
      channel: "-2",
      extra: { chatType: "group" },
    };
    await h.manager.receive(message("hi", { user: ANA, target: group }));
    await h.manager.idle();
    expect(await h.manager.command(group, BOSS, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    const upgraded = { ...group, extra: { chatType: "supergroup", alsoKnownAs: -1002 } };
    expect(await h.manager.command(upgraded, BEN, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    expect(await h.manager.command(upgraded, BOSS, "mode", ["auto"])).toBe("Mode set to auto.");
  });

  it("a thread opened by a command is its opener's: another person's mode or model does not take it over", async () => {
    const h = await makeHarness({
      steps: [textStep("hello")],
      overrides: { approvals: { approvers: [], ttlMs: 60_000 } },
    });
    const opened = thread("1700000000.000900");
    expect(await h.manager.command(opened, ANA, "status", [])).toMatch(/Started by: Ana/);
    expect(await h.manager.command(opened, BEN, "model", ["test-model"])).toBe("Model set to test-model.");
    expect(await h.manager.command(opened, BEN, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    expect(await h.manager.command(opened, ANA, "mode", ["auto"])).toBe("Mode set to auto.");
    expect(await h.manager.command(opened, ANA, "status", [])).toMatch(/Started by: Ana/);
    // A thread a message opens is its author's from the start, before its turn has run.
    const other = thread("1700000000.000901");
    await h.manager.receive(message("hi", { user: ANA, target: other }));
    expect(await h.manager.command(other, BEN, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    await h.manager.idle();
  });

  /**
   * A thread's session stored before records kept their starter: opened by `opener`'s message,
   * then saved again without `startedBy` — with its history, or (`withHistory` false) as a session
   * of its own with none — and the service started afresh on the same data.
   */
  async function legacySession(opener: PlatformUser, withHistory: boolean, approvers: string[]) {
    const dataDir = tempDir();
    const approvals = { approvers, ttlMs: 60_000 };
    const first = await makeHarness({ dataDir, steps: [textStep("hello")], overrides: { approvals } });
    await first.manager.receive(message("hi", { user: opener }));
    await first.manager.drain(1_000);
    const records = new SessionRecords(first.store.space("sessions"));
    const stored = (await records.get((await records.currentId(sessionKeyOf(thread())))!))!;
    const { startedBy, ...legacy } = stored;
    expect(startedBy?.id).toBe(opener.id);
    if (withHistory) await records.put(legacy);
    else await records.replace(stored, { ...legacy, id: `${stored.id}-without-history` });
    await first.store.close();
    return makeHarness({ dataDir, steps: [textStep("again")], overrides: { approvals } });
  }

  it("a session stored without its starter gets its history's first author as starter: another person's mode auto is refused, theirs accepted", async () => {
    const h = await legacySession(ANA, true, []);
    expect(await h.manager.command(thread(), BEN, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    expect(await h.manager.command(thread(), BEN, "model", ["other-model"])).toMatch(
      /^Only U\\_ANA \(id U_ANA\), who started/,
    );
    expect(await h.manager.command(thread(), ANA, "mode", ["auto"])).toBe("Mode set to auto.");
    expect(await h.manager.command(thread(), BEN, "status", [])).toMatch(/Started by: U\\_ANA \(id U_ANA\)/);
    await h.manager.drain(0);
    await h.store.close();
  });

  it("a session stored without its starter and no message of a person stays ownerless: only an approver may loosen it, never whoever asks first", async () => {
    const h = await legacySession(ANA, false, ["slack:U_BOSS"]);
    expect(await h.manager.command(thread(), BEN, "mode", ["auto"])).toMatch(/^Only a configured approver/);
    expect(await h.manager.command(thread(), ANA, "mode", ["auto"])).toMatch(/^Only a configured approver/);
    expect(await h.manager.command(thread(), ANA, "model", ["other-model"])).toMatch(
      /^Only a configured approver/,
    );
    // Asking changed nothing: still nobody's.
    expect(await h.manager.command(thread(), ANA, "status", [])).not.toMatch(/Started by/);
    expect(await h.manager.command(thread(), BOSS, "mode", ["auto"])).toBe("Mode set to auto.");
    expect(await h.manager.command(thread(), BEN, "status", [])).not.toMatch(/Started by/);
    await h.manager.drain(0);
    await h.store.close();
  });

  it("'new' by someone who may not loosen the session keeps its stricter mode, and says why", async () => {
    const h = await makeHarness({ steps: [textStep("hello Ana")] });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    expect(await h.manager.command(thread(), ANA, "mode", ["plan"])).toBe("Mode set to plan.");
    const before = await h.manager.command(thread(), ANA, "status", []);
    const renewed = await h.manager.command(thread(), BEN, "new", []);
    expect(renewed).toMatch(
      /^Started a new session \(\w+\), model test-model\. Mode plan kept from the previous session: Only the session's owner can switch it to interactive mode — in a shared thread, a configured approver/,
    );
    const after = await h.manager.command(thread(), ANA, "status", []);
    expect(after.split("\n")[0]).not.toBe(before.split("\n")[0]);
    expect(after).toMatch(/Mode: plan \(set by Ana \(id U_ANA\)\)[\s\S]*Started by: Ana/);
    // Whoever may loosen the session starts afresh in the default mode, as before.
    expect(await h.manager.command(thread(), BOSS, "new", [])).toMatch(
      /^Started a new session \(\w+\)\. Mode interactive, model test-model\.$/,
    );
  });
});

describe("SessionManager intake limits", () => {
  it("bounds a session's queue: a flood of messages during a turn is refused past the limit, with one notice", async () => {
    const h = await makeHarness({
      steps: [{ text: ["thinking"], hang: true }],
      overrides: { defaults: { ...followup, queueMode: "followup" } },
    });
    await h.manager.receive(message("long question"));
    const out = h.outputs.for(thread());
    await h.outputs.until(() => out.turns[0]?.events.some((e) => e.type === "text-delta"), "streaming");
    const statuses: string[] = [];
    // Six people, none past their share of the shared thread's queue before it is full.
    const people = Array.from({ length: 6 }, (_, k) => ({ id: `U_P${k}`, name: `P${k}` }));
    for (let i = 0; i < MAX_QUEUED_MESSAGES + 5; i++)
      statuses.push((await h.manager.receive(message(`flood ${i}`, { user: people[i % 6] }))).status);
    expect(statuses.filter((s) => s === "queued")).toHaveLength(MAX_QUEUED_MESSAGES);
    expect(statuses.slice(MAX_QUEUED_MESSAGES)).toEqual(Array(5).fill("ignored"));
    // The thread hears about it once, not once per refused message.
    expect(out.texts.filter((t) => t.includes("queued in this thread already"))).toHaveLength(1);
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      new RegExp(`a turn is running, ${MAX_QUEUED_MESSAGES} queued`),
    );
    await h.manager.command(thread(), ANA, "stop", []);
    await h.manager.idle();
  });

  it("bounds steering too: the turn's requester cannot grow the queue past the limit", async () => {
    const h = await makeHarness({ steps: [{ text: ["thinking"], hang: true }] });
    // A DM, where the whole queue is its one person's.
    const dm = thread("1700000000.000100", "D1");
    await h.manager.receive(message("long question", { target: dm }));
    const out = h.outputs.for(dm);
    await h.outputs.until(() => out.turns[0]?.events.some((e) => e.type === "text-delta"), "streaming");
    const statuses: string[] = [];
    for (let i = 0; i < MAX_QUEUED_MESSAGES + 3; i++)
      statuses.push((await h.manager.receive(message(`steer ${i}`, { target: dm }))).status);
    expect(statuses.filter((s) => s === "ignored")).toHaveLength(3);
    await h.manager.command(dm, ANA, "stop", []);
    await h.manager.idle();
  });

  it("in a shared thread one person's flood takes only their share of the queue: the others' messages are still taken", async () => {
    const h = await makeHarness({
      steps: [{ text: ["thinking"], hang: true }],
      overrides: { defaults: { ...followup, queueMode: "followup" } },
    });
    await h.manager.receive(message("long question"));
    const out = h.outputs.for(thread());
    await h.outputs.until(() => out.turns[0]?.events.some((e) => e.type === "text-delta"), "streaming");
    const flood: string[] = [];
    for (let i = 0; i < MAX_QUEUED_MESSAGES + 5; i++)
      flood.push((await h.manager.receive(message(`flood ${i}`, { user: BEN }))).status);
    expect(flood.filter((s) => s === "queued")).toHaveLength(MAX_QUEUED_PER_PERSON);
    expect(flood.slice(MAX_QUEUED_PER_PERSON)).toEqual(
      Array(MAX_QUEUED_MESSAGES + 5 - MAX_QUEUED_PER_PERSON).fill("ignored"),
    );
    // Ben is told once, by name and id; the thread is not told it is full, since it is not.
    const told = out.texts.filter((t) => t.includes("of your messages are waiting"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^Ben \(id U_BEN\), 10 of your messages/);
    expect(out.texts.filter((t) => t.includes("queued in this thread already"))).toHaveLength(0);
    // Everyone else still gets in: Ana, and the boss.
    expect((await h.manager.receive(message("mine", { user: ANA }))).status).toBe("queued");
    expect((await h.manager.receive(message("and mine", { user: BOSS }))).status).toBe("queued");
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(
      new RegExp(`a turn is running, ${MAX_QUEUED_PER_PERSON + 2} queued`),
    );
    await h.manager.command(thread(), ANA, "stop", []);
    await h.manager.idle();
  });
});

describe("SessionManager scheduled runs", () => {
  it("queues one waiting run per task while the thread is parked at a card; later occurrences are skipped", async () => {
    const h = await makeHarness({ steps: [toolStep(["w1", "write_note", { text: "x" }])] });
    await h.manager.receive(message("write it"));
    const out = h.outputs.for(thread());
    await h.outputs.until(() => out.latestCards[0], "card");
    const sessionId = out.turns[0]!.sessionId;
    const run = (taskId: string, minute: number) =>
      h.manager.wake({
        sessionId,
        target: thread(),
        prompt: `[Scheduled run of task ${taskId}]`,
        requester: { id: ANA.id, name: ANA.name },
        scheduledRun: { taskId, dueAt: `2026-12-01T08:${String(minute).padStart(2, "0")}:00.000Z` },
      });
    const statuses = [];
    for (let minute = 0; minute < 30; minute += 5) statuses.push((await run("tsk_often", minute)).status);
    expect(statuses).toEqual(["queued", "skipped", "skipped", "skipped", "skipped", "skipped"]);
    expect(await run("tsk_other", 30)).toEqual({ status: "queued" });
    expect(await run("tsk_often", 35)).toMatchObject({
      status: "skipped",
      reason: expect.stringContaining("2026-12-01T08:00:00.000Z"),
    });
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/2 queued/);
    await h.manager.command(thread(), ANA, "stop", []);
    await h.manager.idle();
  });
});

describe("SessionManager record writes", () => {
  it("ends a turn and starts the follow-up queued meanwhile in one record write", async () => {
    const store = await openStore();
    const recordWrites: string[] = [];
    const counting: Store = {
      ...store,
      writesInOrder: store.writesInOrder,
      description: store.description,
      ping: () => store.ping(),
      close: () => store.close(),
      space: (namespace) => {
        const space = store.space(namespace);
        if (namespace !== "sessions") return space;
        const note = (key: string) => key.startsWith("rec:") && recordWrites.push(key);
        return {
          ...space,
          get: (key) => space.get(key),
          getMany: (keys) => space.getMany!(keys),
          delete: (key) => space.delete(key),
          setIfAbsent: (key, value, ttl) => space.setIfAbsent(key, value, ttl),
          replaceIf: (key, expected, value, ttl) => space.replaceIf(key, expected, value, ttl),
          deleteIf: (key, expected) => space.deleteIf(key, expected),
          set: (key, value, ttl) => {
            note(key);
            return space.set(key, value, ttl);
          },
          setMany: (entries) => {
            for (const entry of entries) note(entry.key);
            return space.setMany!(entries);
          },
        };
      },
    };
    const h = await makeHarness({
      store: counting,
      steps: [toolStep(["s1", "slow_task", {}]), textStep("task done"), textStep("and the follow-up")],
      overrides: { defaults: { ...followup, queueMode: "followup" } },
    });
    const first = message("start the task");
    await h.manager.receive(first);
    await h.runs.started("s1");
    expect((await h.manager.receive(message("then summarise"))).status).toBe("queued");
    const beforeEnd = recordWrites.length;
    h.runs.release();
    await h.manager.idle();
    // The first turn's end and the follow-up's start are one write; the follow-up's end is another.
    expect(recordWrites.length - beforeEnd).toBe(2);
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/\(idle\)/);
    // The ended turn's message is still known as seen: a redelivery of it is dropped.
    expect((await h.manager.receive(first)).status).toBe("duplicate");
  });
});

describe("SessionManager store reads", () => {
  it("a command whatever is open (`stop`, the slash form) reads no thread's session id to look for a question it answers", async () => {
    const store = await openStore();
    const currentReads: string[] = [];
    const counting = new (class extends WrappedStore {
      protected wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
        if (namespace !== "sessions") return inner;
        return new Proxy(inner, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver);
            if (typeof value !== "function") return value;
            if (prop !== "get") return value.bind(target);
            return (key: string) => {
              if (key.startsWith("key:")) currentReads.push(key);
              return value.call(target, key);
            };
          },
        });
      }
    })(store);
    const h = await makeHarness({ store: counting, steps: [{ text: ["thinking"], hang: true }] });
    await h.manager.receive(message("long question"));
    const out = h.outputs.for(thread());
    await h.outputs.until(() => out.turns[0]?.events.some((e) => e.type === "text-delta"), "streaming");
    const before = currentReads.length;
    expect((await h.manager.receive(message("/status"))).status).toBe("command");
    expect((await h.manager.receive(message("stop"))).status).toBe("command");
    await h.manager.idle();
    expect(out.texts.at(-1)).toBe("Stopping the running turn.");
    // The session is in memory: the commands themselves read nothing either.
    expect(currentReads.length - before).toBe(0);
  });
});
