/**
 * A PNG's pixel size, by walking its chunks in order up to its image data. The size is the one a
 * decoder allocates, and Pillow (what self-hosted vision servers decode with) reads every chunk up
 * to the first IDAT (or fdAT, or IEND) and takes the size of the last IHDR it meets, then allocates
 * that before decoding: a PNG with an IHDR of 10×1 and a second of 13000×13000, 480 KB of zeros
 * compressed behind them, passed the pixel budget as 10×1 (`image-size` reads the first IHDR only)
 * and decoded to 169 megapixels. So the IHDR must be the first chunk (after Apple's CgBI, which
 * `image-size` allowed) and the only one before the image data.
 *
 * Every chunk says how long it is, so the walk jumps from one to the next, as jpeg-size.ts does for
 * JPEG segments, reading a few bytes a step, and at most MAX_CHUNKS chunks (the walk may go past
 * the head, up to 20 MB: empty chunks all the way held the event loop 62 ms a probe). Bytes that end before the image
 * data are said to (`cut`): where the file goes on, the caller reads on; where it ends too (a chunk
 * running past its end), no decoder reads a chunk after them.
 */

/** What the start of a PNG says: its IHDR's size, and whether the bytes ended before its image data. */
export interface PngSize {
  readonly width: number;
  readonly height: number;
  readonly cut: boolean;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Bytes of a chunk around its data: length and type before, CRC after. */
const CHUNK_FRAME = 12;
/** The chunks at which Pillow stops reading headers. */
const DATA_CHUNKS = new Set(["IDAT", "fdAT", "IEND"]);
/** The most chunks walked before the image data (real PNGs have a few, or a few dozen); past it, no size. */
const MAX_CHUNKS = 1_000;

/** Whether `head` starts as a PNG does (its signature). */
export function isPng(head: Uint8Array): boolean {
  return SIGNATURE.every((byte, i) => head[i] === byte);
}

function u32(bytes: Uint8Array, at: number): number {
  return bytes[at]! * 0x1000000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
}

function typeAt(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at + 4]!, bytes[at + 5]!, bytes[at + 6]!, bytes[at + 7]!);
}

/**
 * The size the PNG's one IHDR gives (see the module header), or undefined when `bytes` is no PNG,
 * its first chunk (after a CgBI) is not an IHDR of 13 bytes or more, or another IHDR comes before
 * the image data, or over MAX_CHUNKS chunks come before it. `end`: how long the file is (all of `bytes` by default), to tell bytes that end
 * before the image data (`cut`) from a file that does.
 */
export function pngSize(bytes: Uint8Array, end = bytes.length): PngSize | undefined {
  if (!isPng(bytes)) return undefined;
  let at = SIGNATURE.length;
  if (at + 8 <= bytes.length && typeAt(bytes, at) === "CgBI") at += CHUNK_FRAME + u32(bytes, at);
  if (at + 16 > bytes.length || typeAt(bytes, at) !== "IHDR" || u32(bytes, at) < 13) return undefined;
  const size = { width: u32(bytes, at + 8), height: u32(bytes, at + 12) };
  at += CHUNK_FRAME + u32(bytes, at);
  for (let chunks = 0; chunks <= MAX_CHUNKS; chunks++) {
    if (at + 8 > bytes.length) return { ...size, cut: at + 8 <= end };
    const type = typeAt(bytes, at);
    if (DATA_CHUNKS.has(type)) return { ...size, cut: false };
    if (type === "IHDR") return undefined;
    at += CHUNK_FRAME + u32(bytes, at);
  }
  return undefined;
}
