import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  escapeHtml,
  htmlToPlainText,
  markdownToTelegramHtml,
} from "../../../src/channels/telegram/telegram-html.js";
import { parseTelegramHtml } from "../../fakes/fake-telegram/html-parser.js";

function accepted(html: string): string {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(`${parsed.description}\n${html}`);
  return parsed.text;
}

describe("markdownToTelegramHtml", () => {
  it("escapes &, < and > in text, code and raw HTML", () => {
    const html = markdownToTelegramHtml("a < b && c > d <script>x</script> `1<2`");
    expect(html).toBe("a &lt; b &amp;&amp; c &gt; d &lt;script&gt;x&lt;/script&gt; <code>1&lt;2</code>");
    expect(accepted(html)).toBe("a < b && c > d <script>x</script> 1<2");
  });

  it("renders bold, italic, strikethrough and links", () => {
    const html = markdownToTelegramHtml('**bold** *it* ~~gone~~ [site](https://x.test/?a=1&b="2")');
    expect(html).toBe(
      '<b>bold</b> <i>it</i> <s>gone</s> <a href="https://x.test/?a=1&amp;b=&quot;2&quot;">site</a>',
    );
    accepted(html);
  });

  it("shows the real target of a link whose text passes for another address", () => {
    const html = markdownToTelegramHtml(
      "Log in at [https://sso.example.com/login](https://evil.example.net/phish)",
    );
    expect(html).toBe(
      'Log in at https://sso.example.com/login (<a href="https://evil.example.net/phish">https://evil.example.net/phish</a>)',
    );
    accepted(html);
    expect(markdownToTelegramHtml("[it@example.com](mailto:help@evil.example.net)")).toBe(
      'it@example.com (<a href="mailto:help@evil.example.net">mailto:help@evil.example.net</a>)',
    );
    expect(markdownToTelegramHtml("[example.com](https://example.com/docs)")).toBe(
      '<a href="https://example.com/docs">example.com</a>',
    );
  });

  it("drops links with unsafe schemes but keeps their text", () => {
    expect(markdownToTelegramHtml("[click](javascript:alert(1))")).toBe("click");
  });

  it("keeps only the text of a tg: link: model text mentions no one by id", () => {
    expect(markdownToTelegramHtml("✅ Approved by [Alice (id 1001)](tg://user?id=1001)")).toBe(
      "✅ Approved by Alice (id 1001)",
    );
    expect(markdownToTelegramHtml("[join](TG://resolve?domain=x)")).toBe("join");
  });

  it("renders fenced code with its language class and keeps indentation", () => {
    const html = markdownToTelegramHtml("```ts\nif (a < b) {\n  go();\n}\n```");
    expect(html).toBe('<pre><code class="language-ts">if (a &lt; b) {\n  go();\n}</code></pre>');
    expect(markdownToTelegramHtml("```\nplain\n```")).toBe("<pre>plain</pre>");
  });

  it("renders headings as bold lines and separates blocks with a blank line", () => {
    expect(markdownToTelegramHtml("# Title\n\nBody text")).toBe("<b>Title</b>\n\nBody text");
  });

  it("renders lists as bullet and numbered lines, nested ones indented, tasks with boxes", () => {
    const html = markdownToTelegramHtml(
      "- one\n- two\n  1. sub\n  2. sub2\n\n3. c\n4. d\n\n- [x] done\n- [ ] open",
    );
    expect(html).toBe("• one\n• two\n  1. sub\n  2. sub2\n\n3. c\n4. d\n\n• ☑ done\n• ☐ open");
  });

  it("shows a loose task item's box once, and starts a list inside a quote at the outer level", () => {
    expect(markdownToTelegramHtml("- [x] done\n\n- [ ] open")).toBe("• ☑ done\n• ☐ open");
    expect(markdownToTelegramHtml("- a\n  > - b\n  >   - c")).toBe(
      "• a\n<blockquote>• b\n  ◦ c</blockquote>",
    );
  });

  it("renders quotes, rules and tables sensibly", () => {
    expect(markdownToTelegramHtml("> quoted **b**")).toBe("<blockquote>quoted <b>b</b></blockquote>");
    expect(markdownToTelegramHtml("---")).toBe("──────────");
    const table = markdownToTelegramHtml("| a | bb |\n|---|---|\n| 1 | 2 |");
    expect(table).toBe("<pre>a | bb\n--+---\n1 | 2</pre>");
  });

  it("produces HTML Telegram accepts for any input; visible letters come from the input, in order", () => {
    const markdownish = fc.stringMatching(/^[a-z0-9 *_~`#>\-[\]()<>&\n|.!:/]{0,200}$/);
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const text = accepted(markdownToTelegramHtml(markdown));
        expect(isSubsequence(letters(text), letters(markdown))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps every letter and digit when there are no links or code fences", () => {
    expect(markdownToTelegramHtml("~~~0")).toBe(""); // a tilde fence: "0" is its language, not text
    // "~~~" opens a code fence whose info string is not content; that case is excluded here.
    const markdownish = fc
      .stringMatching(/^[a-z0-9 *_~#>\-<>&\n|.!]{0,200}$/)
      .filter((s) => !s.includes("~~~"));
    fc.assert(
      fc.property(markdownish, (markdown) => {
        expect(letters(accepted(markdownToTelegramHtml(markdown)))).toBe(letters(markdown));
      }),
      { numRuns: 300 },
    );
  });
});

function letters(value: string): string {
  return value.replace(/[^a-z0-9]/g, "");
}

function isSubsequence(part: string, whole: string): boolean {
  let index = 0;
  for (const char of whole) if (char === part[index]) index++;
  return index === part.length;
}

describe("htmlToPlainText", () => {
  it("strips tags and decodes entities", () => {
    expect(htmlToPlainText('<b>a &lt;b&gt; &amp; &quot;c&quot;</b> <a href="x">&#65;&#x42;</a>')).toBe(
      'a <b> & "c" AB',
    );
  });

  it("is the inverse of escapeHtml", () => {
    fc.assert(fc.property(fc.string(), (text) => htmlToPlainText(escapeHtml(text)) === text));
  });
});
