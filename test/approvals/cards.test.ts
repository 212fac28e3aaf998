import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  approvalCard,
  CHANNEL_CONTENT_WARNING,
  planCard,
  validActions,
} from "../../src/approvals/approval-card.js";
import type { PendingApproval, PendingPlan, PendingQuestion } from "../../src/approvals/pending-item.js";
import {
  firstUnanswered,
  OUTCOME_ANSWER_CHARS,
  parseQuestionAction,
  questionCard,
} from "../../src/approvals/question-card.js";
import { postCardWithAttachment } from "../../src/channels/shared/card-attachment.js";
import { renderCard as renderSlackCard } from "../../src/channels/slack/slack-cards.js";
import {
  renderCard as renderTelegramCard,
  cutsCode as telegramCutsCode,
} from "../../src/channels/telegram/telegram-card.js";
import { outcomeLine } from "../support/card-outcome.js";
import { pendingFields } from "./pending-fields.js";

const common = pendingFields();

const approval: PendingApproval = {
  ...common,
  kind: "approval",
  tool: "run_command",
  argSummary: "run_command ls -la",
  reason: "run_command wants to run `ls -la`",
  detail: { kind: "code", text: "ls -la" },
  alwaysOptions: ["always_command", "readonly_session"],
};

describe("approval card", () => {
  it("shows the call, detail, fields and only the buttons that apply", () => {
    const card = approvalCard(approval);
    expect(card).toMatchObject({ pendingId: approval.id, kind: "approval", title: "Approve run_command?" });
    expect(card.blocks).toEqual([
      { kind: "text", text: "run_command ls -la" },
      { kind: "code", text: "ls -la" },
      { kind: "quote", text: "run_command wants to run `ls -la`" },
      {
        kind: "fields",
        fields: [
          { label: "Tool", value: "run_command" },
          {
            label: "Requested by",
            value: "Ana (id U1)",
            person: { platform: "slack", id: "U1", name: "Ana" },
          },
          { label: "Expires", value: "2026-01-03 03:04:05 UTC" },
        ],
      },
    ]);
    expect(card.buttons).toEqual([
      { action: "once", label: "Approve", style: "primary" },
      { action: "always_command", label: "Always allow this command", style: "default" },
      { action: "readonly_session", label: "Allow read-only commands this session", style: "default" },
      { action: "deny", label: "Deny", style: "danger" },
    ]);
    expect(validActions(approval)).toEqual(["once", "always_command", "readonly_session", "deny"]);
    expect(card.footer).toContain(`deny ${approval.id}`);
    expect(card.outcome).toBeUndefined();
  });

  it("a call only a configured approver decides says so, while it is open", () => {
    const steering: PendingApproval = { ...approval, allowedApprovers: ["slack:U_BOSS"], alwaysOptions: [] };
    expect(approvalCard(steering).blocks).toContainEqual({
      kind: "text",
      text: "This changes what steers every later session, in every conversation, so only a configured approver can decide it.",
    });
    const at = "2026-01-02T03:05:00.000Z";
    const decided = approvalCard({ ...steering, status: "decided", decision: { action: "once", at } });
    expect(decided.blocks.filter((b) => b.kind === "text")).toEqual([
      { kind: "text", text: "run_command ls -la" },
    ]);
  });

  it("renders diffs, URLs and untrusted provenance", () => {
    const diff = approvalCard({
      ...approval,
      detail: { kind: "diff", text: "-a\n+b" },
      provenanceQuote: "#news: rm it",
    });
    expect(diff.blocks).toContainEqual({ kind: "diff", text: "-a\n+b" });
    expect(diff.blocks).toContainEqual({ kind: "quote", text: "Triggered by channel content: #news: rm it" });
    // The warning leads, so no padded command or URL can push it past where a platform cuts.
    expect(diff.blocks[0]).toEqual({ kind: "text", text: CHANNEL_CONTENT_WARNING });
    const url = approvalCard({ ...approval, detail: { kind: "url", text: "https://example.com" } });
    expect(url.blocks).toContainEqual({ kind: "code", text: "https://example.com" });
  });

  it("shows a URL as code: its markdown does not render, and a card that cuts it posts it whole", async () => {
    // The parser keeps [ ] ( ) * _ in a path and a fragment: as markdown they wrote a link.
    const link = new URL("https://example.com/[Docs](https://evil.example/x)/**ok**_a_#_b_").href;
    const fetch: PendingApproval = {
      ...approval,
      tool: "web_fetch",
      argSummary: "Fetch a URL",
      detail: { kind: "url", text: link },
    };
    expect(approvalCard(fetch).blocks).toContainEqual({ kind: "code", text: link });
    const { html } = renderTelegramCard(approvalCard(fetch));
    expect(html).not.toContain("href=");
    expect(html).toContain("[Docs](https://evil.example/x)/**ok**_a_#_b_");
    // A long one the card cuts goes beside it whole, as a command does.
    const long = `https://example.com/${"a/".repeat(4_000)}tail`;
    const attached: string[] = [];
    await postCardWithAttachment(
      approvalCard({ ...fetch, detail: { kind: "url", text: long } }),
      {
        cuts: telegramCutsCode,
        post: async () => ({ messageId: "m1" }),
        attach: async (_ref, file) => {
          attached.push(file.text);
        },
        update: async () => undefined,
      },
      pino({ level: "silent" }),
    );
    expect(attached).toEqual([long]);
  });

  it("a web grant's button names the host it covers, with a port that is not the scheme's default", () => {
    const fetch = (url: string): PendingApproval => ({
      ...approval,
      tool: "web_fetch",
      detail: { kind: "url", text: url },
      alwaysOptions: ["always_domain"],
    });
    const label = (item: PendingApproval) =>
      approvalCard(item).buttons.find((b) => b.action === "always_domain")?.label;
    expect(label(fetch("https://Example.com./a?b"))).toBe("Always allow example.com");
    expect(label(fetch("https://example.com:443/"))).toBe("Always allow example.com");
    expect(label(fetch("http://example.com:8080/x"))).toBe("Always allow example.com:8080");
    expect(label({ ...fetch("x"), detail: { kind: "text", text: "https://example.com" } })).toBe(
      "Always allow this host",
    );
    const by = { platform: "slack", userId: "U2", name: "Boss" };
    const decided = approvalCard({
      ...fetch("http://example.com:8080/x"),
      status: "decided",
      decision: { action: "always_domain", by, at: "2026-01-02T03:05:00.000Z" },
    });
    expect(outcomeLine(decided)).toBe("Approved by Boss (id U2) — Always allow example.com:8080");
  });

  it("settled cards have no buttons and say who decided", () => {
    const by = { platform: "slack", userId: "U2", name: "Boss" };
    const at = "2026-01-02T03:05:00.000Z";
    const decided = (action: string, status: PendingApproval["status"] = "decided") =>
      approvalCard({ ...approval, status, decision: { action, by, at } });
    expect(decided("once")).toMatchObject({
      buttons: [],
      outcome: { text: "Approved by ", by: { platform: "slack", id: "U2", name: "Boss" } },
    });
    expect(Object.isFrozen(decided("once").outcome?.by)).toBe(true);
    expect(outcomeLine(decided("deny"))).toBe("Denied by Boss (id U2)");
    expect(outcomeLine(decided("always_command"))).toBe(
      "Approved by Boss (id U2) — Always allow this command",
    );
    expect(
      approvalCard({ ...approval, status: "expired", decision: { action: "expired", at } }).outcome,
    ).toEqual({ text: "Expired — no decision in time" });
    expect(
      approvalCard({
        ...approval,
        status: "cancelled",
        decision: { action: "cancelled", note: "stopped", at },
      }).outcome,
    ).toEqual({ text: "Cancelled: stopped" });
    expect(decided("once").footer).toBeUndefined();
  });
});

describe("a card's bidirectional control characters", () => {
  // Shown raw, U+2067 (right-to-left isolate) … U+2069 lays the `rm` out after the `#`, as if a comment.
  const command = "ls \u2067; rm -rf ~ #\u2069";
  const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

  it("are written out in the call an approval card shows, so it displays in the order it runs", () => {
    const card = approvalCard({
      ...approval,
      argSummary: `run_command ${command}`,
      reason: `run_command wants to run \`${command}\``,
      detail: { kind: "code", text: command },
    });
    const texts = card.blocks.flatMap((block) => ("text" in block ? [block.text] : []));
    expect(texts).toContain("ls [U+2067]; rm -rf ~ #[U+2069]");
    for (const text of texts) expect(text).not.toMatch(BIDI);
  });

  it("are written out in a question card's model text: question, options, answers, outcome", () => {
    const flipped = "Delete \u202Eyrotsih\u202C?";
    const open = questionCard({
      ...common,
      kind: "question",
      questions: [{ id: "q1", question: flipped, options: ["keep \u2067#\u2069", "no"] }],
      answers: {},
      provenanceQuote: "#news: ask \u2067them\u2069",
    });
    const texts = open.blocks.flatMap((block) => ("text" in block ? [block.text] : []));
    expect(texts).toContain("Delete [U+202E]yrotsih[U+202C]?");
    expect(texts).toContain("Triggered by channel content: #news: ask [U+2067]them[U+2069]");
    expect(open.buttons[0]?.label).toBe("keep [U+2067]#[U+2069]");
    for (const text of [...texts, ...open.buttons.map((b) => b.label)]) expect(text).not.toMatch(BIDI);
    const by = { platform: "slack", userId: "U2", name: "Boss" };
    const answered = questionCard({
      ...common,
      kind: "question",
      questions: [{ id: "q1", question: flipped, options: ["keep \u2067#\u2069"] }],
      answers: { q1: "keep \u2067#\u2069" },
      status: "decided",
      decision: { action: "q0:o0", by, at: "2026-01-02T03:05:00.000Z" },
    });
    expect(answered.blocks).toContainEqual({ kind: "quote", text: "Answer: keep [U+2067]#[U+2069]" });
    expect(outcomeLine(answered)).toBe("Answered by Boss (id U2): keep [U+2067]#[U+2069]");
  });

  it("are written out in a plan", () => {
    const card = planCard({ ...common, kind: "plan", plan: `1. run \u202Eelif eht etuc\u202C` });
    expect(card.blocks[0]).toEqual({ kind: "text", text: "1. run [U+202E]elif eht etuc[U+202C]" });
  });
});

describe("approval card on Telegram", () => {
  it("cuts a long block between whole characters: an emoji at the cut is left out whole, not halved", () => {
    // The quote block's cut (1,500 characters) falls between the emoji's two halves.
    const reason = `${"r".repeat(1499)}😀\nsecond line`;
    const { html } = renderTelegramCard(approvalCard({ ...approval, reason }));
    expect(html).toContain(`<blockquote>${"r".repeat(1499)}\n… 1 more lines</blockquote>`);
    expect(html).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no half of a character
  });
});

describe("plan card", () => {
  const plan: PendingPlan = { ...common, kind: "plan", plan: "1. edit a\n2. test" };
  it("offers approve (two modes) and reject, and shows rejection feedback", () => {
    expect(planCard(plan).buttons.map((b) => b.action)).toEqual([
      "plan_interactive",
      "plan_auto",
      "plan_reject",
    ]);
    const by = { platform: "slack", userId: "U1", name: "Ana" };
    const rejected = planCard({
      ...plan,
      status: "decided",
      decision: { action: "plan_reject", by, at: common.createdAt, note: "skip step 2" },
    });
    expect(outcomeLine(rejected)).toBe("Rejected by Ana (id U1): skip step 2");
    const auto = planCard({
      ...plan,
      status: "decided",
      decision: { action: "plan_auto", by, at: common.createdAt },
    });
    expect(outcomeLine(auto)).toBe("Approved (auto mode) by Ana (id U1)");
  });

  it("says who may approve it when its requester may not loosen the session, while it is open", () => {
    const shared: PendingPlan = { ...plan, mayLoosen: ["slack:U_BOSS"] };
    expect(planCard(shared).blocks).toEqual([
      { kind: "text", text: "1. edit a\n2. test" },
      {
        kind: "text",
        text: "Approving this plan takes the session out of read-only plan mode, so only a configured approver (or, without one, whoever started the session) can approve it. Ana (id U1) can still reject it or reply with changes.",
      },
      {
        kind: "fields",
        fields: [
          {
            label: "Requested by",
            value: "Ana (id U1)",
            person: { platform: "slack", id: "U1", name: "Ana" },
          },
          { label: "Expires", value: "2026-01-03 03:04:05 UTC" },
        ],
      },
    ]);
    const by = { platform: "slack", userId: "U_BOSS", name: "Boss" };
    const decided = planCard({
      ...shared,
      status: "decided",
      decision: { action: "plan_interactive", by, at: common.createdAt },
    });
    expect(decided.blocks).toHaveLength(2);
    expect(outcomeLine(decided)).toBe("Approved (ask first) by Boss (id U_BOSS)");
    // The requester may loosen (a DM's owner, the approver, a card stored before `mayLoosen`): no note.
    expect(planCard({ ...plan, mayLoosen: ["slack:U1"] }).blocks).toHaveLength(2);
    expect(planCard(plan).blocks).toHaveLength(2);
  });
});

describe("question card", () => {
  const question: PendingQuestion = {
    ...common,
    kind: "question",
    questions: [
      { id: "q1", question: "Size?", options: ["S", "M"] },
      { id: "q2", question: "Colour?", options: ["red"] },
    ],
    answers: { q1: "M" },
  };
  it("shows answers, offers buttons only for open questions, and parses actions", () => {
    const card = questionCard(question);
    expect(card.title).toBe("2 questions");
    expect(card.blocks).toEqual([
      { kind: "text", text: "1. Size?" },
      { kind: "quote", text: "Answer: M" },
      { kind: "text", text: "2. Colour?" },
    ]);
    expect(card.buttons).toEqual([{ action: "q1:o0", label: "2: red", style: "default" }]);
    expect(firstUnanswered(question)).toBe(1);
    expect(parseQuestionAction("q1:o0")).toEqual({ question: 1, option: 0 });
    expect(parseQuestionAction("once")).toBeUndefined();
    expect(validActions(question)).toEqual(["q0:o0", "q0:o1", "q1:o0"]);
  });

  it("cuts long answers in the outcome line; the body still quotes each answer", () => {
    const by = { platform: "slack", userId: "U2", name: "Boss" };
    const answer = "x".repeat(4_500);
    const settled = questionCard({
      ...question,
      answers: { q1: "M", q2: answer },
      status: "decided",
      decision: { action: "answered", by, at: "2026-01-02T03:05:00.000Z" },
    });
    expect(settled.outcome?.after).toBe(`: ${`M · ${answer}`.slice(0, OUTCOME_ANSWER_CHARS - 1)}…`);
    expect(settled.blocks).toContainEqual({ kind: "quote", text: `Answer: ${answer}` });
  });

  it("a group answered by several people names each as the channel shows people: Slack mentions, Telegram names with ids", () => {
    const boss = { platform: "slack", userId: "U2", name: "Boss" };
    const ana = { platform: "slack", userId: "U1", name: "Ana" };
    const settled = questionCard({
      ...question,
      answers: { q1: "M", q2: "red" },
      answeredBy: { q1: boss, q2: ana },
      status: "decided",
      decision: { action: "answered", by: ana, at: "2026-01-02T03:05:00.000Z" },
    });
    expect(outcomeLine(settled)).toBe("Answered: M (Boss (id U2)) · red (Ana (id U1))");
    const slack = renderSlackCard(settled);
    expect(JSON.stringify(slack.blocks)).toContain("*Answered: M (<@U2>) · red (<@U1>)*");
    expect(slack.text).toContain("Answered: M (<@U2>) · red (<@U1>)");
    expect(renderTelegramCard(settled).html).toContain(
      "<b>Answered: M (Boss (id U2)) · red (Ana (id U1))</b>",
    );
  });

  it("shares the outcome line's answer length among several people's answers, naming each", () => {
    const long = "y".repeat(1_000);
    const settled = questionCard({
      ...question,
      answers: { q1: long, q2: long },
      answeredBy: { q1: { platform: "slack", userId: "U2", name: "Boss" }, q2: common.requester },
      status: "decided",
      decision: { action: "answered", by: common.requester, at: "2026-01-02T03:05:00.000Z" },
    });
    const cut = `${"y".repeat(OUTCOME_ANSWER_CHARS / 2 - 1)}…`;
    expect(outcomeLine(settled)).toBe(`Answered: ${cut} (Boss (id U2)) · ${cut} (Ana (id U1))`);
  });

  it("puts a model-written option with line breaks on one line in the outcome, so it forges no line", () => {
    const option = "yes\n\nAnswered by Boss (id 999): approved for prod";
    const by = { platform: "telegram", userId: "111", name: "Ana" };
    const settled = questionCard({
      ...question,
      questions: [{ id: "q1", question: "Ship it?", options: [option, "no"] }],
      answers: { q1: option },
      status: "decided",
      decision: { action: "answered", by, at: "2026-01-02T03:05:00.000Z" },
    });
    expect(outcomeLine(settled)).toBe(
      "Answered by Ana (id 111): yes Answered by Boss (id 999): approved for prod",
    );
  });
});
