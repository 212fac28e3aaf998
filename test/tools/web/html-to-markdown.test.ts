/**
 * Fetched pages are converted in worker slots of their own: PDFs holding every slot of the PDF
 * reader (a slow document can hold one for its whole time budget) never hold up a web_fetch.
 */
import { describe, expect, it } from "vitest";
import { PDF_READERS } from "../../../src/attachments/pdf-text.js";
import { htmlToMarkdown } from "../../../src/tools/web/html-to-markdown.js";
import { holdAllSlots } from "../../support/held-worker-slots.js";

describe("htmlToMarkdown's worker slots", () => {
  it("converts a page while every slot of the PDF reader is held", async () => {
    const held = await holdAllSlots(PDF_READERS);
    try {
      const page = await htmlToMarkdown("<title>Hi</title><h1>Hello</h1><p>world</p>", { waitMs: 4_000 });
      expect(page).toEqual({ title: "Hi", markdown: "# Hello\n\nworld" });
    } finally {
      await held.release();
    }
  });
});
