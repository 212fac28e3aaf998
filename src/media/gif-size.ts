/**
 * A GIF's pixel extent, by walking its blocks in order. The logical screen descriptor (the size
 * `image-size` reads) is not what a decoder allocates: each frame's image descriptor places a
 * rectangle of its own, and Pillow (what self-hosted vision servers decode with) grows the image
 * to the frames' extent, so a 1×1 screen may carry a frame of 11000×11000 pixels in a few tens of
 * kilobytes of LZW data. The extent is the largest of the screen and every frame's left + width
 * and top + height.
 *
 * Every block says how long it is (a colour table by its size bits, extension and image data as
 * length-prefixed sub-blocks), so the walk jumps from one to the next, as jpeg-size.ts does for
 * JPEG markers, and gives up as soon as the chain breaks or runs past the bytes it was given: a
 * frame not reached could be any size, so only a walk that reaches the trailer gives a size.
 * Each step reads a byte or a few and allocates nothing: no GIF costs more than a walk over it.
 */

/** The extent of every frame of a GIF and of its logical screen. */
export interface GifSize {
  readonly width: number;
  readonly height: number;
}

const EXTENSION = 0x21;
const IMAGE_DESCRIPTOR = 0x2c;
const TRAILER = 0x3b;
/** Bytes of the header ("GIF89a") and the logical screen descriptor. */
const SCREEN_END = 13;
/** Bytes of an image descriptor, its separator included. */
const DESCRIPTOR_BYTES = 10;

/** Whether `head` starts as a GIF does ("GIF87a" or "GIF89a"). */
export function isGif(head: Uint8Array): boolean {
  const signature = Buffer.from(head.subarray(0, 6)).toString("latin1");
  return signature === "GIF87a" || signature === "GIF89a";
}

function u16le(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8);
}

/** Bytes of the colour table a packed field announces (none when its top bit is clear). */
function colourTableBytes(packed: number): number {
  return packed & 0x80 ? 3 * (2 << (packed & 0x07)) : 0;
}

/** Where the sub-blocks starting at `at` end (after their zero terminator), or undefined past `bytes`. */
function skipSubBlocks(bytes: Uint8Array, at: number): number | undefined {
  let next = at;
  for (;;) {
    if (next >= bytes.length) return undefined;
    const size = bytes[next]!;
    next += 1;
    if (size === 0) return next;
    next += size;
  }
}

/**
 * The extent of the GIF in `bytes` (screen and every frame), or undefined when it is not a GIF
 * or its block chain breaks or does not reach the trailer within `bytes` (see the module header).
 */
export function gifSize(bytes: Uint8Array): GifSize | undefined {
  if (!isGif(bytes) || bytes.length < SCREEN_END) return undefined;
  let width = u16le(bytes, 6);
  let height = u16le(bytes, 8);
  let at: number | undefined = SCREEN_END + colourTableBytes(bytes[10]!);
  for (;;) {
    if (at >= bytes.length) return undefined;
    switch (bytes[at]) {
      case TRAILER:
        return { width, height };
      case EXTENSION:
        // The introducer and the label, then the extension's sub-blocks.
        at = skipSubBlocks(bytes, at + 2);
        break;
      case IMAGE_DESCRIPTOR: {
        if (at + DESCRIPTOR_BYTES > bytes.length) return undefined;
        width = Math.max(width, u16le(bytes, at + 1) + u16le(bytes, at + 5));
        height = Math.max(height, u16le(bytes, at + 3) + u16le(bytes, at + 7));
        // The local colour table, the LZW minimum code size, then the image data's sub-blocks.
        at = skipSubBlocks(bytes, at + DESCRIPTOR_BYTES + colourTableBytes(bytes[at + 9]!) + 1);
        break;
      }
      default:
        return undefined;
    }
    if (at === undefined) return undefined;
  }
}
