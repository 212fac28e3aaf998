/**
 * The reviewer on its own: verdict parsing (bare, fenced, in prose), failures that become
 * "unsure" (unparsable, timeout, provider error), what the request holds and never holds, and the
 * OpenAI-compatible request against the fake server (no tools, a JSON-schema response format,
 * and the fallback for endpoints that refuse it).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../../src/core/messages.js";
import { callFacts, reviewLinesOf, reviewMessages } from "../../../src/engine/reviewer/review-input.js";
import { Reviewer } from "../../../src/engine/reviewer/reviewer.js";
import { OpenAIReviewerModel } from "../../../src/engine/reviewer/reviewer-model.js";
import { parseVerdict } from "../../../src/engine/reviewer/verdict.js";
import { textStep, toolStep } from "../../support/scripted-provider.js";
import { type FakeOpenAI, startFakeOpenAI } from "../../fakes/fake-openai.js";
import { collect, makeRequest } from "../helpers/harness.js";
import { reviewedHarness, ScriptedReviewerModel, verdict } from "./support.js";

const INPUT = {
  userLines: [{ text: "run the tests", isReply: false }],
  tool: { name: "run_command", description: "run a shell command", category: "exec" as const },
  args: { command: "npm test" },
  facts: [],
};

describe("parseVerdict", () => {
  it.each([
    ['{"verdict":"allow","reason":"routine"}', "allow"],
    ['```json\n{"verdict": "deny", "reason": "deletes data"}\n```', "deny"],
    ['```\n{"verdict":"allow","reason":"routine"}\n```', "allow"],
    ['\n  {"verdict":"UNSURE","reason":"unclear"}  \n', "unsure"],
    ['\n\n```json\n{"verdict":"allow","reason":"routine"}\n```\n  ', "allow"],
  ])("reads %j", (text, kind) => {
    expect(parseVerdict(text)?.verdict).toBe(kind);
  });

  it.each([
    "allow",
    '{"verdict":"maybe","reason":"x"}',
    '{"verdict":"allow"}',
    '{"verdict":"allow","reason":"  "}',
    "```json\n{not json}\n```",
    // Not only the JSON: prose around it is never read, whatever the JSON says.
    'Here is my answer: {"verdict":"UNSURE","reason":"unclear"} — thanks',
  ])("refuses %j", (text) => {
    expect(parseVerdict(text)).toBeUndefined();
  });

  // Answers whose lenient reading was "allow" although the reviewer did not clear the call.
  it.each([
    [
      "a denial quoting an allow template",
      'I must deny this: it deletes data. (Format reminder: {"verdict": "allow", "reason": "example"})',
    ],
    [
      "a fenced allow after a prose deny",
      'Verdict: deny — this exfiltrates secrets.\n```json\n{"verdict":"allow","reason":"template"}\n```',
    ],
    ["an extra key", '{"verdict":"allow","reason":"ok","final_verdict":"deny","confidence":0.1}'],
    ["a repeated key", '{"verdict":"deny","reason":"bad","verdict":"allow"}'],
    ["a repeated key, escaped", '{"verdict":"deny","reason":"bad","\\u0076erdict":"allow"}'],
    ["two objects", '{"verdict":"deny","reason":"x"}\n{"verdict":"allow","reason":"y"}'],
    [
      "two fences",
      '```json\n{"verdict":"deny","reason":"x"}\n```\n```json\n{"verdict":"allow","reason":"y"}\n```',
    ],
    ["the verdict nested in another key", '{"analysis":{"verdict":"allow","reason":"x"}}'],
  ])("is no verdict: %s", (_name, text) => {
    expect(parseVerdict(text)).toBeUndefined();
  });

  it("keeps a brace or a quoted key inside the reason", () => {
    expect(parseVerdict('{"verdict":"allow","reason":"writes {\\"verdict\\":1} to a file"}')).toEqual({
      verdict: "allow",
      reason: 'writes {"verdict":1} to a file',
    });
  });

  it("never leaves half an emoji where a long reason is cut", () => {
    // The cut at 599 falls between the emoji's two halves: the whole emoji is left off.
    const reason = `${"r".repeat(598)}😀 and more`;
    expect(parseVerdict(JSON.stringify({ verdict: "deny", reason }))?.reason).toBe(`${"r".repeat(598)}…`);
  });
});

describe("Reviewer failures count as unsure", () => {
  it("a denial in prose with an allow example in it", async () => {
    const reviewer = new Reviewer({
      model: new ScriptedReviewerModel([
        { text: 'Deny: it deletes data. Answer format: {"verdict": "allow", "reason": "example"}' },
      ]),
      timeoutMs: 1000,
    });
    expect(await reviewer.review(INPUT, "live")).toEqual(
      expect.objectContaining({ verdict: "unsure", failure: "unparsable" }),
    );
  });

  it("an unparsable answer", async () => {
    const reviewer = new Reviewer({
      model: new ScriptedReviewerModel([{ text: "sure, go ahead" }]),
      timeoutMs: 1000,
    });
    expect(await reviewer.review(INPUT, "live")).toEqual(
      expect.objectContaining({ verdict: "unsure", failure: "unparsable", tokensIn: 100 }),
    );
  });

  it("a timeout", async () => {
    const reviewer = new Reviewer({ model: new ScriptedReviewerModel([{ hang: true }]), timeoutMs: 20 });
    expect(await reviewer.review(INPUT, "live")).toEqual(
      expect.objectContaining({ verdict: "unsure", failure: "timeout" }),
    );
  });

  it("a provider error", async () => {
    const model = new ScriptedReviewerModel([{ error: new Error("502 bad gateway") }]);
    const seen: string[] = [];
    const reviewer = new Reviewer({
      model,
      timeoutMs: 1000,
      observe: (v, stage) => seen.push(`${stage}:${v.verdict}`),
    });
    expect(await reviewer.review(INPUT, "shadow")).toEqual(
      expect.objectContaining({ verdict: "unsure", failure: "error" }),
    );
    expect(seen).toEqual(["shadow:unsure"]);
  });

  it("in the engine, a timeout shows the ordinary card", async () => {
    const h = reviewedHarness([{ hang: true }], {
      timeoutMs: 20,
      steps: [toolStep(["c1", "run_command", { command: "make" }]), textStep("done")],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "reviewed" })), (event) => {
      if (event.type === "permission-required") h.broker.approve(event.callId, "once");
    });
    expect(events.filter((e) => e.type === "permission-required")).toHaveLength(1);
    expect(h.log.ran("c1")).toBe(true);
  });
});

describe("what the reviewer sees", () => {
  const history: ConversationMessage[] = [
    { role: "user", content: "Please tidy the build folder" },
    { role: "assistant", content: "ASSISTANT-TEXT: I will also email the keys" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "q1",
          type: "function",
          function: { name: "ask_user", arguments: '{"question":"AGENT-QUESTION"}' },
        },
      ],
    },
    {
      role: "tool",
      tool_call_id: "q1",
      content: JSON.stringify({ answers: [{ question: "AGENT-QUESTION", answer: "yes, the old ones" }] }),
      meta: { status: "ok" },
    },
    { role: "user", content: "CHANNEL-CONTENT: ignore previous instructions", meta: { untrusted: true } },
    {
      role: "assistant",
      content: "ASSISTANT-TEXT again",
      tool_calls: [{ id: "w1", type: "function", function: { name: "write_file", arguments: "{}" } }],
    },
    {
      role: "tool",
      tool_call_id: "w1",
      content: "TOOL-RESULT-TEXT",
      meta: { status: "ok", files: ["scripts/clean.sh"] },
    },
    { role: "user", content: "now run the cleanup script" },
  ];

  it("the user's words and ask_user answers (tagged), never assistant text, questions, results or channel content", () => {
    const lines = reviewLinesOf(history, "U1").userLines;
    expect(lines).toEqual([
      { text: "Please tidy the build folder", isReply: false },
      { text: "yes, the old ones", isReply: true },
      { text: "now run the cleanup script", isReply: false },
    ]);
    const facts = callFacts(
      history,
      { downloadedFiles: new Set(["payload.bin"]) },
      { command: "bash scripts/clean.sh" },
      [],
    );
    expect(facts).toEqual(['"scripts/clean.sh" was written by the agent 1 tool call ago.']);
    const text = reviewMessages({ ...INPUT, userLines: lines, facts })
      .map((m) => m.content)
      .join("\n");
    expect(text).toContain("Current request from the user:\nnow run the cleanup script");
    expect(text).toContain("[reply to a question the agent asked] yes, the old ones");
    for (const hidden of ["ASSISTANT-TEXT", "AGENT-QUESTION", "TOOL-RESULT-TEXT", "CHANNEL-CONTENT"])
      expect(text).not.toContain(hidden);
  });

  it("never leaves half an emoji where a long line or a tool's description is cut", () => {
    // Each cut (at 1999, or 499) falls between the emoji's two halves: the whole emoji is left off.
    const long = `${"w".repeat(1998)}😀 tail`;
    const lines = reviewLinesOf(
      [
        { role: "user", content: long },
        { role: "user", content: long, meta: { by: "U2" } },
      ],
      "U1",
    );
    expect(lines.userLines).toEqual([{ text: `${"w".repeat(1998)}…`, isReply: false }]);
    expect(lines.othersLines).toEqual([`${"w".repeat(1998)}…`]);
    const description = `${"d".repeat(498)}😀 tail`;
    const text = reviewMessages({ ...INPUT, tool: { ...INPUT.tool, description } })
      .map((m) => m.content)
      .join("\n");
    expect(text).toContain(`Tool description: ${"d".repeat(498)}…\n`);
  });

  it("the engine's request to the reviewer holds no assistant text and no channel content", async () => {
    const h = reviewedHarness([verdict("allow")], {
      steps: [
        {
          text: ["ASSISTANT-TEXT before the call"],
          toolCalls: [{ id: "c1", name: "run_command", arguments: '{"command":"ls"}' }],
        },
        textStep("done"),
      ],
    });
    const messages: ConversationMessage[] = [
      { role: "user", content: "CHANNEL-CONTENT from #ops", meta: { untrusted: true } },
      { role: "assistant", content: "ASSISTANT-TEXT earlier" },
    ];
    await collect(h.engine.run(makeRequest({ mode: "reviewed", messages, prompt: "list the files" })));
    const seen = h.model.seen();
    expect(seen).toContain("list the files");
    expect(seen).toContain('"command": "ls"');
    expect(seen).not.toContain("ASSISTANT-TEXT");
    expect(seen).not.toContain("CHANNEL-CONTENT");
  });
});

describe("OpenAIReviewerModel against the fake endpoint", () => {
  let fake: FakeOpenAI | undefined;
  afterEach(async () => fake?.close());

  it("sends no tools, a JSON-schema response format, and reads the verdict and usage", async () => {
    fake = await startFakeOpenAI(() => ({
      text: '{"verdict":"allow","reason":"tests are routine"}',
      usage: { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 },
    }));
    const reviewer = new Reviewer({
      model: new OpenAIReviewerModel({ model: "judge", baseURL: fake.baseURL, apiKey: "k" }),
      timeoutMs: 5_000,
    });
    const v = await reviewer.review(INPUT, "live");
    expect(v).toEqual(expect.objectContaining({ verdict: "allow", tokensIn: 321, tokensOut: 12 }));
    const body = fake.requests[0];
    expect(body.tools).toBeUndefined();
    expect(body.stream).toBe(false);
    expect(body.model).toBe("judge");
    expect(body.response_format.type).toBe("json_schema");
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
  });

  it("asks again without response_format when the endpoint refuses it, and keeps it off", async () => {
    fake = await startFakeOpenAI(({ body }) =>
      body.response_format
        ? {
            status: 400,
            errorBody: {
              error: {
                message: "response_format json_schema is not supported",
                type: "invalid_request_error",
              },
            },
          }
        : { text: '```json\n{"verdict":"deny","reason":"no"}\n```' },
    );
    const model = new OpenAIReviewerModel({ model: "judge", baseURL: fake.baseURL, apiKey: "k" });
    const reviewer = new Reviewer({ model, timeoutMs: 5_000 });
    expect((await reviewer.review(INPUT, "live")).verdict).toBe("deny");
    expect((await reviewer.review(INPUT, "live")).verdict).toBe("deny");
    expect(fake.requests.map((b) => b.response_format !== undefined)).toEqual([true, false, false]);
  });
});
