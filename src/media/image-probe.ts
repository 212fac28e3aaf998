/**
 * Recognising an image a model can be shown: the bytes decide (not the file name), using the
 * maintained `image-size` reader for the format and pixel dimensions. Only the formats
 * OpenAI-compatible vision endpoints accept (PNG, JPEG, GIF, WebP) count as viewable images.
 * `image-size` is imported on the first probe, so a start never loads it.
 */
import { type FileHandle, open } from "node:fs/promises";
import type { ImageAttachment } from "../core/attachment.js";

const VIEWABLE: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** Bytes read from the head of a file to find its format and size (enough for JPEG EXIF headers). */
const HEAD_BYTES = 512 * 1024;

/** What the head of a file says about it as an image, if it is a viewable one. */
export async function probeImageBytes(
  head: Uint8Array,
): Promise<{ mediaType: string; width?: number; height?: number } | undefined> {
  const { imageSize } = await import("image-size");
  try {
    const info = imageSize(head);
    const mediaType = info.type ? VIEWABLE[info.type] : undefined;
    if (!mediaType) return undefined;
    const rotated = info.orientation !== undefined && info.orientation >= 5;
    return {
      mediaType,
      ...(info.width > 0 ? { width: rotated ? info.height : info.width } : {}),
      ...(info.height > 0 ? { height: rotated ? info.width : info.height } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The image record of a workspace file, or undefined when it is not a viewable image. */
export async function probeImageFile(
  absolute: string,
  file: { readonly path: string; readonly name: string; readonly bytes: number },
): Promise<ImageAttachment | undefined> {
  const handle = await open(absolute, "r");
  try {
    return await probeImageHandle(handle, file);
  } finally {
    await handle.close();
  }
}

/** The image record of an open file, read from its head; the caller closes the handle. */
export async function probeImageHandle(
  handle: FileHandle,
  file: { readonly path: string; readonly name: string; readonly bytes: number },
): Promise<ImageAttachment | undefined> {
  const buffer = Buffer.alloc(Math.min(HEAD_BYTES, Math.max(file.bytes, 1)));
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  const info = await probeImageBytes(buffer.subarray(0, bytesRead));
  return info ? { kind: "image", path: file.path, name: file.name, bytes: file.bytes, ...info } : undefined;
}
