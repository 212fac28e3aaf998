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
 * A refusal is final and remembered (those images are not sent to that model again), so the words
 * count only where a refusal can be: a 400 or 422 in any such wording; Ollama's 500 and
 * OpenRouter's 404 only in the known servers' exact phrases; an error sent inside an already open
 * stream (no status) only in those phrases too. A 429 or another 5xx is never a refusal whatever
 * it says ("unable to process image batch: worker overloaded, retry" is a transient failure, kept
 * retryable), and a 500 or a 404 in other words stays a server error or a missing model.
 */
import { ProviderError } from "./provider.js";

/** What a refusal is about: the model (it takes no image) or one image (it could not be read). */
export type ImageRefusal = "model" | "image";

/** The known servers' exact phrases for a model that takes no image (see the module header). */
const KNOWN_MODEL_REFUSAL = anyOf([
  "does not support image input",
  "missing data required for image input",
  "is not a multi-?modal model",
  "no endpoints found that support image input",
]);

/** The known servers' exact phrases for an image they could not decode (see the module header). */
const KNOWN_IMAGE_REFUSAL = anyOf([
  "you uploaded an unsupported image",
  "invalid image",
  "cannot identify image file",
  "image: unknown format",
]);

/** Other servers' wording of a model that takes no image, taken at a 400 or 422 only. */
const OTHER_MODEL_REFUSAL = anyOf([
  "(?:does not|doesn't|do not|cannot) (?:support|accept|take) (?:image|vision|multi-?modal)",
  "(?:image|vision|multi-?modal)(?: input| inputs| content)? (?:is |are )?not supported",
]);

/** Other servers' wording of an image they could not decode, taken at a 400 or 422 only. */
const OTHER_IMAGE_REFUSAL = anyOf([
  "unsupported image",
  "(?:failed to|could not|cannot|unable to) (?:decode|load|read|process) (?:the )?image",
]);

/** Statuses of a request refused for what it holds, where any refusal's wording counts. */
const BAD_REQUEST = new Set([400, 422]);
/** Statuses a text-only model is refused with besides (Ollama's 500, OpenRouter's 404). */
const MODEL_REFUSAL_ELSEWHERE = new Set([404, 500]);

/** What a 400 or 422's message (a server's error text) refuses, if it refuses images, in any wording. */
export function imageRefusalIn(message: string): ImageRefusal | undefined {
  if (KNOWN_MODEL_REFUSAL.test(message) || OTHER_MODEL_REFUSAL.test(message)) return "model";
  if (KNOWN_IMAGE_REFUSAL.test(message) || OTHER_IMAGE_REFUSAL.test(message)) return "image";
  return undefined;
}

/**
 * What an error the endpoint answered with `status` (undefined: sent inside an open stream), in
 * the words `message`, refuses, if it refuses images (see the module header).
 */
export function imageRefusalAt(status: number | undefined, message: string): ImageRefusal | undefined {
  if (status !== undefined && BAD_REQUEST.has(status)) return imageRefusalIn(message);
  if (KNOWN_MODEL_REFUSAL.test(message)) {
    return status === undefined || MODEL_REFUSAL_ELSEWHERE.has(status) ? "model" : undefined;
  }
  return status === undefined && KNOWN_IMAGE_REFUSAL.test(message) ? "image" : undefined;
}

function anyOf(patterns: readonly string[]): RegExp {
  return new RegExp(patterns.join("|"), "i");
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
