import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CONVERTED_CHARS_PER_RENDER } from "../../../src/channels/shared/markdown-walk.js";
import { agentEvent } from "../../../src/core/events.js";
import { draftIdOf, TelegramTurnRenderer } from "../../../src/channels/telegram/telegram-renderer.js";
import type { ChatSender, EditResult } from "../../../src/channels/telegram/telegram-send.js";
import type { DraftSupport } from "../../../src/channels/telegram/telegram-stream.js";
import { SendSkipped } from "../../../src/channels/telegram/telegram-throttle.js";
import { parseTelegramHtml } from "../../fakes/fake-telegram/html-parser.js";

/** Records what the renderer asks of a chat; resolves each call at once. */
class RecordingSender {
  readonly calls: { kind: string; html?: string; markup?: unknown }[] = [];
  readonly address = { chatId: 5, isPrivate: true, replyTo: 9 };
  private nextId = 100;
  /** Draft calls the send limit drops (by index among draft calls). */
  skipDrafts = new Set<number>();
  private drafts = 0;
  async send(html: string, options: { replyMarkup?: unknown } = {}): Promise<number> {
    this.calls.push({ kind: "send", html, markup: options.replyMarkup });
    return this.nextId++;
  }
  async sendAll(chunks: readonly string[]): Promise<number[]> {
    const ids: number[] = [];
    for (const chunk of chunks) ids.push(await this.send(chunk));
    return ids;
  }
  async edit(_id: number, html: string, markup?: unknown): Promise<EditResult> {
    this.calls.push({ kind: "edit", html, markup });
    return "edited";
  }
  async draft(_id: number, html: string): Promise<void> {
    if (this.skipDrafts.has(this.drafts++)) throw new SendSkipped("sendMessageDraft");
    this.calls.push({ kind: "draft", html });
  }
  async typing(): Promise<void> {
    this.calls.push({ kind: "typing" });
  }
  count(kind: string): number {
    return this.calls.filter((call) => call.kind === kind).length;
  }
}

function renderer(sender: RecordingSender, drafts?: DraftSupport) {
  return new TelegramTurnRenderer({
    sender: sender as unknown as ChatSender,
    logger: pino({ level: "silent" }),
    live: {
      timing: { intervalMs: 1100, firstPreviewMs: 800 },
      ...(drafts ? { draft: { id: 42, support: drafts } } : {}),
    },
  });
}

const completed = (finalText: string) =>
  agentEvent({ type: "turn-completed", status: "completed", iterations: 1, finalText, usage: undefined });

afterEach(() => {
  vi.useRealTimers();
});

/** `count` run_command calls that start (showing `preview(i)`) and fail with `reason`. */
async function failedCommands(
  turn: ReturnType<typeof renderer>,
  count: number,
  preview: (i: number) => string,
  reason: string,
): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const callId = `c${i}`;
    await turn.handle(
      agentEvent({ type: "tool-call-started", callId, name: "run_command", args: {}, preview: preview(i) }),
    );
    await turn.handle(
      agentEvent({
        type: "tool-call-finished",
        callId,
        name: "run_command",
        status: "error",
        outputPreview: "",
        files: [],
        durationMs: 5,
        reason,
      }),
    );
  }
}

describe("TelegramTurnRenderer", () => {
  it("says typing once the person has waited a second with nothing shown, every 4 s while nothing new shows, not while waiting", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    await vi.advanceTimersByTimeAsync(999);
    expect(sender.count("typing")).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(sender.count("typing")).toBe(1);
    await vi.advanceTimersByTimeAsync(8000);
    expect(sender.count("typing")).toBe(3);
    await turn.handle(
      agentEvent({
        type: "permission-required",
        callId: "c",
        tool: "bash",
        args: {},
        reason: "",
        category: "exec",
        provenance: { kind: "user" },
        alwaysOptions: [],
      }),
    );
    await vi.advanceTimersByTimeAsync(20_000);
    expect(sender.count("typing")).toBe(3);
    await turn.handle(
      agentEvent({ type: "tool-call-started", callId: "c", name: "bash", args: {}, preview: "ls" }),
    );
    await vi.advanceTimersByTimeAsync(3999);
    expect(sender.count("typing")).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(sender.count("typing")).toBe(4);
    await turn.handle(completed("done"));
    await turn.close();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(sender.count("typing")).toBe(4);
  });

  it("says no typing while the previews keep changing", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    for (let i = 0; i < 20; i++) {
      await turn.handle(agentEvent({ type: "text-delta", delta: `word${i} ` }));
      await vi.advanceTimersByTimeAsync(500);
    }
    await turn.handle(completed("done"));
    await turn.close();
    expect(sender.count("draft")).toBeGreaterThan(5);
    expect(sender.count("typing")).toBe(0);
  });

  it("shows no preview of a turn that is over, however late its content came", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    await vi.advanceTimersByTimeAsync(900);
    await turn.handle(agentEvent({ type: "text-delta", delta: "Late" }));
    await turn.handle(completed("Late"));
    await vi.advanceTimersByTimeAsync(2000);
    await turn.close();
    expect(sender.calls.filter((call) => call.kind !== "typing")).toEqual([
      { kind: "send", html: "Late", markup: undefined },
    ]);
  });

  it("skips a beat when the send limit drops a draft update, and sends the preview at the next", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    sender.skipDrafts.add(1);
    const turn = renderer(sender, { enabled: true });
    await turn.handle(agentEvent({ type: "text-delta", delta: "One" }));
    await vi.advanceTimersByTimeAsync(800);
    await turn.handle(agentEvent({ type: "text-delta", delta: " two" }));
    await vi.advanceTimersByTimeAsync(1100);
    expect(sender.calls.filter((call) => call.kind === "draft")).toEqual([{ kind: "draft", html: "One" }]);
    await vi.advanceTimersByTimeAsync(1100);
    expect(sender.calls.filter((call) => call.kind === "draft").map((call) => call.html)).toEqual([
      "One",
      "One two",
    ]);
    await turn.handle(completed("One two"));
    await turn.close();
  });

  it("counts the first preview's delay from the turn's start", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    await vi.advanceTimersByTimeAsync(600);
    await turn.handle(agentEvent({ type: "text-delta", delta: "Soon" }));
    await vi.advanceTimersByTimeAsync(199);
    expect(sender.count("draft")).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(sender.calls.filter((call) => call.kind === "draft")).toEqual([{ kind: "draft", html: "Soon" }]);
    await turn.handle(completed("Soon"));
    await turn.close();
  });

  it("shows no preview of an answer already complete when its first preview is due; a working message gets one", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    await turn.handle(agentEvent({ type: "text-delta", delta: "Whole" }));
    await turn.handle(
      agentEvent({ type: "assistant-message-done", content: "Whole", step: 1, toolCalls: 0 }),
    );
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sender.count("draft")).toBe(0);
    await turn.handle(completed("Whole"));
    await turn.close();
    expect(sender.calls.filter((call) => call.kind !== "typing")).toEqual([
      { kind: "send", html: "Whole", markup: undefined },
    ]);
    const working = renderer(sender, { enabled: true });
    await working.handle(agentEvent({ type: "text-delta", delta: "Looking" }));
    await working.handle(
      agentEvent({ type: "assistant-message-done", content: "Looking", step: 1, toolCalls: 1 }),
    );
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sender.count("draft")).toBe(1);
    await working.handle(completed("Looking"));
    await working.close();
  });

  it("previews the end of a long answer, rendered from its last blocks, and sends the whole at the end", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    // Within one render's budget (CONVERTED_CHARS_PER_RENDER), so the whole is sent formatted.
    const paragraphs = Array.from({ length: 800 }, (_, i) => `Paragraph **${i}** of the answer.`);
    const answer = `${paragraphs.join("\n\n")}\n\n\`\`\`\n${"code line\n".repeat(2_000)}last line`;
    expect(answer.length).toBeLessThanOrEqual(CONVERTED_CHARS_PER_RENDER);
    await turn.handle(agentEvent({ type: "text-delta", delta: answer }));
    await vi.advanceTimersByTimeAsync(1_000);
    const [preview] = sender.calls.filter((call) => call.kind === "draft");
    // The code block opened far before the shown end still shows as code, and the preview is one screen.
    expect(preview?.html).toMatch(/^…\n<pre>(code line\n)+last line<\/pre>$/);
    expect(preview?.html?.length).toBeLessThanOrEqual(4_096 + 20);
    await turn.handle(completed(answer));
    await turn.close();
    const sent = sender.calls.filter((call) => call.kind === "send").map((call) => call.html ?? "");
    expect(sent[0]).toMatch(/^Paragraph <b>0<\/b> of the answer\./);
    expect(sent.join("")).toContain("Paragraph <b>799</b> of the answer.");
  });

  it("sends a quick answer as one message without any preview", async () => {
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    await turn.handle(agentEvent({ type: "text-delta", delta: "Quick" }));
    await turn.handle(completed("Quick"));
    await turn.close();
    expect(sender.calls.filter((call) => call.kind !== "typing")).toEqual([
      { kind: "send", html: "Quick", markup: undefined },
    ]);
  });

  it("delivers the final answer exactly once, even when closed twice with a preview in flight", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender, { enabled: true });
    await turn.handle(agentEvent({ type: "text-delta", delta: "Par" }));
    await vi.advanceTimersByTimeAsync(800);
    await turn.handle(agentEvent({ type: "text-delta", delta: "tial" }));
    await turn.handle(completed("Partial"));
    // The "Partial" preview is still scheduled when the turn closes: it must never be sent.
    await Promise.all([turn.close(), turn.close()]);
    await turn.close();
    await vi.advanceTimersByTimeAsync(5000);
    expect(sender.calls.filter((call) => call.kind === "draft").map((call) => call.html)).toEqual(["Par"]);
    expect(sender.calls.filter((call) => call.kind === "send")).toEqual([
      { kind: "send", html: "Partial", markup: undefined },
    ]);
  });

  it("waits the edit interval before the final edit of a live message", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender);
    await turn.handle(agentEvent({ type: "text-delta", delta: "Live" }));
    await vi.advanceTimersByTimeAsync(800);
    expect(sender.calls.at(-1)).toMatchObject({ kind: "send", html: "Live" });
    await turn.handle(completed("Live and final"));
    const closing = turn.close();
    await vi.advanceTimersByTimeAsync(1000);
    expect(sender.count("edit")).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    await closing;
    expect(sender.calls.at(-1)).toEqual({ kind: "edit", html: "Live and final", markup: undefined });
  });

  it("reports how the turn ended when it did not complete", async () => {
    const sender = new RecordingSender();
    const turn = renderer(sender);
    await turn.handle(agentEvent({ type: "error", message: "provider down", recoverable: false }));
    await turn.handle(
      agentEvent({ type: "turn-completed", status: "error", iterations: 2, finalText: "", usage: undefined }),
    );
    await turn.close();
    expect(sender.calls.at(-1)?.html).toBe("⚠️ The turn failed: provider down");
    const abandoned = new RecordingSender();
    const lost = renderer(abandoned);
    await lost.handle(agentEvent({ type: "text-delta", delta: "half an answer" }));
    await lost.close();
    expect(abandoned.calls.at(-1)?.html).toBe("half an answer\n\n⚠️ The turn ended before it finished.");
  });

  it("shows each tool call as one status line that changes in place, commands without the tool name", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender);
    const started = (callId: string, name: string, preview: string) =>
      agentEvent({ type: "tool-call-started", callId, name, args: {}, preview });
    const finished = (
      callId: string,
      name: string,
      status: "ok" | "error" | "denied",
      durationMs: number,
      reason?: string,
    ) =>
      agentEvent({
        type: "tool-call-finished",
        callId,
        name,
        status,
        outputPreview: "",
        files: [],
        durationMs,
        ...(reason === undefined ? {} : { reason }),
      });
    await turn.handle(started("c1", "run_command", "npm test"));
    await turn.handle(started("c2", "write_file", "notes/<b>.md"));
    await vi.advanceTimersByTimeAsync(800);
    expect(sender.calls.at(-1)).toMatchObject({
      kind: "send",
      html: "⏳ Running <code>npm test</code>…\n⏳ Running write_file <code>notes/&lt;b&gt;.md</code>…",
    });
    await turn.handle(finished("c1", "run_command", "ok", 3200));
    await turn.handle(finished("c2", "write_file", "error", 40));
    await turn.handle(started("c3", "mcp__lookup", ""));
    await turn.handle(finished("c3", "mcp__lookup", "denied", 0));
    await turn.handle(started("c4", "run_command", "npm run lint"));
    await turn.handle(finished("c4", "run_command", "error", 900, "exit <1>"));
    await turn.handle(started("c5", "web_fetch", "x.org"));
    await turn.handle(finished("c5", "web_fetch", "denied", 0, "denied by policy"));
    await vi.advanceTimersByTimeAsync(1100);
    expect(sender.calls.at(-1)).toMatchObject({
      kind: "edit",
      html: [
        "✓ <code>npm test</code> · 3.2 s",
        "✗ write_file <code>notes/&lt;b&gt;.md</code> · 0.0 s",
        "⛔ <code>mcp__lookup</code> · denied",
        "✗ <code>npm run lint</code> · exit &lt;1&gt;",
        "⛔ web_fetch <code>x.org</code> · denied by policy",
      ].join("\n"),
    });
    await turn.handle(completed("done"));
    const closing = turn.close();
    await vi.advanceTimersByTimeAsync(1100);
    await closing;
  });

  it("lists only calls that ran: a call denied before it started and a question show no tool line", async () => {
    const sender = new RecordingSender();
    const turn = renderer(sender);
    await turn.handle(
      agentEvent({
        type: "tool-call-finished",
        callId: "d1",
        name: "web_fetch",
        status: "denied",
        outputPreview: "",
        files: [],
        durationMs: 0,
        reason: "denied by policy",
      }),
    );
    await turn.handle(
      agentEvent({
        type: "question-asked",
        callId: "q1",
        questions: [{ id: "q", question: "Which?", options: [] }],
      }),
    );
    await turn.handle(
      agentEvent({ type: "tool-call-started", callId: "c1", name: "read_file", args: {}, preview: "a.md" }),
    );
    await turn.handle(
      agentEvent({
        type: "tool-call-finished",
        callId: "c1",
        name: "read_file",
        status: "ok",
        outputPreview: "",
        files: [],
        durationMs: 5,
      }),
    );
    await turn.handle(completed("Done."));
    await turn.close();
    expect(sender.calls.at(-1)?.html).toBe("<i>🔧 read_file ✓</i>\n\nDone.");
  });

  it("keeps every preview of a long plan, long notes and long tool reasons within one message, the answer's end in sight", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender);
    const steps = Array.from({ length: 70 }, (_, i) => ({
      title: `Step ${i} ${"x".repeat(300)}`,
      status: i < 30 ? ("done" as const) : i === 30 ? ("in_progress" as const) : ("pending" as const),
    }));
    await turn.handle(agentEvent({ type: "plan-updated", steps }));
    await failedCommands(turn, 8, (i) => `job ${i}`, `exit ${"<1>".repeat(400)}`);
    // Cut at 200 characters where an emoji's two halves and escaped "&"s meet.
    await turn.handle(
      agentEvent({ type: "notice", level: "info", message: `${"&".repeat(195)}${"😀".repeat(50)}` }),
    );
    await turn.handle(agentEvent({ type: "error", recoverable: true, message: "<".repeat(5_000) }));
    await turn.handle(agentEvent({ type: "notice", level: "warning", message: "w".repeat(5_000) }));
    await turn.handle(agentEvent({ type: "text-delta", delta: "Working on it. ".repeat(50) }));
    await vi.advanceTimersByTimeAsync(800);
    await turn.handle(
      agentEvent({ type: "text-delta", delta: `${"More words here. ".repeat(400)}ANSWER-END` }),
    );
    await vi.advanceTimersByTimeAsync(1100);
    const previews = sender.calls.filter((call) => call.kind === "send" || call.kind === "edit");
    expect(previews.map((call) => call.kind)).toEqual(["send", "edit"]);
    for (const { html = "" } of previews) {
      const parsed = parseTelegramHtml(html);
      if (!parsed.ok) throw new Error(`${parsed.description}\n${html}`);
      expect(parsed.text.length).toBeLessThanOrEqual(4_096);
      expect(html).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
    // Each preview shows the answer as it stood, down to its end.
    expect(previews[0]?.html).toMatch(/\n\nWorking on it\.( Working on it\.)+$/);
    const last = previews.at(-1)?.html ?? "";
    expect(last).toMatch(/\n\n…\n(More words here\. )+ANSWER-END$/);
    // Ten steps around the one in progress, the others counted.
    expect(last).toContain("<i>… 29 earlier steps</i>\n✅ Step 29 ");
    expect(last).toContain("▶️ Step 30 ");
    expect(last).toContain("▫️ Step 38 ");
    expect(last).not.toContain("Step 39 ");
    expect(last).toContain("<i>… 31 more steps</i>");
    // Notes are clipped to 200 characters before escaping: no entity or emoji is cut.
    expect(last).toContain(`<i>ℹ️ ${"&amp;".repeat(195)}…</i>`);
    expect(last).toContain(`<i>⚠️ ${"&lt;".repeat(196)}…</i>`);
    expect(last).toContain(`<i>ℹ️ ${"w".repeat(196)}…</i>`);
  });

  it("cuts the status from its top, never the answer's room, when its lines alone would crowd the message", async () => {
    vi.useFakeTimers();
    const sender = new RecordingSender();
    const turn = renderer(sender);
    const steps = Array.from({ length: 10 }, (_, i) => ({
      title: `Step ${i} ${"x".repeat(300)}`,
      status: "pending" as const,
    }));
    await turn.handle(agentEvent({ type: "plan-updated", steps }));
    await failedCommands(turn, 6, (i) => `job ${i} ${"y".repeat(300)}`, "z".repeat(400));
    for (const word of ["first", "second", "third"]) {
      await turn.handle(agentEvent({ type: "notice", level: "info", message: `${word} ${"n".repeat(400)}` }));
    }
    await turn.handle(agentEvent({ type: "text-delta", delta: `${"Answer words. ".repeat(400)}ANSWER-END` }));
    await vi.advanceTimersByTimeAsync(800);
    const html = sender.calls.find((call) => call.kind === "send")?.html ?? "";
    const parsed = parseTelegramHtml(html);
    if (!parsed.ok) throw new Error(parsed.description);
    expect(parsed.text.length).toBeLessThanOrEqual(4_096);
    const [status = "", answer = ""] = parsed.text.split("\n\n");
    // The oldest status lines (the plan's first steps) gave way; the newest ones stay.
    expect(status).toMatch(/^…\n/);
    expect(status).not.toContain("Step 0 ");
    expect(status).toContain("Step 9 ");
    expect(status).toMatch(/ℹ️ third n+…$/);
    // The status leaves a thousand characters (and the separators) to the answer's tail.
    expect(status.length).toBeLessThanOrEqual(4_096 - 1_000 - 4);
    expect(status.length).toBeGreaterThan(4_096 - 1_000 - 4 - 300);
    expect(answer).toMatch(/ANSWER-END$/);
  });

  it("derives a stable non-zero draft id from the turn id", () => {
    expect(draftIdOf("turn-1")).toBe(draftIdOf("turn-1"));
    expect(draftIdOf("turn-1")).not.toBe(draftIdOf("turn-2"));
    for (const id of ["", "a", "x".repeat(1000)]) expect(draftIdOf(id)).toBeGreaterThan(0);
  });
});
