/**
 * A long model answer in markdown of every kind — prose with emphasis, code and links, lists,
 * headings, code blocks with blank lines inside, a `~~~~` fence holding "```" lines, a long
 * paragraph, emoji — so that where a renderer cuts it, it cuts everywhere. Shared by the Slack
 * answer-sections tests and the render benchmark.
 */

const PARAGRAPH = "Some **bold** text, `code` and a [link](https://example.com) with _emphasis_ 😀.\n";

/** One repeat of the answer's mix. */
const UNIT = [
  "# Heading",
  PARAGRAPH.repeat(6),
  "- one\n- two\n  continued",
  "```ts\nconst a = 1;\n\nconst b = 2;\n\n\nfunction c() {\n  return a + b;\n}\n```",
  "1. first\n\n2. second",
  "~~~~\n```\nnot a close\n```\n\nstill code\n~~~~",
  `${"word ".repeat(300)}`,
].join("\n\n");

/** The mix repeated to exactly `chars` characters (cut wherever that falls). */
export function markdownAnswer(chars: number): string {
  return `${UNIT}\n\n`.repeat(Math.ceil(chars / (UNIT.length + 2))).slice(0, chars);
}
