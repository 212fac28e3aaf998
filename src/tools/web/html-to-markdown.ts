/**
 * HTML → readable markdown for web_fetch, with turndown: scripts, styles and other non-content
 * elements are dropped, headings are ATX, code blocks fenced; the page title is returned apart.
 * turndown is imported on the first conversion, so a start never loads it.
 */
import type TurndownService from "turndown";

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

let converter: Promise<TurndownService> | undefined;

/** The one configured turndown instance, created on first use. */
function turndownService(): Promise<TurndownService> {
  converter ??= import("turndown").then(({ default: Turndown }) => {
    const service = new Turndown({
      headingStyle: "atx",
      codeBlockStyle: "fenced",
      bulletListMarker: "-",
      emDelimiter: "_",
    });
    service.remove(NON_CONTENT as TurndownService.Filter);
    return service;
  });
  return converter;
}

/** A page reduced to markdown, with its title when it has one. */
export interface ReadablePage {
  readonly title: string | undefined;
  readonly markdown: string;
}

/** Convert an HTML document or fragment to markdown. */
export async function htmlToMarkdown(html: string): Promise<ReadablePage> {
  const turndown = await turndownService();
  const titleHtml = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const title = titleHtml ? turndown.turndown(titleHtml).replace(/\s+/g, " ").trim() : undefined;
  const markdown = turndown
    .turndown(html)
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { title: title || undefined, markdown };
}
