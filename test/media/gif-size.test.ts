/**
 * A GIF is judged by the extent of its frames, not by its logical screen alone: a decoder (Pillow)
 * grows the image to the frames' extent, so a 1×1 screen with an 11000×11000 frame is a 121
 * megapixel image. The walk skips extension sub-blocks, reads every image descriptor, and refuses
 * a GIF it cannot walk to the trailer.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gifSize } from "../../src/media/gif-size.js";
import { probeImageFile } from "../../src/media/image-probe.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "gif-size-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function probe(bytes: Buffer) {
  const absolute = path.join(dir, "x.gif");
  await writeFile(absolute, bytes);
  return probeImageFile(absolute, { path: "x.gif", name: "x.gif", bytes: bytes.length });
}

/** The classic 1×1 transparent GIF89a: global table, a graphic control extension, one frame. */
const PIXEL = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

/** Header and a logical screen of `width`×`height` with no global colour table. */
function screen(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(13);
  bytes.write("GIF89a", 0, "latin1");
  bytes.writeUInt16LE(width, 6);
  bytes.writeUInt16LE(height, 8);
  return bytes;
}

/** An image descriptor at (left, top), `width`×`height`, a 4-entry local table and a few bytes of data. */
function frame(left: number, top: number, width: number, height: number): Buffer {
  const descriptor = Buffer.alloc(10);
  descriptor[0] = 0x2c;
  descriptor.writeUInt16LE(left, 1);
  descriptor.writeUInt16LE(top, 3);
  descriptor.writeUInt16LE(width, 5);
  descriptor.writeUInt16LE(height, 7);
  descriptor[9] = 0x81;
  return Buffer.concat([descriptor, Buffer.alloc(12), Buffer.from([2, 2, 0x44, 0x01, 0])]);
}

/** A comment extension of `length` bytes, cut into sub-blocks of at most 255. */
function comment(length: number): Buffer {
  const parts: Buffer[] = [Buffer.from([0x21, 0xfe])];
  for (let left = length; left > 0; left -= 255) {
    const size = Math.min(255, left);
    parts.push(Buffer.from([size]), Buffer.alloc(size, 0x61));
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

const TRAILER = Buffer.from([0x3b]);

describe("a GIF's size: the extent of its screen and every frame", () => {
  it("reads a real 1×1 GIF, its extension skipped", async () => {
    expect(gifSize(PIXEL)).toEqual({ width: 1, height: 1 });
    expect(await probe(PIXEL)).toMatchObject({
      usable: true,
      image: { mediaType: "image/gif", width: 1, height: 1 },
    });
  });

  it("refuses a 1×1 screen whose frame is 11000×11000", async () => {
    const bomb = Buffer.concat([screen(1, 1), frame(0, 0, 11_000, 11_000), TRAILER]);
    expect(await probe(bomb)).toEqual({
      usable: false,
      mediaType: "image/gif",
      bytes: bomb.length,
      reason: "it is 11000×11000 pixels, more than 40 megapixels",
    });
  });

  it("counts a frame's offset: left + width and top + height", async () => {
    const placed = Buffer.concat([screen(100, 100), frame(11_990, 50, 20, 10), TRAILER]);
    expect(gifSize(placed)).toEqual({ width: 12_010, height: 100 });
    expect(await probe(placed)).toMatchObject({
      usable: false,
      reason: "it is 12010×100 pixels, more than 12000 on a side",
    });
  });

  it("finds a large frame after a small one and past long extensions, beyond the first 512 KB", async () => {
    const late = Buffer.concat([
      screen(10, 10),
      frame(0, 0, 10, 10),
      comment(600 * 1024),
      frame(0, 0, 9_000, 9_000),
      TRAILER,
    ]);
    expect(await probe(late)).toMatchObject({
      usable: false,
      reason: "it is 9000×9000 pixels, more than 40 megapixels",
    });
    const small = Buffer.concat([
      screen(10, 10),
      comment(1000),
      frame(2, 2, 8, 8),
      frame(0, 0, 10, 10),
      TRAILER,
    ]);
    expect(await probe(small)).toMatchObject({ usable: true, image: { width: 10, height: 10 } });
  });

  it("refuses a GIF whose walk does not reach the trailer", async () => {
    const unfinished = Buffer.concat([screen(10, 10), frame(0, 0, 10, 10)]);
    expect(gifSize(unfinished)).toBeUndefined();
    expect(await probe(unfinished)).toMatchObject({
      usable: false,
      mediaType: "image/gif",
      reason: "its frames cannot all be read to tell how large it is",
    });
    // A block that is none of extension, image or trailer breaks the chain.
    expect(
      gifSize(Buffer.concat([screen(10, 10), Buffer.from([0x00]), frame(0, 0, 9_000, 9_000), TRAILER])),
    ).toBeUndefined();
    // Sub-blocks running past the end.
    expect(gifSize(Buffer.concat([screen(10, 10), Buffer.from([0x21, 0xfe, 200, 1, 2])]))).toBeUndefined();
  });
});
