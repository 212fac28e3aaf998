/**
 * Attachment records: what a message keeps about a file the model may look at. The record names
 * the file in the workspace (path, media type, size, pixel dimensions) and never carries its
 * bytes, so history stays small; the engine reads the file at send time and adapts it to the
 * model of that call (an image part for a vision model, a visible placeholder otherwise).
 */
import { z } from "zod";

/** An image saved in the workspace. */
export interface ImageAttachment {
  readonly kind: "image";
  /** Workspace-relative path. */
  readonly path: string;
  /** The name people know it by (the original file name). */
  readonly name: string;
  /** image/png, image/jpeg, image/gif or image/webp. */
  readonly mediaType: string;
  readonly bytes: number;
  readonly width?: number;
  readonly height?: number;
}

/** Every kind of attachment a message can carry (only images are adapted per call today). */
export type Attachment = ImageAttachment;

/** Zod schema of a stored attachment record. */
export const attachmentSchema: z.ZodType<Attachment> = z.object({
  kind: z.literal("image"),
  path: z.string().min(1),
  name: z.string(),
  mediaType: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
});

/** "name, 800×600" (or just the name when the size is unknown). */
export function describeImage(image: ImageAttachment): string {
  return image.width !== undefined && image.height !== undefined
    ? `${image.name}, ${image.width}×${image.height}`
    : image.name;
}

/** A byte count for people: "812 B", "14.2 KB", "5.0 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
