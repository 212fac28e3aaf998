import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { probeImageFile } from "../../src/media/image-probe.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "image-size-formats-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("probeImageFile on formats no model is shown", () => {
  it("does not read an SVG-looking head with image-size's SVG reader (160 ms a file, event loop held)", async () => {
    // 1 KB of `<svg '` openings, a tag that ends within it, then half a megabyte with no quote
    // closing: image-size's SVG reader matched its pattern from every opening to the end of the
    // head. Saved as a PNG: the bytes decide, the name does not.
    let text = `${"<svg '".repeat(160)}<svg "<svg a>`;
    text += "x".repeat(512 * 1024 - text.length);
    const bytes = Buffer.from(text);
    const absolute = path.join(dir, "x.png");
    await writeFile(absolute, bytes);
    const file = { path: "x.png", name: "x.png", bytes: bytes.length };
    for (let n = 0; n < 10; n++) expect(await probeImageFile(absolute, file)).toBeUndefined();
    // Ten files of one message held the event loop 1.6 s: image-size is now left reading PNG and
    // WebP only, so its SVG reader never sees a head.
    const { imageSize } = await import("image-size");
    expect(() => imageSize(Buffer.from('<svg width="10" height="10"></svg>'))).toThrow(
      "disabled file type: svg",
    );
  });
});
