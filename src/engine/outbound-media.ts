/**
 * Per-call media adaptation: images referenced by attachment records in the history become
 * what the model of this call can take. A vision model gets each image as an `image_url`
 * content part (a data URL read from the workspace now, with the configured detail); a text
 * model, an image over the size cap, one beyond the per-call count or a file gone from the
 * workspace gets a visible one-line placeholder instead. Nothing here is stored: the history
 * keeps only the records, so a model switch re-decides on the next call. Images are read as the
 * file tools read, through the asking conversation's view of the workspace: the agent's shell can
 * replace a recorded upload with a link out of the workspace, into another conversation's uploads
 * or to one of the service's own files, a FIFO or a device (`ln -s /dev/zero`), and none of those
 * is read.
 */
import { describeImage, formatBytes, type ImageAttachment, isImage } from "../core/attachment.js";
import type { ContentPart, ConversationMessage } from "../core/messages.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import { openChecked, readUpTo } from "../tools/files/anchored-fs.js";
import type { ConversationWorkspace } from "../tools/files/conversation-workspace.js";
import type { WorkspacePaths } from "../tools/files/workspace-paths.js";
import { modelHasVision, type VisionSetting } from "./vision.js";

/** How images are sent (config `model.vision` and `attachments.*`). */
export interface MediaOptions {
  /** The workspace the attachment paths are relative to, as the file tools see it. */
  readonly workspace: ConversationWorkspace;
  readonly vision: VisionSetting;
  /** Extra model-name fragments counted as vision families when `vision` is auto. */
  readonly visionFamilies?: readonly string[];
  readonly imageDetail?: "auto" | "low" | "high";
  /** Images larger than this are not sent (default 8 MB). */
  readonly imageMaxBytes?: number;
  /** Only the most recent images are sent in full on each call (default 8). */
  readonly maxImagesPerCall?: number;
}

export const DEFAULT_IMAGE_MAX_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_IMAGES_PER_CALL = 8;

/** How one call renders attachments: sync, after the images were read. */
export interface MediaView {
  /** Whether this call's model sees images. */
  readonly vision: boolean;
  /** The parts standing for these images (image parts, or text placeholders). */
  parts(images: readonly ImageAttachment[]): ContentPart[];
}

/** The placeholder a model that cannot see images gets. */
export function textModelPlaceholder(image: ImageAttachment): string {
  return `[image: ${describeImage(image)} — this model cannot see images]`;
}

/** A view for a call without images to send (no media options, or nothing attached). */
export function textOnlyView(vision = false): MediaView {
  return {
    vision,
    parts: (attachments) => attachments.map((a) => ({ type: "text", text: textModelPlaceholder(a) })),
  };
}

/** The images the messages carry (a file's text is not media: outbound.ts shows it as a block). */
function imagesIn(messages: readonly ConversationMessage[]): ImageAttachment[] {
  const found: ImageAttachment[] = [];
  for (const message of messages)
    if ((message.role === "user" || message.role === "tool") && message.attachments)
      for (const attachment of message.attachments) if (isImage(attachment)) found.push(attachment);
  return found;
}

/**
 * An image's bytes: a regular file inside the workspace (the path checked and opened without
 * following links out), no larger than `maxBytes`; undefined when it is not, so nothing unbounded
 * is ever read.
 */
async function readImage(
  paths: WorkspacePaths,
  image: ImageAttachment,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const { handle, stats } = await openChecked(await paths.resolve(image.path));
  try {
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    return await readUpTo(handle, stats.size);
  } finally {
    await handle.close();
  }
}

/**
 * Read what this call of `request`'s turn needs and return its view. Reads only for a vision
 * model, only the most recent `maxImagesPerCall` images, only those under the size cap, and only
 * what `request`'s conversation may read.
 */
export async function prepareMedia(
  messages: readonly ConversationMessage[],
  request: ConversationExecutionRequest,
  options: MediaOptions | undefined,
): Promise<MediaView> {
  // The history is scanned for images only when this call could send them.
  if (!options || !modelHasVision(request.model, options.vision, options.visionFamilies))
    return textOnlyView();
  const all = imagesIn(messages);
  if (all.length === 0) return textOnlyView();
  const maxBytes = options.imageMaxBytes ?? DEFAULT_IMAGE_MAX_BYTES;
  const recent = new Set(all.slice(-(options.maxImagesPerCall ?? DEFAULT_MAX_IMAGES_PER_CALL)));
  const detail = options.imageDetail ?? "auto";
  const paths = options.workspace.forRequest(request);
  const urls = new Map<ImageAttachment, string | "missing">();
  await Promise.all(
    [...recent]
      .filter((image) => image.bytes <= maxBytes)
      .map(async (image) => {
        const data = await readImage(paths, image, maxBytes).catch(() => undefined);
        urls.set(image, data ? `data:${image.mediaType};base64,${data.toString("base64")}` : "missing");
      }),
  );
  const placeholder = (text: string): ContentPart => ({ type: "text", text });
  return {
    vision: true,
    parts: (attachments) =>
      attachments.map((image): ContentPart => {
        if (image.bytes > maxBytes)
          return placeholder(
            `[image: ${describeImage(image)} — ${formatBytes(image.bytes)}, too large to send (limit ${formatBytes(maxBytes)})]`,
          );
        if (!recent.has(image))
          return placeholder(
            `[image: ${describeImage(image)} — an earlier image, not sent again; read_file ${image.path} to look at it]`,
          );
        const url = urls.get(image);
        if (url === undefined || url === "missing")
          return placeholder(`[image: ${describeImage(image)} — the file ${image.path} could not be read]`);
        return { type: "image_url", image_url: { url, detail } };
      }),
  };
}
