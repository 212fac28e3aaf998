/**
 * The JPEG walk's cost past the head: it may walk up to 20 MB of segments (jpeg-size.ts), so what
 * it does per segment must stay a jump, not a loop over the segment's contents.
 */
import { describe, expect, it } from "vitest";
import { jpegSize } from "../../src/media/jpeg-size.js";

/** An APP1 EXIF segment of 64 KB whose IFD0 says it holds 65,535 entries (about 5,400 fit). */
function exifWithEntries(): Buffer {
  const segment = Buffer.alloc(4 + 65_533);
  segment.writeUInt16BE(0xffe1, 0);
  segment.writeUInt16BE(65_535, 2);
  segment.write("Exif\0\0MM", 4, "latin1");
  segment.writeUInt16BE(42, 12);
  segment.writeUInt32BE(8, 14);
  segment.writeUInt16BE(65_535, 18);
  return segment;
}

describe("jpegSize on 20 MB of segments", () => {
  it("reads the entries of one EXIF segment, not of every one (320 took 34 ms a walk)", () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xd8]), ...Array.from({ length: 320 }, exifWithEntries)]);
    const started = performance.now();
    for (let n = 0; n < 10; n++) expect(jpegSize(bytes)).toBeUndefined();
    // Ten walks took 340 ms reading every segment's entries; about 20 ms reading the first only.
    expect(performance.now() - started).toBeLessThan(150);
  });
});
