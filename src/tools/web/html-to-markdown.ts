/**
 * HTML → readable markdown for web_fetch, with turndown: scripts, styles and other non-content
 * elements are dropped, headings are ATX, code blocks fenced; the page title is returned apart.
 */
import TurndownService from "turndown";

const NON_CONTENT = [
  "head",
  "title",
  "script",
  "style",
  "noscript",
  "iframe",
  "svg",
  "canvas",
  "template",
  "object",
  "embed",
];

const turndown = new TurndownService({
  headingStyle: "atx",
  codeBlockStyle: "fenced",
  bulletListMarker: "-",
  emDelimiter: "_",
});
turndown.remove(NON_CONTENT as TurndownService.Filter);

/** A page reduced to markdown, with its title when it has one. */
export interface ReadablePage {
  readonly title: string | undefined;
  readonly markdown: string;
}

/** Convert an HTML document or fragment to markdown. */
export function htmlToMarkdown(html: string): ReadablePage {
  const titleHtml = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const title = titleHtml ? turndown.turndown(titleHtml).replace(/\s+/g, " ").trim() : undefined;
  const markdown = turndown
    .turndown(html)
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { title: title || undefined, markdown };
}
