/**
 * The JPEG walk past the head: it may walk up to 20 MB of segments (jpeg-size.ts), so it reads
 * the entries of the first EXIF segment only — 320 EXIF segments each claiming 65,535 entries held
 * the event loop 34 ms a walk when every one was read until one named an orientation.
 */
import { describe, expect, it } from "vitest";
import { jpegSize } from "../../src/media/jpeg-size.js";

function segment(marker: number, data: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
}

/** An APP1 EXIF segment (big-endian TIFF) whose IFD0 holds one entry: `tag`, a SHORT of `value`. */
function exifWithEntry(tag: number, value: number): Buffer {
  const tiff = Buffer.alloc(8 + 2 + 12 + 4);
  tiff.write("MM", 0, "latin1");
  tiff.writeUInt16BE(42, 2);
  tiff.writeUInt32BE(8, 4);
  tiff.writeUInt16BE(1, 8);
  tiff.writeUInt16BE(tag, 10);
  tiff.writeUInt16BE(3, 12);
  tiff.writeUInt32BE(1, 14);
  tiff.writeUInt16BE(value, 18);
  return segment(0xe1, Buffer.concat([Buffer.from("Exif\0\0", "latin1"), tiff]));
}

/** A baseline frame header (SOF0) of `width` × `height`, one component. */
function frameHeader(width: number, height: number): Buffer {
  const data = Buffer.alloc(9);
  data[0] = 8;
  data.writeUInt16BE(height, 1);
  data.writeUInt16BE(width, 3);
  data[5] = 1;
  return segment(0xc0, data);
}

const SOI = Buffer.from([0xff, 0xd8]);
const SCAN = segment(0xda, Buffer.alloc(6));

describe("jpegSize and EXIF segments", () => {
  it("takes the orientation of the first EXIF segment", () => {
    const bytes = Buffer.concat([SOI, exifWithEntry(274, 6), frameHeader(10, 20), SCAN]);
    expect(jpegSize(bytes)).toEqual({ width: 10, height: 20, orientation: 6, cut: false });
  });

  it("reads no EXIF segment after the first, even when the first names no orientation", () => {
    // 0x0100 is ImageWidth: an EXIF segment without the orientation tag.
    const bytes = Buffer.concat([
      SOI,
      exifWithEntry(0x0100, 5),
      exifWithEntry(274, 6),
      frameHeader(10, 20),
      SCAN,
    ]);
    expect(jpegSize(bytes)).toEqual({ width: 10, height: 20, cut: false });
  });
});
