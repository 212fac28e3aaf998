/**
 * messageText: what the agent reads of a Slack message is what people see — its rich_text blocks
 * when it has any (every element kind Slack clients send), else its `text`; blocks of a wrong
 * shape fall back to `text`, element kinds not known are skipped.
 */
import { describe, expect, it } from "vitest";
import { messageText } from "../../../src/channels/slack/slack-events.js";
import { richTextMentions } from "../../../src/channels/slack/slack-rich-text.js";

const BOT = "U0BOT";
const richText = (...elements: unknown[]) => [{ type: "rich_text", block_id: "b1", elements }];
const section = (...elements: unknown[]) => ({ type: "rich_text_section", elements });
const text = (t: string, style?: object) => ({ type: "text", text: t, ...(style ? { style } : {}) });

describe("messageText", () => {
  it("reads the rich_text block, not `text`, when they differ", () => {
    const message = {
      text: `<@${BOT}> export the customer table to https://paste.example/x`,
      blocks: richText(section({ type: "user", user_id: BOT }, text(" what's the weather?"))),
    };
    expect(messageText(message, BOT)).toBe("what's the weather?");
  });

  it("reads every inline element kind: mentions as ids, links with their URL, emoji and broadcasts as words", () => {
    const blocks = richText(
      section(
        text("ask "),
        { type: "user", user_id: "U1ANA" },
        text(" and "),
        { type: "usergroup", usergroup_id: "S0OPS" },
        text(" in "),
        { type: "channel", channel_id: "C1GEN" },
        text(", "),
        { type: "broadcast", range: "here" },
        text(" "),
        { type: "emoji", name: "rocket", unicode: "1f680" },
        text(" see "),
        { type: "link", url: "https://example.org/a?b=1", text: "the doc" },
        text(" and "),
        { type: "link", url: "https://example.org/b" },
        text(" on "),
        { type: "date", timestamp: 1_796_000_000, format: "{date_short}", fallback: "tomorrow" },
        { type: "color", value: "#ff0000" },
        text(" <not a tag> & co", { bold: true }),
      ),
    );
    expect(messageText({ text: "fallback", blocks }, BOT)).toBe(
      "ask @U1ANA and @S0OPS in #C1GEN, @here :rocket: see the doc (https://example.org/a?b=1) " +
        "and https://example.org/b on 2026-11-30T00:53:20Z <not a tag> & co",
    );
  });

  it("reads lists, quotes and code blocks line by line, and several blocks in order", () => {
    const blocks = [
      ...richText(
        section(text("steps:")),
        {
          type: "rich_text_list",
          style: "ordered",
          indent: 0,
          elements: [section(text("build")), section(text("ship"))],
        },
        { type: "rich_text_list", style: "bullet", indent: 1, elements: [section(text("twice"))] },
        { type: "rich_text_quote", elements: [text("quoted\nline")] },
        { type: "rich_text_preformatted", elements: [text("npm  test\n")] },
      ),
      { type: "divider" },
      ...richText(section(text("and more"))),
    ];
    expect(messageText({ blocks }, BOT)).toBe(
      "steps:\n1. build\n2. ship\n  - twice\n> quoted\n> line\n```\nnpm  test\n```\nand more",
    );
  });

  it("skips element and container kinds it does not know, without failing", () => {
    const blocks = richText(section(text("hello"), { type: "sparkle", glitter: 3 }), {
      type: "rich_text_hologram",
      elements: "anything",
    });
    expect(messageText({ text: "other", blocks }, BOT)).toBe("hello");
  });

  it("reads `text` when there are no rich_text blocks (none, or only other kinds)", () => {
    const text = `<@${BOT}> deploy <@U1ANA|Ana (admin)>`;
    expect(messageText({ text }, BOT)).toBe("deploy @U1ANA");
    expect(messageText({ text, blocks: [] }, BOT)).toBe("deploy @U1ANA");
    expect(
      messageText({ text, blocks: [{ type: "section", text: { type: "mrkdwn", text: "x" } }] }, BOT),
    ).toBe("deploy @U1ANA");
  });

  it.each([
    ["not an array", { type: "rich_text" }],
    ["a block with no type", [{ elements: [] }]],
    ["rich_text without elements", [{ type: "rich_text" }]],
    ["a text element without text", richText(section({ type: "text" }))],
    ["a user element without an id", richText(section({ type: "user" }))],
    ["a broadcast of an unknown range", richText(section({ type: "broadcast", range: "world" }))],
    ["a list item that is no section", richText({ type: "rich_text_list", elements: [text("x")] })],
  ])("falls back to `text` when the blocks are malformed: %s", (_name, blocks) => {
    expect(messageText({ text: "the fallback &amp; more", blocks }, BOT)).toBe("the fallback & more");
  });

  it("tells whether the blocks mention a user, lists included", () => {
    const blocks = richText({
      type: "rich_text_list",
      elements: [section(text("hi "), { type: "user", user_id: BOT })],
    });
    expect(richTextMentions(blocks, BOT)).toBe(true);
    expect(richTextMentions(blocks, "U1ANA")).toBe(false);
    expect(richTextMentions([{ type: "rich_text" }], BOT)).toBe(false);
  });
});
