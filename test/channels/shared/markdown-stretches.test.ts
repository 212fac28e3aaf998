/**
 * Long model text rendered within bounded time: converted a stretch at a time while the render's
 * character budget lasts, and what is past it, or cannot be converted in bounded time (a block
 * with a line longer than a stretch), delivered whole as text, through the entry points that take
 * a whole answer (Telegram's final messages, Slack's plain pages). The budget counts characters,
 * never time, so where a text's formatting ends is the same on any host, under any load.
 */
import { describe, expect, it } from "vitest";
import {
  CONVERTED_CHARS_PER_RENDER,
  markdownStretches,
  renderBudget,
  STRETCH_CHARS,
} from "../../../src/channels/shared/markdown-walk.js";
import { EMPTY_TURN, foldTurn } from "../../../src/channels/shared/turn-view.js";
import { plainPages } from "../../../src/channels/slack/slack-document.js";
import { markdownToMrkdwn } from "../../../src/channels/slack/slack-markdown.js";
import { htmlToPlainText, markdownToTelegramHtml } from "../../../src/channels/telegram/telegram-html.js";
import { splitTelegramHtml } from "../../../src/channels/telegram/telegram-split.js";
import { agentEvent } from "../../../src/core/events.js";
import { markdownAnswer } from "../../support/markdown-answer.js";

/** Telegram's final answer (TelegramRenderer.finalChunks without the tool summary): HTML messages. */
const telegramFinal = (markdown: string) => splitTelegramHtml(markdownToTelegramHtml(markdown));

/** What a reader of Telegram's messages sees, joined. */
const telegramText = (chunks: readonly string[]) => chunks.map(htmlToPlainText).join("\n");

/** Slack's last-resort form of a turn that answered `markdown`, as the text of its messages. */
const slackPlainText = (markdown: string) =>
  plainPages(foldTurn(EMPTY_TURN, agentEvent({ type: "text-delta", delta: markdown })), 3_000)
    .map((page) => page.text.replace(/&gt;/g, ">").replace(/&lt;/g, "<").replace(/&amp;/g, "&"))
    .join("\n");

/** The characters of `text` but whitespace (message splits may fall on whitespace). */
const visible = (text: string) => text.replace(/\s+/g, "");

const emphasis = "!*a".repeat(34_000).slice(0, 100_000);

describe("markdown longer than a stretch", () => {
  it("delivers a 100,000-character line of emphasis delimiters whole, as plain text", () => {
    const telegram = telegramFinal(emphasis);
    expect(telegram.every((chunk) => !chunk.includes("<"))).toBe(true);
    expect(visible(telegramText(telegram))).toBe(emphasis);
    expect(visible(slackPlainText(emphasis))).toBe(emphasis);
  });

  it("delivers a 100,000-character lazy quote with every letter, within one render's budget or as text", () => {
    const lazy = ">a\na\n".repeat(20_000);
    const letters = (text: string) => text.replace(/[^a]/g, "");
    expect(letters(telegramText(telegramFinal(lazy)))).toBe(letters(lazy));
    expect(letters(slackPlainText(lazy))).toBe(letters(lazy));
  });

  it("delivers a 100,000-character paragraph line whole as text among formatted blocks", () => {
    const markdown = `**before**\n\n${emphasis}\n\n**after**`;
    const html = markdownToTelegramHtml(markdown);
    expect(html.startsWith("<b>before</b>\n\n")).toBe(true);
    expect(html.endsWith("\n\n<b>after</b>")).toBe(true);
    expect(html).toContain(emphasis);
    expect(markdownToMrkdwn(markdown)).toBe(`*before*\n\n${emphasis}\n\n*after*`);
  });

  it("keeps the formatting of a long ordinary answer converted in stretches", () => {
    const section = (n: number) =>
      [
        `## Part ${n}`,
        `Some **bold ${n}** and _em ${n}_ with \`code ${n}\` and [a link](https://x.test/${n}).`,
        "```ts\n" + `const a${n} = 1;\n\nconst b${n} = 2;\n` + "```",
        `- item ${n}\n- item ${n}b`,
      ].join("\n\n");
    // Longer than three stretches, within one render's budget.
    const sections = Array.from({ length: 290 }, (_, n) => section(n));
    const markdown = sections.join("\n\n");
    expect(markdown.length).toBeGreaterThan(3 * STRETCH_CHARS);
    expect(markdown.length).toBeLessThanOrEqual(CONVERTED_CHARS_PER_RENDER);
    const html = markdownToTelegramHtml(markdown);
    for (const n of [0, 145, 289]) {
      expect(html).toContain(`<b>Part ${n}</b>`);
      expect(html).toContain(`<b>bold ${n}</b> and <i>em ${n}</i> with <code>code ${n}</code>`);
      expect(html).toContain(
        `<pre><code class="language-ts">const a${n} = 1;\n\nconst b${n} = 2;</code></pre>`,
      );
      expect(html).toContain(`• item ${n}\n• item ${n}b`);
    }
    expect(html).not.toContain("```");
    expect(html).not.toContain("**");
  });

  it("never cuts a code block mid-block: a code block longer than a stretch is one stretch", () => {
    const code = Array.from({ length: 1_500 }, (_, n) => `line ${n} *not emphasis*`).join("\n");
    expect(code.length).toBeGreaterThan(STRETCH_CHARS);
    expect(code.length).toBeLessThan(CONVERTED_CHARS_PER_RENDER);
    const markdown = `intro\n\n\`\`\`\n${code}\n\`\`\`\n\nafter **bold**`;
    const stretches = [...markdownStretches(markdown)];
    expect(stretches.map((stretch) => stretch.source).join("")).toBe(markdown);
    expect(stretches.some((stretch) => stretch.source.includes(`\`\`\`\n${code}\n\`\`\``))).toBe(true);
    expect(markdownToMrkdwn(markdown)).toBe(`intro\n\n\`\`\`\n${code}\n\`\`\`\n\nafter *bold*`);
  });

  it("cuts a long table between rows, its header rows repeated so every row stays in a table", () => {
    const rows = Array.from({ length: 2_000 }, (_, n) => `| ${n} | value ${n} |`).join("\n");
    const markdown = `| n | value |\n|---|---|\n${rows}`;
    const stretches = [...markdownStretches(markdown)];
    expect(stretches.length).toBeGreaterThan(1);
    expect(stretches.map((stretch) => stretch.source).join("")).toBe(markdown);
    expect(stretches.every((stretch) => stretch.markdown?.startsWith("| n | value |\n|---|---|\n"))).toBe(
      true,
    );
    const html = markdownToTelegramHtml(markdown);
    expect(html).not.toContain("| 1999 |");
    expect(html).toContain("1999 | value 1999");
  });
});

describe("the render budget: characters, not time", () => {
  /** Paragraphs of bold and words, well past one render's budget. */
  const markdown = Array.from({ length: 2_500 }, (_, n) => `**bold ${n}** ${"word ".repeat(6)}end`).join(
    "\n\n",
  );

  /** Where the budget runs out, from the constants: the start of the first stretch that does not fit in what is left. */
  function cutOf(text: string): number {
    let left = CONVERTED_CHARS_PER_RENDER;
    for (const stretch of markdownStretches(text)) {
      const chars = stretch.markdown?.length ?? 0;
      if (chars > left) return stretch.start;
      left -= chars;
    }
    return text.length;
  }

  it("formats the stretches within the budget and delivers the rest, whole, as plain text", () => {
    expect(markdown.length).toBeGreaterThan(2 * CONVERTED_CHARS_PER_RENDER);
    const cut = cutOf(markdown);
    expect(cut).toBeGreaterThan(CONVERTED_CHARS_PER_RENDER - STRETCH_CHARS);
    expect(cut).toBeLessThanOrEqual(CONVERTED_CHARS_PER_RENDER);
    expect(markdown.slice(cut - 2, cut + 7)).toBe("\n\n**bold "); // before a block
    const formatted = markdown.slice(0, cut - 2);
    expect(markdownToMrkdwn(markdown)).toBe(
      `${formatted.replace(/\*\*(bold \d+)\*\*/g, "*$1*")}\n\n${markdown.slice(cut)}`,
    );
    expect(markdownToTelegramHtml(markdown)).toBe(
      `${formatted.replace(/\*\*(bold \d+)\*\*/g, "<b>$1</b>")}\n\n${markdown.slice(cut)}`,
    );
  });

  it("renders the same text identically every time, cut where the constants put it", () => {
    const first = markdownToTelegramHtml(markdown);
    for (let again = 0; again < 3; again += 1) expect(markdownToTelegramHtml(markdown)).toBe(first);
    // What follows the last formatted paragraph is exactly the source from the computed cut on.
    expect(first.slice(first.indexOf("**bold"))).toBe(markdown.slice(cutOf(markdown)));
    expect(markdownToMrkdwn(markdown)).toBe(markdownToMrkdwn(markdown));
  });

  it("formats an ordinary answer of 48,000 characters whole", () => {
    const html = markdownToTelegramHtml(markdownAnswer(48_000));
    expect(html).not.toContain("**");
    expect(html).not.toContain("[link]");
  });

  it("shares one budget among the renders given it: a text that does not fit, and all after it, are text", () => {
    const budget = renderBudget(20);
    expect(markdownToMrkdwn("**one** two", budget)).toBe("*one* two");
    expect(budget.remaining).toBe(9);
    expect(markdownToMrkdwn("**three** four", budget)).toBe("**three** four");
    expect(budget.remaining).toBe(0);
    expect(markdownToMrkdwn("**x**", budget)).toBe("**x**");
    // A fresh budget each render, unless one is passed.
    expect(markdownToMrkdwn("**three** four")).toBe("*three* four");
  });
});
