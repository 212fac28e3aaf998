import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IMAGE_MAX_SIDE, probeImageFile } from "../../src/media/image-probe.js";
import { pngHeader } from "../support/png-header.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "image-probe-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** The probe's verdict on `bytes` saved as a workspace file. */
async function probe(bytes: Buffer) {
  const absolute = path.join(dir, "x.png");
  await writeFile(absolute, bytes);
  return probeImageFile(absolute, { path: "x.png", name: "x.png", bytes: bytes.length });
}

describe("probeImageFile's verdict at the size limits", () => {
  it("answers a usable image, with its size, up to the limits", async () => {
    expect(await probe(pngHeader(IMAGE_MAX_SIDE, 10))).toEqual({
      usable: true,
      image: {
        kind: "image",
        path: "x.png",
        name: "x.png",
        bytes: 33,
        mediaType: "image/png",
        width: 12_000,
        height: 10,
      },
    });
    // 8000×5000 is exactly 40 megapixels.
    expect(await probe(pngHeader(8_000, 5_000))).toMatchObject({
      usable: true,
      image: { width: 8_000, height: 5_000 },
    });
  });

  it("refuses an image one pixel over a side, with the reason and no size to use", async () => {
    expect(await probe(pngHeader(IMAGE_MAX_SIDE + 1, 10))).toEqual({
      usable: false,
      mediaType: "image/png",
      bytes: 33,
      reason: "it is 12001×10 pixels, more than 12000 on a side",
    });
    expect(await probe(pngHeader(10, IMAGE_MAX_SIDE + 1))).toMatchObject({
      usable: false,
      reason: "it is 10×12001 pixels, more than 12000 on a side",
    });
  });

  it("refuses an image over 40 megapixels though each side is within the limit", async () => {
    expect(await probe(pngHeader(8_000, 5_001))).toEqual({
      usable: false,
      mediaType: "image/png",
      bytes: 33,
      reason: "it is 8000×5001 pixels, more than 40 megapixels",
    });
  });

  it("refuses an image whose header gives no size", async () => {
    expect(await probe(pngHeader(0, 0))).toMatchObject({
      usable: false,
      reason: "its header does not say how large it is",
    });
  });

  it("answers nothing for what is not a viewable image", async () => {
    expect(await probe(Buffer.from("just text\n"))).toBeUndefined();
  });
});
