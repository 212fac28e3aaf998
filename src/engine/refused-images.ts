/**
 * Images the model endpoint refused. A file can pass the probe (a valid PNG header, garbage after
 * it) and still be one the endpoint cannot decode: it answers the whole call with a 400 about the
 * image (OpenAI "You uploaded an unsupported image…" / "Invalid image", vLLM "cannot identify
 * image file", Ollama "invalid image input" / "image: unknown format"). Every image of the history
 * is sent again on every later call, so without a memory of the refusal one such file made every
 * later turn of a shared conversation fail.
 *
 * The step that met the refusal stores it in the history: its failed attempt's error marker
 * (never sent to the model) names the refused images in `meta.refusedImages`, so the refusal is
 * kept with the session, survives a restart, and goes when compaction drops the turn (and the
 * image with it). The endpoint does not say which image it refused: the suspects are the images
 * first sent since the last answer the endpoint took, which held every older image it was sent;
 * when there are none (a model switch, an older image first sent now), every image of the call.
 */
import { type ImageAttachment, isImage } from "../core/attachment.js";
import type { ConversationMessage } from "../core/messages.js";
import { isErrorMarker } from "./outbound.js";
import type { ProviderError } from "./provider/provider.js";

/** The error marker's meta field naming the refused images' paths. */
export const REFUSED_IMAGES = "refusedImages";

/** Whether `error` is the endpoint refusing the request over an image it was sent. */
export function isImageRefusal(error: ProviderError): boolean {
  return (
    error.kind === "bad_request" &&
    (error.status === 400 || error.status === 422) &&
    /image/i.test(error.message)
  );
}

/** The paths of the images an error marker in `messages` records as refused. */
export function refusedImagePaths(messages: readonly ConversationMessage[]): ReadonlySet<string> {
  const refused = new Set<string>();
  for (const message of messages) {
    if (!isErrorMarker(message)) continue;
    const paths = message.meta?.[REFUSED_IMAGES];
    if (Array.isArray(paths)) for (const path of paths) if (typeof path === "string") refused.add(path);
  }
  return refused;
}

/**
 * Which of the images `sent` in a call over `messages` the endpoint may have refused (see the
 * module header): those in messages after the last answer it took, else all of them.
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
