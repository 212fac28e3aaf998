/**
 * Per-call media adaptation: images referenced by attachment records in the history become
 * what the model of this call can take. A vision model gets each image as an `image_url`
 * content part (a data URL read from the workspace now, with the configured detail); a text
 * model, an image over the size cap, one beyond the per-call count or past the call's image
 * bytes (filled newest first: every image of the history rides on every call, and eight 8 MB
 * screenshots made requests of over 80 MB, past what OpenAI takes), one the endpoint refused
 * (refused-images.ts), every image of a call retried after a refusal, a file gone from the
 * workspace, or one whose bytes changed since it was attached gets a visible one-line placeholder
 * instead; a model the endpoint refused images for gets a text model's placeholders. Nothing here
 * is stored: the history keeps only the records, so a model switch re-decides on the next call.
 * Images are read as the file tools read, through the asking conversation's view of the
 * workspace: the agent's shell can replace a recorded upload with a link out of the workspace,
 * into another conversation's uploads or to one of the service's own files, a FIFO or a device
 * (`ln -s /dev/zero`), and none of those is read. The record's verdict (media/image-probe.ts: a
 * viewable image within the pixel budget) was on the bytes of its time, and the file may have
 * been rewritten since (the agent's shell, write_file, web_fetch's save_to): the bytes read for a
 * call are judged again, and sent only when they pass and are still of the recorded type.
 */
import { describeImage, formatBytes, type ImageAttachment, isImage } from "../core/attachment.js";
import { type ImageRead, readImageHandle } from "../media/image-probe.js";
import type { ContentPart, ConversationMessage } from "../core/messages.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import { openChecked } from "../tools/files/anchored-fs.js";
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
  /** The most image bytes one call sends, the newest images first (default 20 MB). */
  readonly maxImageBytesPerCall?: number;
}

export const DEFAULT_IMAGE_MAX_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_IMAGES_PER_CALL = 8;
export const DEFAULT_MAX_IMAGE_BYTES_PER_CALL = 20 * 1024 * 1024;

/** What the endpoint refused before on a call's model (refused-images.ts). */
export interface ImageRefusals {
  /** The model takes no image: the call is a text model's. */
  readonly model: boolean;
  /** Paths of images it could not read: never sent to it again. */
  readonly paths: ReadonlySet<string>;
}

/** What one call leaves out besides the options' caps (model-step.ts decides). */
export interface CallImages {
  /**
   * What the endpoint refused before on this call's model. Asked only for a call that can send
   * images (a text model's call never walks the history for them).
   */
  readonly refused?: () => ImageRefusals;
  /** Send no image at all: the call is retried after the endpoint refused one. */
  readonly withhold?: boolean;
}

/** How one call renders attachments: sync, after the images were read. */
export interface MediaView {
  /** Whether this call's model sees images. */
  readonly vision: boolean;
  /** The parts standing for these images (image parts, or text placeholders). */
  parts(images: readonly ImageAttachment[]): ContentPart[];
  /** The images this call sends as image parts. */
  readonly sent: readonly ImageAttachment[];
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
    sent: [],
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
 * An image's bytes with the verdict on them: a regular file inside the workspace (the path checked
 * and opened without following links out), no larger than `maxBytes`; undefined when it is not,
 * so nothing unbounded is ever read.
 */
async function readImage(
  paths: WorkspacePaths,
  image: ImageAttachment,
  maxBytes: number,
): Promise<ImageRead | undefined> {
  const { handle, stats } = await openChecked(await paths.resolve(image.path));
  try {
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    return await readImageHandle(
      handle,
      { path: image.path, name: image.name, bytes: stats.size },
      stats.size,
    );
  } finally {
    await handle.close();
  }
}

/**
 * Read what this call of `request`'s turn needs and return its view. Reads only for a vision
 * model, only the most recent `maxImagesPerCall` images, newest first while they fit the call's
 * image bytes, only those under the size cap and not refused, and only what `request`'s
 * conversation may read. A call that sends no image gets its view at once, not as a promise:
 * most calls read nothing, and each is one model step of a turn.
 */
export function prepareMedia(
  messages: readonly ConversationMessage[],
  request: ConversationExecutionRequest,
  options: MediaOptions | undefined,
  call: CallImages = {},
): MediaView | Promise<MediaView> {
  // The history is scanned for images only when this call could send them.
  if (!options || !modelHasVision(request.model, options.vision, options.visionFamilies))
    return textOnlyView();
  const all = imagesIn(messages);
  if (all.length === 0) return textOnlyView();
  const refusals = call.refused?.();
  if (refusals?.model) return textOnlyView();
  return readMedia(all, refusals?.paths ?? new Set<string>(), request, options, call);
}

/** prepareMedia's view of a call that may send some of `all`, the images of its history. */
async function readMedia(
  all: readonly ImageAttachment[],
  refused: ReadonlySet<string>,
  request: ConversationExecutionRequest,
  options: MediaOptions,
  call: CallImages,
): Promise<MediaView> {
  const maxBytes = options.imageMaxBytes ?? DEFAULT_IMAGE_MAX_BYTES;
  const budget = options.maxImageBytesPerCall ?? DEFAULT_MAX_IMAGE_BYTES_PER_CALL;
  const recent = all.slice(-(options.maxImagesPerCall ?? DEFAULT_MAX_IMAGES_PER_CALL));
  const detail = options.imageDetail ?? "auto";
  const paths = options.workspace.forRequest(request);
  const placeholder = (image: ImageAttachment, why: string): ContentPart => ({
    type: "text",
    text: `[image: ${describeImage(image)} — ${why}]`,
  });
  const lookAt = (image: ImageAttachment) => `read_file ${image.path} to look at it`;
  /** The placeholder of an image no call sends, if `image` is one. */
  const neverSent = (image: ImageAttachment): ContentPart | undefined => {
    if (refused.has(image.path))
      return placeholder(image, "the model endpoint refused this image, so it is not sent again");
    if (image.bytes > maxBytes)
      return placeholder(
        image,
        `${formatBytes(image.bytes)}, too large to send (limit ${formatBytes(maxBytes)})`,
      );
    return undefined;
  };
  const shown = new Map<ImageAttachment, ContentPart>();
  let spent = 0;
  for (const image of recent.reverse()) {
    if (shown.has(image)) continue;
    const never = neverSent(image);
    if (never) shown.set(image, never);
    else if (call.withhold)
      shown.set(
        image,
        placeholder(
          image,
          `not sent on this call, as the model endpoint refused one of this conversation's images; ${lookAt(image)}`,
        ),
      );
    else if (spent + image.bytes > budget)
      shown.set(
        image,
        placeholder(
          image,
          `not sent on this call: the newer images used up the ${formatBytes(budget)} of images a call carries; ${lookAt(image)}`,
        ),
      );
    else {
      const read = await readImage(paths, image, Math.min(maxBytes, budget - spent)).catch(() => undefined);
      if (!read) shown.set(image, placeholder(image, `the file ${image.path} could not be read`));
      else if (!read.probe?.usable || read.probe.image.mediaType !== image.mediaType)
        shown.set(
          image,
          placeholder(
            image,
            `the file ${image.path} changed since it was attached, so it is not sent; ${lookAt(image)}`,
          ),
        );
      else {
        const { data } = read;
        spent += data.length;
        const url = `data:${image.mediaType};base64,${data.toString("base64")}`;
        shown.set(image, { type: "image_url", image_url: { url, detail } });
      }
    }
  }
  const sent = [...shown].flatMap(([image, part]) => (part.type === "image_url" ? [image] : []));
  return {
    vision: true,
    parts: (attachments) =>
      attachments.map(
        (image): ContentPart =>
          shown.get(image) ??
          neverSent(image) ??
          placeholder(image, `an earlier image, not sent again; ${lookAt(image)}`),
      ),
    sent,
  };
}
