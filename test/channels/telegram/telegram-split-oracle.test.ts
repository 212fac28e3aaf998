/**
 * splitTelegramHtml against its earlier one-unit-per-character version (kept below as the
 * oracle, in this test only): on random HTML built from the shapes markdownToTelegramHtml
 * produces (tags, nested and stray; entities, blank and newline ones included; surrogate pairs,
 * lone halves, odd whitespace; markdown rendered for real) the token-based splitter must give
 * exactly the same chunks, at any limit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeEntities } from "../../../src/channels/shared/markdown-entities.js";
import { ANYWHERE, type SplitUnits, splitRanges } from "../../../src/channels/shared/split-text.js";
import { markdownToTelegramHtml } from "../../../src/channels/telegram/telegram-html.js";
import { splitTelegramHtml } from "../../../src/channels/telegram/telegram-split.js";

// ---- The oracle: splitTelegramHtml as it was, one atom per tag, entity or code point. ----

type Atom =
  | { readonly kind: "open"; readonly raw: string; readonly name: string }
  | { readonly kind: "close"; readonly raw: string; readonly name: string }
  | { readonly kind: "char"; readonly raw: string; readonly text: string };

const ATOM = /<(\/?)([a-zA-Z][\w-]*)[^>]*>|&(?:#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);|[\s\S]/gu;

function atomize(html: string): Atom[] {
  const atoms: Atom[] = [];
  for (const match of html.matchAll(ATOM)) {
    const raw = match[0];
    const name = match[2];
    if (name !== undefined) {
      atoms.push({ kind: match[1] === "/" ? "close" : "open", raw, name: name.toLowerCase() });
    } else {
      atoms.push({
        kind: "char",
        raw,
        text: raw.length > 1 && raw.startsWith("&") ? decodeEntities(raw) : raw,
      });
    }
  }
  return atoms;
}

type OpenTag = { readonly raw: string; readonly name: string };

function advanceStack(stack: readonly OpenTag[], atom: Atom): OpenTag[] {
  if (atom.kind === "open") return [...stack, { raw: atom.raw, name: atom.name }];
  if (atom.kind === "close") {
    const index = stack.map((tag) => tag.name).lastIndexOf(atom.name);
    return index === -1 ? [...stack] : stack.slice(0, index);
  }
  return stack as OpenTag[];
}

const PARAGRAPH = 0;
const LINE = 1;
const SPACE = 2;

function depths(atoms: readonly Atom[]): Int32Array {
  const depth = new Int32Array(atoms.length);
  let current = 0;
  atoms.forEach((atom, index) => {
    depth[index] = current;
    if (atom.kind === "open") current += 1;
    else if (atom.kind === "close") current -= 1;
  });
  return depth;
}

function splitUnits(atoms: readonly Atom[]): SplitUnits {
  const depth = depths(atoms);
  return {
    length: atoms.length,
    size: (index) => {
      const atom = atoms[index]!;
      return atom.kind === "char" ? atom.text.length : 0;
    },
    rank: (index) => {
      const atom = atoms[index]!;
      if (atom.kind !== "char") return ANYWHERE;
      if (atom.text === "\n") {
        const next = atoms[index + 1];
        return depth[index] === 0 && next?.kind === "char" && next.text === "\n" ? PARAGRAPH : LINE;
      }
      return isBlank(atom) ? SPACE : ANYWHERE;
    },
  };
}

function isBlank(atom: Atom): boolean {
  return atom.kind === "char" && /^\s$/.test(atom.text);
}

const EMPTY_PAIR = /<([a-zA-Z][\w-]*)(?:\s[^>]*)?><\/\1>/g;

function dropEmptyPairs(html: string): string {
  let previous = "";
  let current = html;
  while (current !== previous) {
    previous = current;
    current = current.replace(EMPTY_PAIR, "");
  }
  return current;
}

function oracleSplit(html: string, limit = 4096): string[] {
  if (html.length <= limit && !html.includes("<")) {
    const chunk = html.trim();
    return chunk === "" ? [] : [chunk];
  }
  const atoms = atomize(html);
  const ranges = splitRanges(splitUnits(atoms), {
    room: () => ({ whole: limit, cut: limit }),
    minFill: (room) => room / 2,
    resume: (cut) => {
      let start = cut;
      while (start < atoms.length && isBlank(atoms[start]!)) start++;
      return start;
    },
  });
  const chunks: string[] = [];
  let stack: OpenTag[] = [];
  for (const { start, end } of ranges) {
    const opened = stack;
    let body = "";
    for (let index = start; index < end; index++) {
      body += atoms[index]!.raw;
      stack = advanceStack(stack, atoms[index]!);
    }
    const closing = [...stack]
      .reverse()
      .map((tag) => `</${tag.name}>`)
      .join("");
    const chunk = dropEmptyPairs(opened.map((tag) => tag.raw).join("") + body + closing).trim();
    if (chunk !== "") chunks.push(chunk);
  }
  return chunks;
}

// ---- Random Telegram HTML. ----

const text = fc
  .stringMatching(/^[a-z &<>"'\n]{1,30}$/)
  .map((raw) =>
    raw.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"),
  );
const odd = fc.constantFrom(
  " ",
  "\n",
  "\n\n",
  "\n\n\n",
  "\t",
  "\r\n",
  "\u00a0",
  "\u3000",
  "\u2028",
  "\ufeff",
  "😀",
  "😀😀",
  "é",
  "\ud800",
  "\udc00",
  "\ud83d<b>",
  "&#39;",
  "&#10;",
  "&#xa;",
  "&#32;",
  "&nbsp;",
  "&NewLine;",
  "&#128512;",
  "&#xD800;",
  "&foo;",
  "&#0;",
  "&",
  "&amp",
  "&#X41;",
  "<",
  "< b>",
  "<3",
  "</b>",
  "</i>",
  "<br>",
  "x".repeat(50),
);
const inline = fc.oneof({ weight: 3, arbitrary: text }, { weight: 2, arbitrary: odd });
const node: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    inline,
    fc
      .tuple(
        fc.constantFrom("b", "i", "s", "u", "code", "blockquote", "tg-spoiler", "B"),
        fc.array(tie("node"), { maxLength: 4 }),
      )
      .map(([tag, children]) => `<${tag}>${children.join("")}</${tag.toLowerCase()}>`),
    fc
      .array(tie("node"), { maxLength: 3 })
      .map((children) => `<a href="https://x.test/?a=1&amp;b=2">${children.join("")}</a>`),
    fc
      .array(inline, { maxLength: 6 })
      .map((children) => `<pre><code class="language-ts">${children.join("")}</code></pre>`),
  ),
})).node;
const document = fc.array(node, { maxLength: 30 }).map((parts) => parts.join(""));

describe("splitTelegramHtml matches its one-unit-per-character oracle", () => {
  it("property: random Telegram HTML, any small limit", () => {
    fc.assert(
      fc.property(document, fc.integer({ min: -1, max: 130 }), (html, limit) => {
        expect(splitTelegramHtml(html, limit)).toEqual(oracleSplit(html, limit));
      }),
      { numRuns: 3000 },
    );
  });

  it("property: whitespace-heavy and tag-heavy text at tiny limits", () => {
    const dense = fc
      .array(
        fc.constantFrom(
          "a",
          " ",
          "\n",
          "\n\n",
          "<b>",
          "</b>",
          "<i>",
          "</i>",
          "&#10;",
          "&nbsp;",
          "😀",
          "&amp;",
        ),
        {
          maxLength: 80,
        },
      )
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(dense, fc.integer({ min: 1, max: 12 }), (html, limit) => {
        expect(splitTelegramHtml(html, limit)).toEqual(oracleSplit(html, limit));
      }),
      { numRuns: 3000 },
    );
  });

  it("property: markdown rendered by markdownToTelegramHtml, split at small limits and at 4096", () => {
    const block = fc.oneof(
      fc.stringMatching(/^[a-z *_`~|<>&\n]{1,300}$/),
      fc.stringMatching(/^[a-z <>&\n]{1,600}$/).map((code) => `\`\`\`js\n${code}\n\`\`\``),
      fc.stringMatching(/^[a-z ]{1,80}$/).map((item) => `- ${item}\n- **${item}**\n  1. _${item}_`),
      fc.stringMatching(/^[a-z \n]{1,200}$/).map((quote) => `> ${quote.replace(/\n/g, "\n> ")}`),
      fc
        .stringMatching(/^[a-z]{1,20}$/)
        .map((label) => `[${label}](https://x.test/${label}?q=1&r=2) 😀 ||${label}||`),
    );
    fc.assert(
      fc.property(
        fc.array(block, { minLength: 1, maxLength: 16 }),
        fc.constantFrom(7, 40, 64, 200, 4096),
        (blocks, limit) => {
          const html = markdownToTelegramHtml(blocks.join("\n\n"));
          expect(splitTelegramHtml(html, limit)).toEqual(oracleSplit(html, limit));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a long rendered answer splits the same at the Telegram limit", () => {
    const markdown = Array.from(
      { length: 400 },
      (_, i) =>
        `Paragraph ${i}: **bold ${i}** and \`code\` & <tags> 😀 ${"word ".repeat(i % 40)}\n\n\`\`\`py\nline ${i}\n${"x".repeat(i * 7)}\n\`\`\``,
    ).join("\n\n");
    const html = markdownToTelegramHtml(markdown);
    expect(splitTelegramHtml(html)).toEqual(oracleSplit(html));
    const unbroken = `<b>${"😀".repeat(5000)}</b>${"&amp;".repeat(5000)}${"a".repeat(9000)}`;
    expect(splitTelegramHtml(unbroken)).toEqual(oracleSplit(unbroken));
  });
});
