/**
 * Images the model endpoint refused, remembered so later calls do not send them again. A refusal
 * is about one of two things (provider/image-refusal.ts):
 *
 * - The model takes no image at all (a text-only model that `model.vision` took for a vision
 *   one: "this model does not support image input", "… is not a multimodal model"). No image is
 *   at fault, so none is named: the refusal is the model's, and no later call of that model sends
 *   an image (each is a placeholder saying the model cannot see images), while a switch to another
 *   model tries them again. Naming images here would mark those of everyone who wrote in the step
 *   — in a shared conversation, another person's too — as refused, on every model.
 * - The endpoint could not decode an image (a valid PNG header, garbage after it: the probe takes
 *   it). Every image of the history is sent again on every later call, so without a memory of the
 *   refusal one such file made every later turn of a shared conversation fail. The endpoint does
 *   not say which image it refused: the suspects are the images first sent since the last answer
 *   the endpoint took, which held every older image it was sent; when there are none (a model
 *   switch, an older image first sent now), every image of the call. They are not sent again to
 *   that model; another model, which may read them, tries them again.
 *
 * The step that met the refusal stores it in the history: its failed attempt's error marker (never
 * sent to the model) names the model in `meta.imagesRefusedBy`, and the suspects' paths in
 * `meta.refusedImages` when an image was refused. So the refusal is kept with the session,
 * survives a restart, and goes when compaction drops the turn. A marker stored before refusals
 * named their model holds for every model, as it did.
 */
import { type ImageAttachment, isImage } from "../core/attachment.js";
import type { ConversationMessage } from "../core/messages.js";
import { isErrorMarker } from "./outbound.js";
import type { ImageRefusals } from "./outbound-media.js";
import { type ImageRefusal, ImageRefusalError, imageRefusalIn } from "./provider/image-refusal.js";
import type { ProviderError } from "./provider/provider.js";

/** The error marker's meta field naming the refused images' paths (an image the endpoint could not read). */
export const REFUSED_IMAGES = "refusedImages";

/** The error marker's meta field naming the model the refusal was met on. */
export const REFUSED_BY = "imagesRefusedBy";

/** What `error` refuses, when it is the endpoint refusing the request over the images it was sent. */
export function imageRefusalOf(error: ProviderError): ImageRefusal | undefined {
  if (error instanceof ImageRefusalError) return error.about;
  // Any provider's 400 or 422 about an image: by its words, else an image it could not read.
  if (
    error.kind === "bad_request" &&
    (error.status === 400 || error.status === 422) &&
    /image/i.test(error.message)
  )
    return imageRefusalIn(error.message) ?? "image";
  return undefined;
}

/** What the error markers in `messages` record as refused on `model`. */
export function refusalsFor(messages: readonly ConversationMessage[], model: string): ImageRefusals {
  let takesNone = false;
  const paths = new Set<string>();
  for (const message of messages) {
    if (!isErrorMarker(message)) continue;
    const by = message.meta?.[REFUSED_BY];
    if (by !== undefined && by !== model) continue;
    const refused = message.meta?.[REFUSED_IMAGES];
    if (Array.isArray(refused)) {
      for (const path of refused) if (typeof path === "string") paths.add(path);
    } else if (by === model) takesNone = true;
  }
  return { model: takesNone, paths };
}

/**
 * Which of the images `sent` in a call over `messages` the endpoint may have been unable to read
 * (see the module header): those in messages after the last answer it took, else all of them.
 */
export function suspectImages(
  messages: readonly ConversationMessage[],
  sent: readonly ImageAttachment[],
): readonly ImageAttachment[] {
  const sentNow = new Set(sent);
  const fresh: ImageAttachment[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "assistant" && !isErrorMarker(message)) break;
    if (message.role === "user" || message.role === "tool")
      for (const attachment of message.attachments ?? [])
        if (isImage(attachment) && sentNow.has(attachment)) fresh.push(attachment);
  }
  return fresh.length > 0 ? fresh : sent;
}
