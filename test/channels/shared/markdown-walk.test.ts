import fc from "fast-check";
import { Lexer, type Token } from "marked";
import { describe, expect, it } from "vitest";
import {
  inlinePieces,
  isPlainMarkdown,
  type MarkdownContext,
  type MarkdownFormat,
  plainText,
  renderBudget,
  renderMarkdown,
} from "../../../src/channels/shared/markdown-walk.js";

const at = (context: MarkdownContext) => `${context.quoted ? "q" : ""}${context.listDepth}`;

/** A format that shows which primitive produced what, and with which context. */
const PROBE: MarkdownFormat = {
  text: (text) => text.toUpperCase(),
  escape: (text) => `{${text}}`,
  htmlBlock: (html) => `H(${html.trim()})`,
  strong: (inner) => `B(${inner})`,
  em: (inner) => `I(${inner})`,
  del: (inner) => `S(${inner})`,
  code: (text) => `C(${text})`,
  link: (href, label) => `L(${href}|${label})`,
  pre: (code, language, context) => `P[${language}@${at(context)}](${code})`,
  quote: (blocks, context) => `Q@${at(context)}(${blocks.join("/")})`,
  bullet: (depth) => `*${depth}`,
  listItem: (marker, body, depth) => `${"_".repeat(depth)}${marker} ${body}`,
  listSeparator: (loose) => (loose ? "\n\n" : "\n"),
  tableCell: (tokens, inline) => inline(tokens),
  table: (aligned, context, source) => (context.quoted ? `RAW(${source})` : `T(${aligned})`),
};

describe("isPlainMarkdown", () => {
  /** What marked makes of `text`, when it is one paragraph of unformatted text: that text. */
  const plainParagraph = (text: string): string | undefined => {
    const tokens = new Lexer({ gfm: true }).lex(text).filter((token: Token) => token.type !== "space");
    const [paragraph] = tokens;
    if (tokens.length !== 1 || paragraph?.type !== "paragraph") return undefined;
    const inline = paragraph.tokens ?? [];
    if (!inline.every((token) => token.type === "text" && !("tokens" in token && token.tokens?.length)))
      return undefined;
    return inline.map((token) => (token as { text: string }).text).join("");
  };

  it("takes text marked sees as one unformatted paragraph, exactly as written", () => {
    const char = fc.constantFrom(..."aZéw5 ,.;:'\"?!", "ww.", "  ");
    const line = fc.tuple(fc.constantFrom("a", "Z", "é", "w"), fc.array(char, { maxLength: 12 }));
    const text = fc.array(line, { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(text, (lines) => {
        const markdown = lines.map(([first, rest]) => first + rest.join("")).join("\n");
        if (isPlainMarkdown(markdown)) expect(plainParagraph(markdown)).toBe(markdown);
      }),
      { numRuns: 2_000 },
    );
  });

  it("leaves anything else to the lexer", () => {
    for (const text of [
      "see www.example.com now",
      "Hello  \nworld",
      "Hello ",
      "1. first",
      "- item",
      "a *b*",
      "R&D",
      "x < y",
      "",
      "Hello\n\nWorld",
      "Done 😀",
    ])
      expect(isPlainMarkdown(text)).toBe(false);
    expect(isPlainMarkdown("You said: m12")).toBe(true);
    expect(renderMarkdown("Fine, thanks.\nAnd you?", PROBE)).toBe("FINE, THANKS.\nAND YOU?");
  });
});

describe("renderMarkdown", () => {
  it("hands inline constructs to the format's primitives", () => {
    expect(renderMarkdown("a **b** *c* ~~d~~ `e` [f](https://x.test) ![g](https://y.test)", PROBE)).toBe(
      "A B(B) I(C) S(D) C(e) L(https://x.test|F) L(https://y.test|G)",
    );
    expect(renderMarkdown("![](https://y.test) \\* <b>x</b>", PROBE)).toBe(
      "L(https://y.test|IMAGE) {*} {<b>}X{</b>}",
    );
  });

  it("renders headings as strong lines, rules as the shared rule, raw HTML blocks as text", () => {
    expect(renderMarkdown("# Title\n\n---\n\n<div>\nx\n</div>\n", PROBE)).toBe(
      "B(TITLE)\n\n──────────\n\nH(<div>\nx\n</div>)",
    );
  });

  it("passes code blocks with their trailing newlines removed and the fence's first word", () => {
    expect(renderMarkdown("```ts title=x\nconst a;\n\n```", PROBE)).toBe("P[ts@0](const a;)");
    expect(renderMarkdown("> ```\n> q\n> ```", PROBE)).toBe("Q@0(P[@q0](q))");
  });

  it("walks lists with bullets by depth, numbers from the start, task boxes and loose separators", () => {
    expect(renderMarkdown("- a\n  - b\n- [x] c\n- [ ] d", PROBE)).toBe("*0 A\n_*1 B\n*0 ☑ C\n*0 ☐ D");
    expect(renderMarkdown("3. x\n\n4. y", PROBE)).toBe("3. X\n\n4. Y");
    expect(renderMarkdown("- [x] a\n\n- [ ] b", PROBE)).toBe("*0 ☑ A\n\n*0 ☐ B");
    // A nested list is one level deeper; a quote's list keeps the item's level.
    expect(renderMarkdown("- a\n  > - b", PROBE)).toBe("*0 A\nQ@0(*0 B)");
  });

  it("marks blocks inside quotes as quoted and keeps quoted tables as their source", () => {
    expect(renderMarkdown("> a\n>\n> b", PROBE)).toBe("Q@0(A/B)");
    expect(renderMarkdown("> | a |\n> |---|\n> | 1 |", PROBE)).toBe("Q@0(RAW(| a |\n|---|\n| 1 |))");
    expect(renderMarkdown("| a | bb |\n|---|---|\n| **1** | 2 |", PROBE)).toBe(
      "T(A    | BB\n-----+---\nB(1) | 2)",
    );
    // Columns padded to the widest cell, trailing blanks dropped.
    expect(renderMarkdown("| a | bb |\n|---|---|\n| ccc | |", PROBE)).toBe("T(A   | BB\n----+---\nCCC |)");
  });

  it("returns nothing for blank input", () => {
    expect(renderMarkdown("  \n\n ", PROBE)).toBe("");
  });
});

describe("plainText", () => {
  it("reads the raw text of inline tokens, line breaks as spaces", () => {
    expect(plainText(undefined)).toBe("");
    expect(
      plainText([
        { type: "strong", raw: "**x**", text: "x", tokens: [{ type: "text", raw: "x", text: "x" }] },
        { type: "br", raw: "\n" },
      ]),
    ).toBe("x ");
  });
});

describe("renderMarkdown on hostile model output", () => {
  it("drops a code block's trailing newlines but keeps a long newline run inside it", () => {
    // 200,000 newlines before the last line: /\n+$/ read every run to its end (minutes).
    const run = "\n".repeat(200_000);
    // A budget that covers it: a code block this long is otherwise shown as text (over the budget).
    expect(renderMarkdown("```\n" + run + "x\n\n\n```", PROBE, renderBudget(300_000))).toBe(`P[@0](${run}x)`);
  });

  it("shows markdown nested deeper than the stack allows as its source", () => {
    // Forty thousand `>` overflowed marked's recursion: the reply could not be rendered at all.
    const deep = ">".repeat(40_000);
    expect(renderMarkdown(deep, PROBE)).toBe(deep.toUpperCase());
    expect(renderMarkdown(`${"> ".repeat(40_000)}x`, PROBE)).toBe(`${"> ".repeat(40_000)}X`);
  });

  it("formats a paragraph longer than one inline piece throughout", () => {
    const filler = "plain words ".repeat(450); // twice this is still one stretch (STRETCH_CHARS)
    const rendered = renderMarkdown(`**start** ${filler}\n${filler}_end_ and \`code\``, PROBE);
    expect(rendered.startsWith("B(START) PLAIN WORDS")).toBe(true);
    expect(rendered.endsWith("I(END) AND C(code)")).toBe(true);
    expect(rendered).toHaveLength(`B(START) ${filler}\n${filler}I(END) AND C(code)`.length);
  });
});

describe("inlinePieces", () => {
  it("keeps a short run whole", () => {
    expect(inlinePieces("a *b* c")).toEqual(["a *b* c"]);
  });

  it("cuts a long run after a line end, else after a space, else between whole characters", () => {
    const line = `${"x".repeat(1_500)}\n`;
    expect(inlinePieces(line.repeat(3))).toEqual([line, line, line]);
    const words = "word ".repeat(1_000);
    const byWords = inlinePieces(words);
    expect(byWords.join("")).toBe(words);
    expect(byWords.every((piece) => piece.length <= 2_000 && piece.endsWith(" "))).toBe(true);
    const emoji = "😀".repeat(3_000);
    const byUnits = inlinePieces(emoji);
    expect(byUnits.join("")).toBe(emoji);
    expect(byUnits.every((piece) => piece.length <= 2_000 && piece.length % 2 === 0)).toBe(true);
  });

  it("always gives back the whole run in pieces no longer than the limit", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", " ", "\n", "😀", "*"), maxLength: 9_000 }),
        (text) => {
          const pieces = inlinePieces(text);
          expect(pieces.join("")).toBe(text);
          expect(pieces.every((piece) => piece.length <= 2_000)).toBe(true);
        },
      ),
      { numRuns: 50 },
    );
  });
});
