/**
 * A JPEG's pixel size (and EXIF orientation) from the start of the file, by walking its marker
 * segments in order: each segment says how long it is, so the next marker must sit right after it.
 * The walk gives up as soon as one does not — a file with a broken chain is not an image a model
 * can be shown — instead of searching on for a marker byte by byte, as `image-size` does: there a
 * few kilobytes of "JPEG" (FF D8, then zeros) held the event loop for 150–300 ms per file on a
 * 512 KB head, every chat of the process frozen meanwhile. Each step reads a few bytes and jumps
 * past a whole segment, allocating nothing: real JPEGs' large EXIF, XMP and ICC segments are
 * skipped whole, and no head costs more than a walk over its bytes.
 *
 * Only the frame headers of the codings vision endpoints decode (baseline, extended sequential,
 * progressive: SOF0–SOF2) give a size, as with `image-size`; a lossless, hierarchical or
 * arithmetic-coded frame, or the scan starting before any frame header, ends the walk without one.
 *
 * The size is the one a decoder allocates, so the walk goes on to the start of the scan: Pillow
 * (what self-hosted vision servers decode with) reads every segment up to it and takes the size of
 * the last frame header it meets (and of a DHP segment), then allocates that before decoding. A
 * JPEG stating 10×10 in its first frame header and 13000×13000 in a second passed as 10×10 when
 * the walk stopped at the first. So a second frame header, a DHP, and the markers Pillow reads no
 * length after while this walk would skip one (JPG, JPGn: a frame header could hide in what one
 * reader skips and the other reads) end the walk without a size; and bytes that end before the scan
 * are said to (`cut`), so the caller reads on — unless the file ends there too: no decoder reads a
 * segment past its end. As the walk may go past the head (up to 20 MB), it takes at most
 * MAX_SEGMENTS segments: 20 MB of empty comment segments held the event loop 107 ms a probe.
 */

/**
 * What the start of a JPEG says: its stored size (when a frame header was read), the EXIF
 * orientation when it has one, and whether the bytes ended before the scan (`cut`): a frame header
 * after them, which a decoder would read, was not seen.
 */
export interface JpegSize {
  readonly width?: number;
  readonly height?: number;
  readonly orientation?: number;
  readonly cut: boolean;
}

/** Whether `head` starts as a JPEG does (the start-of-image marker). */
export function isJpeg(head: Uint8Array): boolean {
  return head[0] === 0xff && head[1] === 0xd8;
}

const SOF_SIZED = new Set([0xc0, 0xc1, 0xc2]);
/**
 * The other frame headers (lossless, hierarchical, arithmetic-coded) and DHP, which Pillow sizes
 * as one: no size a model can use. With them, the markers after which Pillow reads no length (JPG,
 * JPG0–JPG13) while a walk by lengths would skip a segment: the two would read different markers.
 */
const UNWALKABLE = new Set([
  0xc3, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf, 0xde, 0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5,
  0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd,
]);
/** The most segments walked before the scan (real JPEGs have a few dozen); past it, no size. */
const MAX_SEGMENTS = 1_000;
const SOS = 0xda;
const EOI = 0xd9;
/** Markers that stand alone, with no length after them (TEM, RST0–7, a second SOI). */
const STANDALONE = new Set([0x01, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8]);
const APP1 = 0xe1;
const EXIF_ID = [0x45, 0x78, 0x69, 0x66, 0, 0]; // "Exif\0\0"
const ORIENTATION_TAG = 274;

function u16(bytes: Uint8Array, at: number, bigEndian = true): number {
  return bigEndian ? (bytes[at]! << 8) | bytes[at + 1]! : bytes[at]! | (bytes[at + 1]! << 8);
}

function u32(bytes: Uint8Array, at: number, bigEndian: boolean): number {
  return bigEndian
    ? bytes[at]! * 0x1000000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!)
    : bytes[at + 3]! * 0x1000000 + ((bytes[at + 2]! << 16) | (bytes[at + 1]! << 8) | bytes[at]!);
}

/** Whether an APP1 segment's data (after its length) is EXIF. */
function isExif(data: Uint8Array): boolean {
  return data.length >= 14 && EXIF_ID.every((byte, i) => data[i] === byte);
}

/**
 * The orientation an APP1 segment's EXIF data gives (`data`: the segment after its length), or
 * undefined when it is not EXIF or names none. Every read is checked against the segment's end.
 */
function exifOrientation(data: Uint8Array): number | undefined {
  if (!isExif(data)) return undefined;
  const tiff = data.subarray(6);
  const order = u16(tiff, 0);
  if (order !== 0x4d4d && order !== 0x4949) return undefined;
  const big = order === 0x4d4d;
  const ifd = u32(tiff, 4, big);
  if (ifd + 2 > tiff.length) return undefined;
  const entries = u16(tiff, ifd, big);
  for (let n = 0; n < entries; n++) {
    const entry = ifd + 2 + n * 12;
    if (entry + 12 > tiff.length) return undefined;
    if (u16(tiff, entry, big) !== ORIENTATION_TAG) continue;
    // SHORT (type 3), one value, held in the entry itself.
    if (u16(tiff, entry + 2, big) !== 3 || u32(tiff, entry + 4, big) !== 1) return undefined;
    return u16(tiff, entry + 8, big);
  }
  return undefined;
}

/**
 * The size the one frame header before the scan gives (see the module header), or undefined when
 * `bytes` is no JPEG, its marker chain breaks or ends, it has no usable frame header or more than
 * one, a marker the walk cannot follow as a decoder does comes first, or over MAX_SEGMENTS segments
 * come before the scan. Bytes that end before the
 * scan, the chain whole so far, give what was read with `cut` set, unless the file (`end` bytes
 * long, all of them by default) ends before it too: then a frame header read is its size.
 */
export function jpegSize(bytes: Uint8Array, end = bytes.length): JpegSize | undefined {
  if (!isJpeg(bytes)) return undefined;
  let orientation: number | undefined;
  /**
   * Whether an EXIF segment was read: only the first is, as a walk past the head meets up to
   * hundreds of them, each a loop over its entries (320 of them took 34 ms); the orientation turns
   * the size, and changes neither its longest side nor its pixels.
   */
  let exifRead = false;
  let frame: { width: number; height: number } | undefined;
  const found = (cut: boolean): JpegSize => ({
    ...frame,
    ...(orientation !== undefined ? { orientation } : {}),
    cut,
  });
  // The bytes end before byte `need`: so does the file, or more of it is to be read.
  const short = (need: number) => (need > end ? frame && found(false) : found(true));
  let at = 2;
  for (let segments = 0; segments <= MAX_SEGMENTS; segments++) {
    if (at >= bytes.length) return short(at + 1);
    if (bytes[at] !== 0xff) return undefined;
    // Fill bytes (FF) may pad a marker.
    while (bytes[at + 1] === 0xff) at++;
    if (at + 2 > bytes.length) return short(at + 2);
    const marker = bytes[at + 1]!;
    if (marker === SOS) return frame && found(false);
    if (STANDALONE.has(marker)) {
      at += 2;
      continue;
    }
    if (UNWALKABLE.has(marker) || marker === EOI || marker === 0x00) return undefined;
    if (at + 4 > bytes.length) return short(at + 4);
    const length = u16(bytes, at + 2);
    if (length < 2) return undefined;
    if (SOF_SIZED.has(marker)) {
      // A second frame header: a decoder takes one, Pillow the last; neither is to be trusted.
      if (frame || length < 7) return undefined;
      if (at + 9 > bytes.length) return short(at + 9);
      frame = { height: u16(bytes, at + 5), width: u16(bytes, at + 7) };
    }
    if (marker === APP1 && !exifRead) {
      const data = bytes.subarray(at + 4, Math.min(at + 2 + length, bytes.length));
      exifRead = isExif(data);
      orientation = exifOrientation(data);
    }
    at += 2 + length;
  }
  return undefined;
}
