/**
 * A model endpoint refusing the images of a request, told by the server's words, and what it is
 * about. "model": the model takes no image at all — Ollama's 400 "this model does not support
 * image input" and its runner's HTTP 500 "failed to process inputs: this model is missing data
 * required for image input", vLLM's "<model> is not a multimodal model", OpenRouter's 404 "No
 * endpoints found that support image input", other servers' "image input is not supported".
 * "image": the endpoint could not decode an image it was sent — OpenAI's "You uploaded an
 * unsupported image…" / "Invalid image", vLLM's "cannot identify image file", Ollama's "invalid
 * image input" / "image: unknown format".
 *
 * Only the words tell it: the status does not (Ollama answers 500, OpenRouter 404, and a refusal an
 * OpenAI-compatible server sends inside an already open stream has none), and a 500 or a 404 whose
 * words are none of these stays a server error or a missing model.
 */
import { ProviderError } from "./provider.js";

/** What a refusal is about: the model (it takes no image) or one image (it could not be read). */
export type ImageRefusal = "model" | "image";

const MODEL_TAKES_NO_IMAGES = new RegExp(
  [
    "(?:does not|doesn't|do not|cannot) (?:support|accept|take) (?:image|vision|multi-?modal)",
    "(?:image|vision|multi-?modal)(?: input| inputs| content)? (?:is |are )?not supported",
    "not a multi-?modal model",
    "missing data required for image input",
    "no endpoints found that support image",
  ].join("|"),
  "i",
);

const IMAGE_UNREADABLE = new RegExp(
  [
    "unsupported image",
    "invalid image",
    "cannot identify image file",
    "image: unknown format",
    "(?:failed to|could not|cannot|unable to) (?:decode|load|read|process) (?:the )?image",
  ].join("|"),
  "i",
);

/** What `message` (a server's error text) refuses, if it refuses images. */
export function imageRefusalIn(message: string): ImageRefusal | undefined {
  if (MODEL_TAKES_NO_IMAGES.test(message)) return "model";
  if (IMAGE_UNREADABLE.test(message)) return "image";
  return undefined;
}

/** The endpoint refused the request over its images (see the module header). */
export class ImageRefusalError extends ProviderError {
  constructor(
    readonly about: ImageRefusal,
    message: string,
    status?: number,
    options?: { cause?: unknown },
  ) {
    super("bad_request", message, status, options);
  }
}
