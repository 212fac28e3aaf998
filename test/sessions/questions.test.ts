import { describe, expect, it } from "vitest";
import type { ExtraCommand } from "../../src/sessions/extra-commands.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, BEN, BOSS, type Harness, makeHarness, message, thread, pressCard } from "./helpers/harness.js";
import { outcomeLine } from "../support/card-outcome.js";
import { storedHistory } from "../support/stored-history.js";

/** The stored history of the session in thread() (its last closed turn's), as the product reads it. */
async function storedInThread(h: Harness) {
  const sessionId = h.outputs.for(thread()).closedTurns.at(-1)?.sessionId;
  if (sessionId === undefined) throw new Error("no turn closed in thread()");
  return storedHistory(h.store.space("history"), sessionId);
}

const askColor = toolStep(["q1", "ask_user", { question: "Which color?", options: ["red", "blue"] }]);

async function questionCard(h: Harness) {
  const out = h.outputs.for(thread());
  return h.outputs.until(() => out.latestCards.find((c) => c.kind === "question"), "question card");
}

function answersSent(h: Harness): unknown {
  const result = h.provider.requests
    .flatMap((r) => r.messages)
    .find((m) => m.role === "tool" && m.tool_call_id === "q1");
  return result ? JSON.parse((result as { content: string }).content) : undefined;
}

describe("questions (ask_user)", () => {
  it("options become buttons; a press answers the question and the card shows the answer", async () => {
    const h = await makeHarness({ steps: [askColor, textStep("blue it is")] });
    await h.manager.receive(message("pick a color"));
    const card = await questionCard(h);
    expect(card.title).toBe("Question");
    expect(card.buttons.map((b) => [b.action, b.label])).toEqual([
      ["q0:o0", "red"],
      ["q0:o1", "blue"],
    ]);
    const refused = await pressCard(h, card, "q0:o0", BEN);
    expect(refused.status).toBe("not_allowed");
    const pressed = await pressCard(h, card, "q0:o1", ANA);
    expect(pressed.status).toBe("accepted");
    await h.manager.idle();
    expect(answersSent(h)).toEqual({ answers: [{ question: "Which color?", answer: "blue" }] });
    // The stored answer says who gave it (the reviewer counts only the requester's as theirs).
    const stored = await storedInThread(h);
    expect(stored.find((m) => m.role === "tool" && m.tool_call_id === "q1")?.meta?.by).toBe(ANA.id);
    const settled = h.outputs.for(thread()).card(card.pendingId);
    expect(settled?.buttons).toEqual([]);
    expect(outcomeLine(settled)).toBe("Answered by Ana (id U_ANA): blue");
    expect(settled?.blocks).toContainEqual({ kind: "quote", text: "Answer: blue" });
  });

  it("the asker's next message answers the question instead of starting a turn; others' messages do not", async () => {
    const h = await makeHarness({
      steps: [askColor, textStep("green, noted"), textStep("hello Ben")],
      overrides: {
        defaults: {
          model: "m",
          provider: "scripted",
          mode: "interactive",
          maxSteps: 10,
          queueMode: "followup",
        },
      },
    });
    await h.manager.receive(message("pick a color"));
    const card = await questionCard(h);
    expect(card.footer).toBe("Or reply to this message with your answer.");
    expect((await h.manager.receive(message("hi there", { user: BEN }))).status).toBe("queued");
    expect((await h.manager.receive(message("green"))).status).toBe("answered");
    await h.manager.idle();
    expect(answersSent(h)).toEqual({ answers: [{ question: "Which color?", answer: "green" }] });
    expect(outcomeLine(h.outputs.for(thread()).card(card.pendingId))).toBe(
      "Answered by Ana (id U_ANA): green",
    );
    // Ben's message became the next turn, after the answered one.
    expect(h.provider.lastRequest.messages.at(-1)).toMatchObject({ role: "user", content: "hi there" });
    expect(h.outputs.for(thread()).closedTurns).toHaveLength(2);
    h.provider.assertAllConsumed();
  });

  it("groups several questions on one card and settles once all are answered", async () => {
    const h = await makeHarness({
      steps: [
        toolStep([
          "q1",
          "ask_user",
          { questions: [{ question: "Size?", options: ["S", "M"] }, { question: "Name?" }] },
        ]),
        textStep("thanks"),
      ],
    });
    await h.manager.receive(message("order a shirt"));
    const card = await questionCard(h);
    expect(card.title).toBe("2 questions");
    expect(card.buttons.map((b) => [b.action, b.label])).toEqual([
      ["q0:o0", "1: S"],
      ["q0:o1", "1: M"],
    ]);
    const first = await pressCard(h, card, "q0:o1", ANA);
    expect(first).toEqual({ status: "accepted", message: "Answer recorded." });
    const out = h.outputs.for(thread());
    const partial = out.card(card.pendingId)!;
    expect(partial.outcome).toBeUndefined();
    expect(partial.blocks).toContainEqual({ kind: "quote", text: "Answer: M" });
    const twice = await pressCard(h, card, "q0:o0", ANA);
    expect(twice.status).toBe("already_decided");
    expect((await h.manager.receive(message("Ana Lima"))).status).toBe("answered");
    await h.manager.idle();
    expect(answersSent(h)).toEqual({
      answers: [
        { question: "Size?", answer: "M" },
        { question: "Name?", answer: "Ana Lima" },
      ],
    });
    expect(outcomeLine(out.card(card.pendingId))).toBe("Answered by Ana (id U_ANA): M · Ana Lima");
  });

  it("a typed answer's files reach the model beside the answer; a file-only message answers too", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["q1", "ask_user", { question: "Can you send me the screenshot of the error?" }]),
        textStep("thanks"),
      ],
    });
    await h.manager.receive(message("the deploy fails"));
    await questionCard(h);
    const withFiles = {
      ...message(""),
      files: [{ path: "inbox/error.png", name: "error.png", bytes: 1234, mediaType: "image/png" }],
      attachments: [
        {
          kind: "file-text" as const,
          name: "error.txt",
          path: "inbox/error.txt",
          source: "text" as const,
          about: "a text file",
          text: "Traceback: boom",
        },
      ],
    };
    expect((await h.manager.receive(withFiles)).status).toBe("answered");
    await h.manager.idle();
    expect(answersSent(h)).toEqual({
      answers: [{ question: "Can you send me the screenshot of the error?", answer: "" }],
    });
    // The files follow the tool result, shown as a person's message's files are.
    const sent = h.provider.lastRequest.messages;
    const after = sent.findIndex((m) => m.role === "tool" && m.tool_call_id === "q1") + 1;
    expect(sent[after]?.role).toBe("user");
    expect(JSON.stringify(sent[after])).toContain("inbox/error.png");
    expect(JSON.stringify(sent[after])).toContain("Traceback: boom");
    // The stored result keeps them (they are the requester's files: later cards of the turn name them).
    const result = (await storedInThread(h)).find((m) => m.role === "tool" && m.tool_call_id === "q1");
    expect(result?.role === "tool" && result.attachments?.map((a) => a.kind)).toEqual([
      "saved-file",
      "file-text",
    ]);
  });

  it("a bare command word that is an option of the open question answers it; other words and the slash form stay commands", async () => {
    // ask_user refuses options that are the core thread commands; a module's command word may be one.
    const runs: string[] = [];
    const tasks: ExtraCommand = {
      name: "tasks",
      usage: "tasks — list the scheduled tasks",
      minArgs: 0,
      maxArgs: 0,
      run: async () => {
        runs.push("tasks");
        return "no tasks";
      },
    };
    const h = await makeHarness({
      steps: [
        toolStep([
          "q1",
          "ask_user",
          { question: "Look at the scheduled tasks or the notes?", options: ["Tasks", "notes"] },
        ]),
        textStep("ok"),
      ],
      overrides: { extraCommands: [tasks] },
    });
    await h.manager.receive(message("fix the login bug"));
    const card = await questionCard(h);
    // "status" is not an option: still the command, and the question stays open.
    expect((await h.manager.receive(message("status"))).status).toBe("command");
    // The slash form is always the command.
    expect((await h.manager.receive(message("/tasks"))).status).toBe("command");
    expect(runs).toEqual(["tasks"]);
    expect((await h.manager.receive(message("  tasks "))).status).toBe("answered");
    await h.manager.idle();
    expect(answersSent(h)).toEqual({
      answers: [{ question: "Look at the scheduled tasks or the notes?", answer: "  tasks " }],
    });
    expect(outcomeLine(h.outputs.for(thread()).card(card.pendingId))).toMatch(/^Answered by Ana/);
    expect(runs).toEqual(["tasks"]);
    // With nothing open, "tasks" is the command again.
    expect((await h.manager.receive(message("tasks"))).status).toBe("command");
    expect(runs).toEqual(["tasks", "tasks"]);
  });

  it("an option that is a thread command or starts with '/' is refused to the model, so a typed 'stop' stays the brake", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["q1", "ask_user", { question: "Shall I go on?", options: ["stop", "go on"] }]),
        toolStep(["q2", "ask_user", { question: "Branch?", options: ["/new", "existing"] }]),
        textStep("I will ask in words."),
      ],
    });
    await h.manager.receive(message("do the thing"));
    await h.manager.idle();
    const results = (h.provider.requests.at(-1)?.messages ?? [])
      .filter((m) => m.role === "tool")
      .map((m) => (m as { content: string }).content);
    expect(results).toEqual([
      expect.stringContaining("an option may not be a thread command"),
      expect.stringContaining("an option may not be a thread command"),
    ]);
    expect(h.outputs.for(thread()).latestCards).toEqual([]);
  });

  it("a question whose card cannot be posted answers the call with an error the model acts on", async () => {
    const options = Array.from({ length: 20 }, (_, i) => `build-${i}`);
    const h = await makeHarness({
      steps: [
        toolStep(["q1", "ask_user", { question: "Which build?", options }]),
        textStep("Which build: 1 or 2?"),
      ],
    });
    h.outputs.onPostCard = async (card) => {
      if (card.kind === "question") throw new Error("Bad Request: reply markup is too long");
    };
    await h.manager.receive(message("roll back"));
    await h.manager.idle();
    const result = h.provider.requests
      .flatMap((r) => r.messages)
      .find((m) => m.role === "tool" && m.tool_call_id === "q1") as { content: string } | undefined;
    expect(result?.content).toMatch(/could not be shown to the person \(the card could not be posted\)/);
    const out = h.outputs.for(thread());
    const done = out.closedTurns[0]?.events.find((e) => e.type === "turn-completed");
    expect(done?.type === "turn-completed" && [done.status, done.finalText]).toEqual([
      "completed",
      "Which build: 1 or 2?",
    ]);
    h.provider.assertAllConsumed();
  });

  it("a group answered by two people credits each answer to who gave it, and is not the requester's alone", async () => {
    const h = await makeHarness({
      steps: [
        toolStep([
          "q1",
          "ask_user",
          { questions: [{ question: "Target?", options: ["staging", "prod"] }, { question: "Ticket?" }] },
        ]),
        textStep("ok"),
      ],
    });
    await h.manager.receive(message("deploy"));
    const card = await questionCard(h);
    // Boss (a configured approver) picks prod; Ana, who was asked, types the ticket.
    expect((await pressCard(h, card, "q0:o1", BOSS)).status).toBe("accepted");
    expect((await h.manager.receive(message("T-1"))).status).toBe("answered");
    await h.manager.idle();
    expect(outcomeLine(h.outputs.for(thread()).card(card.pendingId))).toBe(
      `Answered: prod (Boss (id ${BOSS.id})) · T-1 (Ana (id U_ANA))`,
    );
    const stored = await storedInThread(h);
    expect(stored.find((m) => m.role === "tool" && m.tool_call_id === "q1")?.meta?.by).toBe(BOSS.id);
  });
});
