import { renderBudget } from "../../../src/channels/shared/markdown-walk.js";
import { describe, expect, it } from "vitest";
import { defuseMentions, markdownToMrkdwn } from "../../../src/channels/slack/slack-markdown.js";
import { markdownLiteral } from "../../../src/core/person-text.js";

describe("markdownToMrkdwn", () => {
  it("converts emphasis, strike-through, inline code and headings", () => {
    expect(markdownToMrkdwn("# Title\n\nSome **bold**, *it* and ~~gone~~ with `x`")).toBe(
      "*Title*\n\nSome *bold*, _it_ and ~gone~ with `x`",
    );
  });

  it("writes links as <url|text>, bare URLs as <url>, and escapes & < > everywhere", () => {
    expect(markdownToMrkdwn("[docs](https://e.com/?a=1&b=2) and https://e.com")).toBe(
      "<https://e.com/?a=1&amp;b=2|docs> and <https://e.com>",
    );
    expect(markdownToMrkdwn("a < b && c > d <script>")).toBe("a &lt; b &amp;&amp; c &gt; d &lt;script&gt;");
    expect(markdownToMrkdwn("`<tag>` and\n\n```\nif (a < b) {}\n```")).toBe(
      "`&lt;tag&gt;` and\n\n```\nif (a &lt; b) {}\n```",
    );
  });

  it("never produces a clickable link for non-web schemes", () => {
    expect(markdownToMrkdwn("[click](javascript:alert(1))")).toBe("click (javascript:alert(1))");
  });

  it("shows the real target of a link whose text passes for another address", () => {
    expect(
      markdownToMrkdwn("Log in at [https://sso.example.com/login](https://evil.example.net/phish)"),
    ).toBe("Log in at https://sso.example.com/login (<https://evil.example.net/phish>)");
    expect(markdownToMrkdwn("[**sso.example.com**](https://evil.example.net)")).toBe(
      "*sso.example.com* (<https://evil.example.net>)",
    );
    expect(markdownToMrkdwn("![https://sso.example.com](https://evil.example.net/x.png)")).toBe(
      "https://sso.example.com (<https://evil.example.net/x.png>)",
    );
    expect(markdownToMrkdwn("[example.com](https://www.example.com/docs)")).toBe(
      "<https://www.example.com/docs|example.com>",
    );
  });

  it("keeps pipes from breaking link syntax", () => {
    expect(markdownToMrkdwn("[a|b](https://e.com/x|y)")).toBe("<https://e.com/x%7Cy|a¦b>");
  });

  it("drops the code fence language and keeps the code verbatim", () => {
    expect(markdownToMrkdwn("```ts\nconst a = 1;\n  indented();\n```")).toBe(
      "```\nconst a = 1;\n  indented();\n```",
    );
  });

  it("keeps backtick fences inside code from ending the Slack code block", () => {
    expect(markdownToMrkdwn("````md\n```js\nx\n```\n````")).toBe("```\n``\u200b`js\nx\n``\u200b`\n```");
  });

  it("shows an escaped *, _, ~ or backtick as itself, between zero-width spaces (mrkdwn has no escape)", () => {
    const z = "\u200b";
    expect(markdownToMrkdwn("\\*not bold\\* \\_not it\\_ \\~kept\\~ \\`no code\\`")).toBe(
      `${z}*${z}not bold${z}*${z} ${z}_${z}not it${z}_${z} ${z}~${z}kept${z}~${z} ${z}\`${z}no code${z}\`${z}`,
    );
    // Text written as it is (a name, a task) reads the same once the zero-width spaces are gone.
    const name = "*Boss* _of_ ~all~ `x` & <!here> [a](b)";
    const shown = markdownToMrkdwn(markdownLiteral(name));
    expect(shown.replaceAll(z, "")).toBe("*Boss* _of_ ~all~ `x` &amp; &lt;!here&gt; [a](b)");
    expect(shown).not.toMatch(/[^\u200b][*_~`]|[*_~`][^\u200b]/);
    // Only escaped characters are touched: ordinary text and real emphasis stay as written.
    expect(markdownToMrkdwn("2 * 3 * 4, snake_case, ~/path and **bold**")).toBe(
      "2 * 3 * 4, snake_case, ~/path and *bold*",
    );
  });

  it("leaves an escaped marker between letters or digits bare, so written identifiers copy cleanly", () => {
    const z = "\u200b";
    // Inside a word a marker can neither open nor close a span: no zero-width spaces to copy out.
    expect(markdownToMrkdwn(markdownLiteral("run deploy_prod with v2*3 or e~x"))).toBe(
      "run deploy_prod with v2*3 or e~x",
    );
    expect(markdownToMrkdwn(markdownLiteral("naïve_été"))).toBe("naïve_été");
    // At a word's edge or beside punctuation it still could, so it keeps them.
    expect(markdownToMrkdwn(markdownLiteral("_x my__var src/*.ts"))).toBe(
      `${z}_${z}x my${z}_${z}${z}_${z}var src/${z}*${z}.ts`,
    );
  });

  it("renders nested, ordered and task lists", () => {
    expect(markdownToMrkdwn("- a\n- b\n  1. c\n  2. d\n- [x] done\n- [ ] todo")).toBe(
      "• a\n• b\n    1. c\n    2. d\n• ☑ done\n• ☐ todo",
    );
    expect(markdownToMrkdwn("3. three\n4. four")).toBe("3. three\n4. four");
  });

  it("shows a loose task item's box once", () => {
    expect(markdownToMrkdwn("- [x] done\n\n- [ ] todo")).toBe("• ☑ done\n\n• ☐ todo");
  });

  it("quotes block quotes line by line", () => {
    expect(markdownToMrkdwn("> one\n> two")).toBe("> one\n> two");
  });

  it("renders tables as an aligned monospace block", () => {
    expect(markdownToMrkdwn("| a | bb |\n|---|---|\n| 1 | 2 |")).toBe("```\na | bb\n--+---\n1 | 2\n```");
  });

  it("resolves character references before escaping", () => {
    expect(markdownToMrkdwn("Tom &amp; Jerry &#39;s")).toBe("Tom &amp; Jerry 's");
  });

  it("returns an empty string for blank input", () => {
    expect(markdownToMrkdwn("  \n ")).toBe("");
  });
});

describe("markdownToMrkdwn on hostile model output", () => {
  // Sizes a model can write, where the old patterns were quadratic (tens of seconds).
  const spaces = " ".repeat(200_000);
  const newlines = "\n".repeat(200_000);

  it("wraps emphasis around a long inner run of spaces, whitespace kept outside the markers", () => {
    // As long as one inline piece allows (see INLINE_PIECE); past it the markers show as text.
    const run = " ".repeat(1_900);
    expect(markdownToMrkdwn(`**x${run}y**`)).toBe(`*x${run}y*`);
    expect(markdownToMrkdwn(`a _x${run}y_ b`)).toBe(`a _x${run}y_ b`);
    expect(markdownToMrkdwn(`**x${spaces}y**`)).toBe(`**x${spaces}y**`);
  });

  it("keeps a long newline run inside code and raw HTML blocks, dropping only the trailing ones", () => {
    // A budget that covers the block: past the render's budget it would be shown as text.
    expect(markdownToMrkdwn(`\`\`\`\n${newlines}x\n\n\`\`\``, renderBudget(300_000))).toBe(
      `\`\`\`\n${newlines}x\n\`\`\``,
    );
    expect(markdownToMrkdwn(`<pre>\n${newlines}x</pre>\n\n`)).toBe(`&lt;pre&gt;\n${newlines}x&lt;/pre&gt;`);
  });
});

describe("defuseMentions", () => {
  const ZWSP = "\u200b";

  it("puts a zero-width space into every mention opener, leaving other angle brackets alone", () => {
    expect(defuseMentions("ping <!channel>, <!here|here>, <@U1>, <#C1> and <!subteam^S1>", false)).toBe(
      `ping <${ZWSP}!channel>, <${ZWSP}!here|here>, <${ZWSP}@U1>, <${ZWSP}#C1> and <${ZWSP}!subteam^S1>`,
    );
    expect(defuseMentions("if a < b and <div> or <https://x.test>", false)).toBe(
      "if a < b and <div> or <https://x.test>",
    );
  });

  it("closes a token split between two pieces of a stream", () => {
    expect(defuseMentions("!channel> now", true)).toBe(`${ZWSP}!channel> now`);
    expect(defuseMentions("!channel> now", false)).toBe("!channel> now");
  });
});
