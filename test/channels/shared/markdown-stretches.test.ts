/**
 * Long model text rendered within bounded time: converted a stretch at a time, and what cannot be
 * converted in bounded time (a block with a line longer than a stretch) delivered whole as text,
 * through the entry points that take a whole answer (Telegram's final messages, Slack's plain pages).
 */
import { describe, expect, it } from "vitest";
import { markdownStretches, STRETCH_CHARS } from "../../../src/channels/shared/markdown-walk.js";
import { EMPTY_TURN, foldTurn } from "../../../src/channels/shared/turn-view.js";
import { plainPages } from "../../../src/channels/slack/slack-document.js";
import { markdownToMrkdwn } from "../../../src/channels/slack/slack-markdown.js";
import { htmlToPlainText, markdownToTelegramHtml } from "../../../src/channels/telegram/telegram-html.js";
import { splitTelegramHtml } from "../../../src/channels/telegram/telegram-split.js";
import { agentEvent } from "../../../src/core/events.js";

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
    const sections = Array.from({ length: 600 }, (_, n) => section(n));
    const markdown = sections.join("\n\n");
    expect(markdown.length).toBeGreaterThan(3 * STRETCH_CHARS);
    const html = markdownToTelegramHtml(markdown);
    for (const n of [0, 299, 599]) {
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
    const code = Array.from({ length: 5_000 }, (_, n) => `line ${n} *not emphasis*`).join("\n");
    const markdown = `intro\n\n\`\`\`\n${code}\n\`\`\`\n\nafter **bold**`;
    const stretches = [...markdownStretches(markdown)];
    expect(stretches.map((stretch) => stretch.source).join("")).toBe(markdown);
    expect(stretches.some((stretch) => stretch.source.includes(`\`\`\`\n${code}\n\`\`\``))).toBe(true);
    expect(markdownToMrkdwn(markdown)).toBe(`intro\n\n\`\`\`\n${code}\n\`\`\`\n\nafter *bold*`);
  });

  it("cuts a long table between rows, its header rows repeated so every row stays in a table", () => {
    const rows = Array.from({ length: 3_000 }, (_, n) => `| ${n} | value ${n} |`).join("\n");
    const markdown = `| n | value |\n|---|---|\n${rows}`;
    const stretches = [...markdownStretches(markdown)];
    expect(stretches.length).toBeGreaterThan(1);
    expect(stretches.map((stretch) => stretch.source).join("")).toBe(markdown);
    expect(stretches.every((stretch) => stretch.markdown?.startsWith("| n | value |\n|---|---|\n"))).toBe(
      true,
    );
    const html = markdownToTelegramHtml(markdown);
    expect(html).not.toContain("| 2999 |");
    expect(html).toContain("2999 | value 2999");
  });
});
