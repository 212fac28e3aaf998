/**
 * Recognising an image a model can be shown: the bytes decide (not the file name), using the
 * maintained `image-size` reader for the format and pixel dimensions. Only the formats
 * OpenAI-compatible vision endpoints accept (PNG, JPEG, GIF, WebP) count as viewable images.
 * `image-size` is imported on the first probe, so a start never loads it, and it reads WebP
 * alone: it recognises some twenty formats by their first bytes, whatever the file is named, and
 * reading those costs what the reader of each costs — its SVG reader runs a regular expression over
 * the whole head that 1 KB of `<svg '` repeated before half a megabyte held the event loop for
 * 160 ms, per file and per read_file of it (every file read is probed). A JPEG is read by a
 * walk of its own (jpeg-size.ts) that gives up where the file's structure breaks, as `image-size`
 * does not: it searches on byte by byte, for hundreds of milliseconds on a crafted head. The walk
 * goes on to the scan, past the head where the segments before it do: a decoder takes its size from
 * every frame header before the scan, so one frame header read is not the size. A GIF is
 * sized by a walk over all its frames (gif-size.ts): `image-size` reads only its logical screen,
 * which says nothing of how large the frames a decoder builds are. A PNG is sized by a walk over
 * its chunks up to its image data (png-size.ts): `image-size` reads its first IHDR, a decoder the
 * last before the data, so a second one is refused; it too is read past the head where they go on.
 *
 * An image is shown to a model only within a pixel budget: a few kilobytes of PNG can declare a
 * picture of billions of pixels that whoever decodes it (the model's endpoint, a resizer on the
 * way) must hold in memory — a decompression bomb. The size is the one in the header, read without
 * decoding anything. The probe itself applies the budget: it answers a usable image or a refusal
 * with its reason (`ImageProbe`), so no caller can have an image record without the verdict.
 *
 * The verdict holds for the bytes judged, and a workspace file can be rewritten after it (by the
 * agent's shell, write_file, web_fetch's save_to): every model call that sends an image reads it
 * with `readImageHandle`, which judges the very bytes it hands back.
 */
import { type FileHandle, open } from "node:fs/promises";
import type { ImageAttachment } from "../core/attachment.js";
import { gifSize, isGif } from "./gif-size.js";
import { isJpeg, jpegSize } from "./jpeg-size.js";
import { isPng, pngSize } from "./png-size.js";

const VIEWABLE: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** The most pixels an image shown to a model may have (40 megapixels). */
const IMAGE_MAX_PIXELS = 40_000_000;
/** The longest side an image shown to a model may have, in pixels. */
export const IMAGE_MAX_SIDE = 12_000;

/**
 * What probing a file found, when it is a viewable image: one that may be shown to a model (its
 * record, with its size), or one that must not be, with the reason in words for the person ("it
 * is 50000×50000 pixels, …") and no size to use. Not a viewable image at all is `undefined`.
 */
export type ImageProbe =
  | { readonly usable: true; readonly image: ImageAttachment }
  | {
      readonly usable: false;
      /** The image's media type and size in bytes, to name it by. */
      readonly mediaType: string;
      readonly bytes: number;
      readonly reason: string;
    };

/**
 * Why an image must not be shown to a model, or undefined when it may be: over IMAGE_MAX_SIDE on
 * a side or IMAGE_MAX_PIXELS in all, or with no size in its header at all.
 */
function imageTooLarge(image: ImageInfo): string | undefined {
  const { width, height } = image;
  if (width === undefined || height === undefined)
    return image.unsized ?? "its header does not say how large it is";
  if (Math.max(width, height) > IMAGE_MAX_SIDE)
    return `it is ${width}×${height} pixels, more than ${IMAGE_MAX_SIDE} on a side`;
  if (width * height > IMAGE_MAX_PIXELS)
    return `it is ${width}×${height} pixels, more than ${IMAGE_MAX_PIXELS / 1_000_000} megapixels`;
  return undefined;
}

/**
 * Bytes of a file's head that tell its format and size (enough for JPEG EXIF headers); not a GIF's,
 * nor a JPEG's or PNG's whose headers go on past it.
 */
const HEAD_BYTES = 512 * 1024;
/**
 * The most bytes of a file `readImageHandle` reads unless told otherwise (the default cap on a
 * received file): a PNG, JPEG or WebP past it is judged by its head, a GIF is refused.
 */
const IMAGE_READ_MAX_BYTES = 20 * 1024 * 1024;

/** What a file's bytes say about it as an image: its type, and its size when they give one. */
interface ImageInfo {
  readonly mediaType: string;
  readonly width?: number;
  readonly height?: number;
  /** Why the bytes give no size, when the usual reason (the header says none) is not it. */
  readonly unsized?: string;
  /**
   * The bytes ended before the headers a decoder reads for the size did (a JPEG's segments before
   * its scan, a PNG's chunks before its data): where the file goes on, more of it must be read.
   */
  readonly cut?: boolean;
}

/** A JPEG's size in `image-size`'s terms, or undefined when its walk gave up. */
function jpegInfo(
  bytes: Uint8Array,
  end: number,
): { type: string; width: number; height: number; orientation?: number; cut: boolean } | undefined {
  const size = jpegSize(bytes, end);
  return size && { type: "jpg", width: 0, height: 0, ...size };
}

/** A PNG's size in `image-size`'s terms, or undefined when its walk gave up. */
function pngInfo(
  bytes: Uint8Array,
  end: number,
): { type: string; width: number; height: number; orientation?: number; cut: boolean } | undefined {
  const size = pngSize(bytes, end);
  return size && { type: "png", ...size };
}

/** `image-size`'s reader, loaded and told to give up on every format but WebP once. */
let webpReader: Promise<typeof import("image-size").imageSize> | undefined;

/** `image-size`'s reader, told to give up on every format but the one it is asked to size. */
function webpSize(): Promise<typeof import("image-size").imageSize> {
  webpReader ??= import("image-size").then(({ disableTypes, imageSize, types }) => {
    disableTypes(types.filter((type) => type !== "webp"));
    return imageSize;
  });
  return webpReader;
}

/**
 * What a file's first bytes say about it as an image, if it is a viewable one (its size unchecked);
 * `end`: how long the file is (what a decoder would be sent), `bytes.length` when they are all of it.
 */
async function probeImageBytes(bytes: Uint8Array, end = bytes.length): Promise<ImageInfo | undefined> {
  if (isGif(bytes)) {
    const size = gifSize(bytes);
    if (!size)
      return { mediaType: "image/gif", unsized: "its frames cannot all be read to tell how large it is" };
    return {
      mediaType: "image/gif",
      ...(size.width > 0 ? { width: size.width } : {}),
      ...(size.height > 0 ? { height: size.height } : {}),
    };
  }
  try {
    // A JPEG's and a PNG's walks read as far as their image data, however far; image-size a head.
    const info = isJpeg(bytes)
      ? jpegInfo(bytes, end)
      : isPng(bytes)
        ? pngInfo(bytes, end)
        : (await webpSize())(bytes.subarray(0, HEAD_BYTES));
    if (!info) return undefined;
    const mediaType = info.type ? VIEWABLE[info.type] : undefined;
    if (!mediaType) return undefined;
    const rotated = info.orientation !== undefined && info.orientation >= 5;
    return {
      mediaType,
      ...(info.width > 0 ? { width: rotated ? info.height : info.width } : {}),
      ...(info.height > 0 ? { height: rotated ? info.width : info.height } : {}),
      ...("cut" in info && info.cut ? { cut: true } : {}),
    };
  } catch {
    return undefined;
  }
}

/** An image file's bytes as read, and the verdict on exactly those bytes. */
export interface ImageRead {
  /** The whole file (up to the cap) when it is a viewable image; only its head when it is not. */
  readonly data: Buffer;
  /** Undefined when the bytes are not a viewable image. */
  readonly probe: ImageProbe | undefined;
}

/** Up to the first `length` bytes of the open file (fewer where it ends). */
async function readHead(handle: FileHandle, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, 0);
  return buffer.subarray(0, bytesRead);
}

/** The open file's first `size` bytes (fewer where it ends), its `head` already read into them. */
async function readOn(handle: FileHandle, head: Buffer, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(size);
  head.copy(buffer);
  const { bytesRead } = await handle.read(buffer, head.length, size - head.length, head.length);
  return buffer.subarray(0, head.length + bytesRead);
}

/**
 * Read the open file `handle` from its start, `file.bytes` long (its size when opened) but at
 * most `maxBytes`, and judge those bytes as an image; the caller closes the handle. Whoever sends
 * `data` sends what the verdict is about, however the file changes afterwards. A file whose head
 * is no viewable image is read no further.
 */
export function readImageHandle(
  handle: FileHandle,
  file: { readonly path: string; readonly name: string; readonly bytes: number },
  maxBytes = IMAGE_READ_MAX_BYTES,
): Promise<ImageRead> {
  return readJudged(handle, file, maxBytes, true);
}

/**
 * `readImageHandle`, reading past the head only where needed: with `whole`, all of a viewable
 * image (to send it); without, only what the verdict needs (a GIF's every frame, another format's
 * head), so judging a large PNG does not read it all to throw it away.
 */
async function readJudged(
  handle: FileHandle,
  file: { readonly path: string; readonly name: string; readonly bytes: number },
  maxBytes: number,
  whole: boolean,
): Promise<ImageRead> {
  const size = Math.min(file.bytes, maxBytes);
  const head = await readHead(handle, Math.min(size, HEAD_BYTES));
  const headInfo = await probeImageBytes(head, size);
  if (!headInfo) return { data: head, probe: undefined };
  // Only a GIF's size (gif-size.ts walks every frame) and one whose headers go on past the head
  // (`cut`) need bytes past it; another's is the head's whatever follows. A head cut short means
  // the file ended there: what a decoder is sent ends there too, and reads no header after it.
  const onward = headInfo.mediaType === "image/gif" || headInfo.cut === true;
  const data = head.length < HEAD_BYTES || !(whole || onward) ? head : await readOn(handle, head, size);
  const info = onward && data !== head ? await probeImageBytes(data, size) : headInfo;
  if (!info) return { data, probe: undefined };
  const reason = imageTooLarge(info);
  if (reason !== undefined)
    return { data, probe: { usable: false, mediaType: info.mediaType, bytes: file.bytes, reason } };
  const { mediaType, width, height } = info;
  const image: ImageAttachment = {
    kind: "image",
    path: file.path,
    name: file.name,
    bytes: file.bytes,
    mediaType,
    ...(width !== undefined ? { width } : {}),
    ...(height !== undefined ? { height } : {}),
  };
  return { data, probe: { usable: true, image } };
}

/**
 * The verdict on the open file `handle` as an image (undefined when it is not a viewable one),
 * reading only what the verdict needs; the caller closes the handle.
 */
export async function judgeImageHandle(
  handle: FileHandle,
  file: { readonly path: string; readonly name: string; readonly bytes: number },
): Promise<ImageProbe | undefined> {
  return (await readJudged(handle, file, IMAGE_READ_MAX_BYTES, false)).probe;
}

/** The verdict on a workspace file as an image, or undefined when it is not a viewable image. */
export async function probeImageFile(
  absolute: string,
  file: { readonly path: string; readonly name: string; readonly bytes: number },
): Promise<ImageProbe | undefined> {
  const handle = await open(absolute, "r");
  try {
    return await judgeImageHandle(handle, file);
  } finally {
    await handle.close();
  }
}
