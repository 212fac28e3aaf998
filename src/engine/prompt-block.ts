/**
 * Tagged blocks in a prompt: text from somewhere else (the workspace's AGENTS.md, a model-written
 * summary) wrapped in `<tag>` … `</tag>` so the model can tell where it starts and ends. The text
 * cannot end its block early: any opening or closing tag of the same name inside it is defused,
 * so nothing it says can pose as the instructions around it.
 */

/** `text` wrapped in `<tag>` lines, with any `<tag>` / `</tag>` inside it defused. */
export function promptBlock(tag: string, text: string): string {
  // `\s*(?:/\s*)?`, not `\s*/?\s*`: two adjacent \s* split a long whitespace run every way there
  // is before the tag name fails, quadratic in a model-written summary or AGENTS.md.
  const inner = new RegExp(`<(\\s*(?:/\\s*)?${tag}\\b)`, "gi");
  return `<${tag}>\n${text.replace(inner, "&lt;$1")}\n</${tag}>`;
}
