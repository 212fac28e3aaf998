import { renderBudget } from "../../../src/channels/shared/markdown-walk.js";
import { describe, expect, it, vi } from "vitest";
import { markdownAnswer } from "../../support/markdown-answer.js";

/** Every call of the markdown conversion, to count what each beat converts. */
const converted = vi.hoisted(() => ({ chars: 0 }));
vi.mock("../../../src/channels/slack/slack-markdown.js", async (original) => {
  const actual = await original<typeof import("../../../src/channels/slack/slack-markdown.js")>();
  return {
    ...actual,
    markdownToMrkdwn: (markdown: string, budget?: Parameters<typeof actual.markdownToMrkdwn>[1]) => {
      converted.chars += markdown.length;
      return actual.markdownToMrkdwn(markdown, budget);
    },
  };
});

const { AnswerSections, mrkdwnSections } = await import(
  "../../../src/channels/slack/slack-answer-sections.js"
);

const LIMIT = 3_000;
/**
 * The text the sections show, whitespace and fence markers aside: what a reader sees, wherever
 * sections break (a code block longer than a section is closed and reopened at its cuts).
 */
const shown = (sections: readonly string[]) =>
  sections.join(" ").replace(/```/g, " ").replace(/\s+/g, " ").trim();

/** Feed `answer` in steps of `step` characters, as a stream's edit beats see it. */
function streamed(
  answer: string,
  step: number,
  check?: (prefix: string, sections: readonly string[]) => void,
) {
  const sections = new AnswerSections();
  let last: readonly string[] = [];
  for (let end = step; ; end += step) {
    const prefix = answer.slice(0, Math.min(end, answer.length));
    last = sections.of(0, prefix, LIMIT);
    check?.(prefix, last);
    if (prefix.length === answer.length) return { sections, last };
  }
}

/** An answer with a table of `rows` rows ("| row i | 7i |") after 6,000 characters of prose. */
function withTable(rows: number): string {
  const table = [
    "| name | value |",
    "|---|---|",
    ...Array.from({ length: rows }, (_, i) => `| row ${i} | ${i * 7} |`),
  ];
  return `${"Intro words here. ".repeat(333)}\n\n${table.join("\n")}\n\n${markdownAnswer(20_000)}`;
}

describe("AnswerSections", () => {
  it("lays out every beat of a streamed answer as the whole of it lays out", () => {
    // Past one render's budget: the beats settle it a stretch at a time, so all of it is formatted,
    // as the whole is when converted with a budget that covers it.
    const answer = markdownAnswer(60_000);
    for (const step of [997, 4_001]) {
      streamed(answer, step, (prefix, sections) => {
        expect(shown(sections)).toBe(shown(mrkdwnSections(prefix, LIMIT, renderBudget(answer.length))));
      });
    }
  });

  it("cuts a code block longer than a stretch inside, reopening it: its text stays code", () => {
    // As prose, `**k**` would turn bold (`*k*`); inside the block it stays as written.
    const answer = `Intro.\n\n\`\`\`py\n${"y = **k**\n\n".repeat(4_000)}\`\`\`\n\nAfter **that**.`;
    const { last } = streamed(answer, 2_500);
    expect(shown(last)).toBe(shown(mrkdwnSections(answer, LIMIT)));
    expect(shown(last)).not.toContain("y = *k*");
  });

  it("converts each settled stretch once, so a long answer's beats stay cheap", () => {
    const answer = markdownAnswer(300_000);
    const step = 1_000;
    converted.chars = 0;
    streamed(answer, step);
    const beats = answer.length / step;
    // Whole conversion at every beat converted the sum of the prefixes: 45 million characters.
    expect(converted.chars).toBeLessThan(answer.length + beats * 20_000);
  });

  it("keeps a table shorter than a stretch whole, wherever the beats fall", () => {
    const answer = withTable(200);
    const { last } = streamed(answer, 500);
    expect(shown(last)).toBe(shown(mrkdwnSections(answer, LIMIT)));
  });

  it("cuts a table longer than a stretch between rows, repeating its header, so every row shows as a table", () => {
    const answer = withTable(1_000);
    const { last } = streamed(answer, 700);
    const text = last.join("\n");
    // Outside code blocks (where Slack shows tables, aligned), no row is left as a line of pipes.
    const outsideCode = text
      .split("```")
      .filter((_, i) => i % 2 === 0)
      .join("\n");
    expect(outsideCode).not.toMatch(/\| row \d+/);
    for (const i of [0, 499, 999]) expect(text).toMatch(new RegExp(`row ${i} +\\| ${i * 7}\\b`));
    expect(text.match(/^name +\| value$/gm)?.length).toBeGreaterThan(1);
  });

  it("keeps each section within the limit and never splits a character", () => {
    const answer = "😀".repeat(40_000);
    const { last } = streamed(answer, 3_001);
    expect(last.every((section) => section.length <= LIMIT)).toBe(true);
    expect(last.join("")).toBe(answer);
    expect(last.some((section) => /[\ud800-\udbff]$|^[\udc00-\udfff]/.test(section))).toBe(false);
  });

  it("lays out an answer that was replaced, rather than grown, afresh", () => {
    const sections = new AnswerSections();
    sections.of(0, markdownAnswer(40_000), LIMIT);
    const other = `Another answer.\n\n${markdownAnswer(30_000)}`;
    expect(shown(sections.of(0, other, LIMIT))).toBe(shown(mrkdwnSections(other, LIMIT)));
  });

  it("keeps answers and section limits apart", () => {
    const sections = new AnswerSections();
    const first = markdownAnswer(30_000);
    const second = `# Second\n\n${markdownAnswer(25_000)}`;
    sections.of(0, first, LIMIT);
    sections.of(2, second, LIMIT);
    expect(shown(sections.of(0, first, LIMIT))).toBe(shown(mrkdwnSections(first, LIMIT)));
    const smaller = sections.of(2, second, 2_000);
    expect(smaller.every((section) => section.length <= 2_000)).toBe(true);
    expect(shown(smaller)).toBe(shown(mrkdwnSections(second, 2_000)));
  });
});
