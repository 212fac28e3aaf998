import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
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

  it("takes a PNG's size from its one IHDR before its data, as a decoder does: a second one is refused", async () => {
    // Pillow reads every chunk up to the image data and decodes the last IHDR's size: 10×1, then
    // 13000×13000, passed as 10×1 (a 480 KB file of zeros behind them decodes to 169 megapixels).
    // An empty IDAT chunk: length 0, its type, a CRC.
    const idat = Buffer.from("000000004944415400000000", "hex");
    const second = pngHeader(13_000, 13_000).subarray(8);
    expect(await probe(Buffer.concat([pngHeader(10, 1), second, idat]))).toBeUndefined();
    // One IHDR, then its data: sized by it; anything after the data is no header a decoder reads.
    expect(await probe(Buffer.concat([pngHeader(10, 1), idat, second]))).toMatchObject({
      usable: true,
      image: { width: 10, height: 1 },
    });
    // An IHDR that is not the first chunk is not a PNG a model is shown.
    expect(await probe(Buffer.concat([pngHeader(10, 1).subarray(0, 8), idat, second]))).toBeUndefined();
  });

  it("answers nothing for what is not a viewable image", async () => {
    expect(await probe(Buffer.from("just text\n"))).toBeUndefined();
  });
});

/**
 * Real JPEGs: python-16x16.jpg (CPython's test data: JFIF, baseline) and
 * stripe-493x58-progressive.jpg (Node.js's documentation: progressive).
 */
const FIXTURES = path.join(import.meta.dirname, "../fixtures/attachments");
const jpeg = (name: string) => readFile(path.join(FIXTURES, name));

/** A marker segment: FF, the marker, its length (counting itself) and `data`. */
function segment(marker: number, data: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
}

/** An APP1 EXIF segment (big-endian TIFF) whose IFD0 holds the orientation tag (274) alone. */
function exifOrientation(orientation: number): Buffer {
  const tiff = Buffer.alloc(8 + 2 + 12 + 4);
  tiff.write("MM", 0, "latin1");
  tiff.writeUInt16BE(42, 2);
  tiff.writeUInt32BE(8, 4);
  tiff.writeUInt16BE(1, 8);
  tiff.writeUInt16BE(274, 10);
  tiff.writeUInt16BE(3, 12);
  tiff.writeUInt32BE(1, 14);
  tiff.writeUInt16BE(orientation, 18);
  return segment(0xe1, Buffer.concat([Buffer.from("Exif\0\0", "latin1"), tiff]));
}

/** `file` (a JPEG) with `segments` put right after its start-of-image marker. */
function withSegments(file: Buffer, segments: readonly Buffer[]): Buffer {
  return Buffer.concat([file.subarray(0, 2), ...segments, file.subarray(2)]);
}

async function probeJpeg(bytes: Buffer) {
  const absolute = path.join(dir, "x.jpg");
  await writeFile(absolute, bytes);
  return probeImageFile(absolute, { path: "x.jpg", name: "x.jpg", bytes: bytes.length });
}

describe("probeImageFile on JPEGs", () => {
  it("sizes real baseline and progressive JPEGs", async () => {
    expect(await probeJpeg(await jpeg("python-16x16.jpg"))).toMatchObject({
      usable: true,
      image: { mediaType: "image/jpeg", width: 16, height: 16 },
    });
    expect(await probeJpeg(await jpeg("stripe-493x58-progressive.jpg"))).toMatchObject({
      usable: true,
      image: { mediaType: "image/jpeg", width: 493, height: 58 },
    });
  });

  it("skips large EXIF, XMP and ICC segments whole, and turns the size by the EXIF orientation", async () => {
    const stripe = await jpeg("stripe-493x58-progressive.jpg");
    const big = withSegments(stripe, [
      exifOrientation(6),
      segment(
        0xe1,
        Buffer.concat([Buffer.from("http://ns.adobe.com/xap/1.0/\0"), Buffer.alloc(60_000, 0x20)]),
      ),
      ...Array.from({ length: 5 }, () => segment(0xe2, Buffer.alloc(65_533, 0xff))),
      segment(0xed, Buffer.alloc(40_000, 0xd8)),
    ]);
    expect(big.length).toBeGreaterThan(400_000);
    // Orientation 6 (turned 90°): shown 58 wide, 493 high.
    expect(await probeJpeg(big)).toMatchObject({
      usable: true,
      image: { mediaType: "image/jpeg", width: 58, height: 493 },
    });
  });

  it("gives up where the marker chain breaks instead of searching on byte by byte for a frame header", async () => {
    const real = await jpeg("python-16x16.jpg");
    // After the JFIF segment (20 bytes in), half a megabyte of zeros, then two bytes that read as
    // a length leading to the rest of the file's segments: a search byte by byte (image-size's)
    // walks through the zeros, picks the chain up again and finds the frame header.
    const broken = Buffer.concat([
      real.subarray(0, 20),
      Buffer.alloc(500_000),
      Buffer.from([0x00, 0x02]),
      real.subarray(20),
    ]);
    expect(await probeJpeg(broken)).toBeUndefined();
    // Nothing but the start marker and zeros: given up at the first segment.
    expect(
      await probeJpeg(Buffer.concat([Buffer.from("ffd8ffe0", "hex"), Buffer.alloc(512 * 1024)])),
    ).toBeUndefined();
  });

  it("takes the size a decoder allocates: a second frame header, a DHP, or one hidden in a JPG segment is refused", async () => {
    const real = await jpeg("python-16x16.jpg");
    const sof = real.indexOf(Buffer.from([0xff, 0xc0]));
    const frame = real.subarray(sof, sof + 2 + real.readUInt16BE(sof + 2));
    // The same frame header stating 13000×13000: Pillow reads every segment up to the scan and
    // takes the last frame header's size (169 megapixels allocated), the walk stopped at the first.
    const huge = Buffer.from(frame);
    huge.writeUInt16BE(13_000, 5);
    huge.writeUInt16BE(13_000, 7);
    const insert = (extra: Buffer, at = sof + frame.length) =>
      Buffer.concat([real.subarray(0, at), extra, real.subarray(at)]);
    expect(await probeJpeg(insert(huge))).toBeUndefined();
    // Pillow sizes a DHP segment as a frame header.
    expect(
      await probeJpeg(insert(Buffer.concat([Buffer.from([0xff, 0xde]), huge.subarray(2)]))),
    ).toBeUndefined();
    // Pillow reads no length after JPG (C8) or JPG7 (F7) and finds the frame header in what a walk
    // by lengths skips.
    expect(await probeJpeg(insert(segment(0xc8, huge)))).toBeUndefined();
    expect(await probeJpeg(insert(segment(0xf7, huge)))).toBeUndefined();
    // Real segments around the one frame header are walked to the scan as before.
    expect(await probeJpeg(insert(segment(0xfe, Buffer.from("a comment"))))).toMatchObject({
      usable: true,
      image: { width: 16, height: 16 },
    });
  });

  it("reads on past the head when a JPEG's segments do, to the scan", async () => {
    const real = await jpeg("python-16x16.jpg");
    const sof = real.indexOf(Buffer.from([0xff, 0xc0]));
    const end = sof + 2 + real.readUInt16BE(sof + 2);
    const huge = Buffer.from(real.subarray(sof, end));
    huge.writeUInt16BE(13_000, 5);
    huge.writeUInt16BE(13_000, 7);
    // Ten ICC-sized segments (640 KB) after the real frame header put a second one past the head.
    const padding = Array.from({ length: 10 }, () => segment(0xe2, Buffer.alloc(65_533, 0x20)));
    const hidden = Buffer.concat([real.subarray(0, end), ...padding, huge, real.subarray(end)]);
    expect(hidden.indexOf(huge)).toBeGreaterThan(512 * 1024);
    expect(await probeJpeg(hidden)).toBeUndefined();
    // The same segments before a JPEG's only frame header: sized once the scan is reached.
    expect(await probeJpeg(withSegments(real, padding))).toMatchObject({
      usable: true,
      image: { width: 16, height: 16 },
    });
  });

  it("walks at most 1,000 segments before the scan: a file of tiny ones past that is refused unwalked", async () => {
    const real = await jpeg("python-16x16.jpg");
    const comments = (count: number) => Array.from({ length: count }, () => segment(0xfe, Buffer.alloc(0)));
    expect(await probeJpeg(withSegments(real, comments(900)))).toMatchObject({ usable: true });
    expect(await probeJpeg(withSegments(real, comments(1_000)))).toBeUndefined();
  });
});
