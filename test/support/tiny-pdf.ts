/**
 * A tiny PDF writer for fixtures and benchmarks: pages of Helvetica text lines, or pages that
 * carry only an image (a "scanned" document with no text layer). The output is a valid PDF 1.4
 * file with a correct cross-reference table, so real readers (pdf.js) open it.
 */

/**
 * One page: text lines, a gray image of the given size with no text at all, or a content stream
 * given already deflated (FlateDecode), for documents that inflate far beyond their size.
 */
export type TinyPage =
  | { readonly kind: "text"; readonly lines: readonly string[] }
  | { readonly kind: "image"; readonly width: number; readonly height: number }
  | { readonly kind: "deflated"; readonly stream: Buffer };

function escapeText(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

function pageStream(page: Exclude<TinyPage, { kind: "deflated" }>): string {
  if (page.kind === "image") return `q 400 0 0 400 100 300 cm /Im1 Do Q`;
  const lines = page.lines.map((line, i) => `1 0 0 1 72 ${720 - i * 16} Tm (${escapeText(line)}) Tj`);
  return `BT /F1 12 Tf ${lines.join(" ")} ET`;
}

function contentObject(page: TinyPage): string | Buffer {
  if (page.kind !== "deflated") {
    const stream = pageStream(page);
    return `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`;
  }
  return Buffer.concat([
    Buffer.from(`<< /Length ${page.stream.length} /Filter /FlateDecode >>\nstream\n`),
    page.stream,
    Buffer.from("\nendstream"),
  ]);
}

/**
 * Build a PDF with these pages. `glyphs` renames the font's glyphs by character code (an
 * /Encoding /Differences), e.g. `{ 98: "u1F600" }` so each "b" reads as 😀.
 */
export function tinyPdf(pages: readonly TinyPage[], glyphs: Readonly<Record<number, string>> = {}): Buffer {
  const objects: (string | Buffer)[] = [];
  const add = (body: string | Buffer): number => objects.push(body);
  const catalog = add("");
  const pagesId = add("");
  const differences = Object.entries(glyphs).map(([code, name]) => `${code} /${name}`);
  const encoding =
    differences.length === 0
      ? ""
      : ` /Encoding << /Type /Encoding /Differences [${differences.join(" ")}] >>`;
  const font = add(`<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica${encoding} >>`);
  const kids: number[] = [];
  for (const page of pages) {
    const content = add(contentObject(page));
    let resources = `<< /Font << /F1 ${font} 0 R >> >>`;
    if (page.kind === "image") {
      const pixels = Buffer.alloc(page.width * page.height, 0x80);
      const image = add(
        Buffer.concat([
          Buffer.from(
            `<< /Type /XObject /Subtype /Image /Width ${page.width} /Height ${page.height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Length ${pixels.length} >>\nstream\n`,
          ),
          pixels,
          Buffer.from("\nendstream"),
        ]),
      );
      resources = `<< /XObject << /Im1 ${image} 0 R >> >>`;
    }
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Resources ${resources} /Contents ${content} 0 R >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesId} 0 R >>`;
  objects[pagesId - 1] =
    `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${kids.length} >>`;
  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n")];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  objects.forEach((body, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`),
      Buffer.from(body),
      Buffer.from("\nendobj\n"),
    ]);
    parts.push(chunk);
    length += chunk.length;
  });
  const xref = [
    "xref",
    `0 ${objects.length + 1}`,
    "0000000000 65535 f ",
    ...offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n `),
    "trailer",
    `<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>`,
    "startxref",
    String(length),
    "%%EOF",
    "",
  ].join("\n");
  parts.push(Buffer.from(xref));
  return Buffer.concat(parts);
}
