/**
 * Failure handling for the OpenAI-compatible provider: turns whatever an attempt threw (SDK
 * errors, fetch errors, mid-stream error payloads) into a `ProviderError` with a short friendly
 * message, says whether a retry could help, and reads Retry-After. Also normalises error bodies
 * from servers that put the error at the top level (older vLLM) or in an array (Gemini) so the SDK
 * sees the message; an error body is read only up to ERROR_BODY_LIMIT bytes (the rest is never
 * downloaded). A refusal of the request's images (image-refusal.ts) is told by the server's
 * words where a refusal can be (a 400 or 422; Ollama's 500 and OpenRouter's 404 and an error inside
 * an open stream in known phrases only), and is final; a 429 or another 5xx stays retryable.
 * A failure's message is posted into the thread, so what it quotes of the server (its reason, the
 * endpoint's URL) is scrubbed first: the API key itself wherever it appears (a proxy may echo the
 * key it was sent, in any provider's format), token-shaped text, a URL's password and its query
 * (`?api_key=…`).
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import { REDACTED, scrubSecrets } from "../../logging/redact.js";
import { clip } from "../../core/surrogate-pairs.js";
import { ImageRefusalError, imageRefusalAt } from "./image-refusal.js";
import { ContextOverflowError, ProviderError, type ProviderErrorKind } from "./provider.js";

/** What the error mapping needs to name the failure. */
export interface FailureContext {
  readonly model: string;
  readonly baseURL: string;
  readonly now: () => number;
}

/** A mapped failure: the error to surface, and whether (and when) a retry may help. */
export interface Failure {
  readonly error: ProviderError;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
}

/**
 * How servers word "the prompt did not fit": OpenAI, vLLM, OpenRouter, Mistral ("maximum context
 * length"), Gemini ("input token count … exceeds the maximum number of tokens"), Anthropic
 * ("prompt is too long"), TGI ("`inputs` tokens + `max_new_tokens` must be <= N", "must have less
 * than N tokens" — but not "`max_new_tokens` must be <= N" or "max_tokens must be <= N" alone:
 * those say the configured output limit is above the server's, which no shorter history fixes,
 * so they stay a bad request with the server's reason shown), vLLM's newer "longer than the
 * maximum model length" / "is too long and exceeds limit", Ollama ("input length exceeds the
 * context length"), llama.cpp ("exceeds the available context size"), Bedrock ("input is too
 * long"), and the advice to "reduce the length of the messages". A message that is none of these
 * is an ordinary bad request: the session would go on resending the whole history and failing,
 * so the net is wide.
 */
const OVERFLOW_MESSAGE = new RegExp(
  [
    "maximum context length",
    "context[ _-]?(?:length|window|size|limit)",
    "too many (?:input )?tokens",
    "(?:prompt|input|request) (?:is )?too (?:long|large)",
    "exceeds? the available context",
    "input token count",
    "maximum number of (?:input )?tokens",
    "inputs`? tokens \\+ `?max_new_tokens`? must be <=",
    "must have less than \\d+ tokens",
    "maximum model length",
    "too long and exceeds limit",
    "reduce the length of the (?:messages|prompt|input)",
  ].join("|"),
  "i",
);
const OVERFLOW_STATUSES = new Set([400, 422]);
const DETAIL_LIMIT = 200;
const NETWORK_CODE = /^(?:E[A-Z]+|UND_ERR_\w+)$/;

/** Whether an error code / message pair says the prompt did not fit the context window. */
export function isContextOverflow(code: unknown, message: string): boolean {
  return code === "context_length_exceeded" || OVERFLOW_MESSAGE.test(message);
}

/** The error for an error payload the server sent inside an already-open stream (OpenRouter, vLLM). */
export function midStreamError(payload: unknown, cause?: unknown): ProviderError {
  const { message, code } = describePayload(payload);
  if (isContextOverflow(code, message)) return new ContextOverflowError(undefined, { cause });
  const refusal = imageRefusalAt(undefined, message);
  if (refusal)
    return new ImageRefusalError(
      refusal,
      `The model endpoint refused the request mid-response: ${serverText(message)}`,
      undefined,
      { cause },
    );
  const kind: ProviderErrorKind = code === 429 || code === "rate_limit_exceeded" ? "rate_limited" : "server";
  return providerError(
    kind,
    `The model endpoint reported an error mid-response: ${serverText(message)}`,
    cause,
  );
}

/** Map anything an attempt threw to a `Failure`. */
export function classifyFailure(error: unknown, ctx: FailureContext): Failure {
  if (error instanceof ProviderError) return final(error);
  if (error instanceof APIConnectionTimeoutError) {
    return retryable(providerError("timeout", "The model endpoint did not respond in time.", error));
  }
  if (error instanceof APIConnectionError) {
    const code = causeCode(error);
    const text = `Could not connect to the model endpoint at ${endpoint(ctx)}${code ? ` (${code})` : ""}.`;
    return retryable(providerError("connection", text, error));
  }
  if (error instanceof APIError) {
    if (error.status === undefined) return final(midStreamError(error.error ?? error.message, error));
    return fromStatus(error, error.status, ctx);
  }
  if (error instanceof SyntaxError) {
    const text = `The model endpoint sent a stream chunk that is not JSON: ${serverText(error.message)}`;
    return final(providerError("server", text, error));
  }
  // undici reports a connection lost mid-body as TypeError("terminated"); sockets as E* codes.
  if (error instanceof TypeError || NETWORK_CODE.test(causeCode(error) ?? "")) {
    const text = `The connection to the model endpoint at ${endpoint(ctx)} dropped mid-response.`;
    return retryable(providerError("connection", text, error));
  }
  const message = error instanceof Error ? error.message : String(error);
  return final(providerError("server", `Unexpected model endpoint failure: ${serverText(message)}`, error));
}

function fromStatus(error: APIError, status: number, ctx: FailureContext): Failure {
  const { message, code } = describePayload(error.error ?? error.message);
  const options = { cause: error };
  // 413: the request body was too large for the server or a proxy in front of it — what an
  // oversized history is, whatever the page it sent says.
  if (status === 413 || (OVERFLOW_STATUSES.has(status) && isContextOverflow(code, message))) {
    return final(new ContextOverflowError(undefined, options));
  }
  if (status === 401 || status === 403) {
    const text = `The model endpoint rejected the API key (HTTP ${status}). Check OPENAI_API_KEY and the endpoint's access rules.`;
    return final(new ProviderError("auth", text, status, options));
  }
  // Ollama refuses images with a 500 and OpenRouter with a 404: their words say so, not the status.
  const refusal = imageRefusalAt(status, message);
  if (refusal) {
    const text = `The model endpoint rejected the request (HTTP ${status}): ${serverText(message)}`;
    return final(new ImageRefusalError(refusal, text, status, options));
  }
  if (status === 404) {
    const text = `Model "${ctx.model}" was not found at ${endpoint(ctx)} (HTTP 404). Check the model name and base URL.`;
    return final(new ProviderError("bad_request", text, status, options));
  }
  if (status === 429 && code === "insufficient_quota") {
    const text = "The account behind the API key has no quota left (HTTP 429). Check its plan and billing.";
    return final(new ProviderError("auth", text, status, options));
  }
  const retryAfterMs = retryAfter(error.headers, ctx.now);
  if (status === 429) {
    const text = "The model endpoint is rate limiting requests (HTTP 429). Try again shortly.";
    return { error: new ProviderError("rate_limited", text, status, options), retryable: true, retryAfterMs };
  }
  if (status === 408) {
    const text = "The model endpoint timed out handling the request (HTTP 408).";
    return { error: new ProviderError("timeout", text, status, options), retryable: true, retryAfterMs };
  }
  if (status >= 500) {
    const text = `The model endpoint had a server error (HTTP ${status}). Try again shortly.`;
    return { error: new ProviderError("server", text, status, options), retryable: true, retryAfterMs };
  }
  const text = `The model endpoint rejected the request (HTTP ${status}): ${serverText(message)}`;
  return final(new ProviderError("bad_request", text, status, options));
}

/**
 * Milliseconds to wait according to `retry-after-ms` or `retry-after` (seconds or an HTTP date),
 * or undefined when the response says nothing usable.
 */
export function retryAfter(headers: Headers | undefined, now: () => number): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now());
}

/**
 * Bytes of an error response's body that are read; the rest is cancelled unread. A real error
 * body is a few hundred bytes, while one that never ends (a broken or hostile endpoint) would
 * otherwise be buffered whole, growing memory until the stall timer fires.
 */
export const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * A fetch that reads an error body (at most ERROR_BODY_LIMIT bytes) and rewrites a top-level
 * error (`{"object":"error","message":…}`) into the `{"error":{…}}` shape, so the SDK's error
 * carries the server's message and code.
 */
export function errorNormalizingFetch(base: () => typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await base()(input, init);
    if (response.ok) return response;
    const text = await readCapped(response, ERROR_BODY_LIMIT);
    return new Response(normalizeErrorBody(text), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** A response body as text, read up to `limit` bytes; the rest is cancelled unread. */
async function readCapped(response: Response, limit: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.byteLength > limit - size ? value.subarray(0, limit - size) : value;
      parts.push(part);
      size += part.byteLength;
    }
  } finally {
    // Stops the download (and frees the connection) when the body goes on past the limit.
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(parts).toString("utf8");
}

/**
 * Wrap a top-level error object under `error`, and unwrap a one-element array of them (Gemini's
 * `[{"error":{…}}]`, which the SDK reads as no message at all); any other text is returned unchanged.
 */
export function normalizeErrorBody(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (Array.isArray(parsed) && parsed.length === 1 && isRecord(parsed[0]) && isRecord(parsed[0].error)) {
    return JSON.stringify(parsed[0]);
  }
  if (isRecord(parsed) && !("error" in parsed) && typeof parsed.message === "string") {
    return JSON.stringify({ error: parsed });
  }
  return text;
}

function describePayload(payload: unknown): { message: string; code: unknown } {
  if (typeof payload === "string") return { message: payload, code: undefined };
  if (isRecord(payload)) {
    const message = typeof payload.message === "string" ? payload.message : JSON.stringify(payload);
    return { message, code: payload.code };
  }
  return { message: String(payload), code: undefined };
}

function causeCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; isRecord(current) && depth < 5; depth++) {
    if (typeof current.code === "string") return current.code;
    current = current.cause;
  }
  return undefined;
}

function providerError(kind: ProviderErrorKind, text: string, cause: unknown): ProviderError {
  return new ProviderError(kind, text, undefined, { cause });
}

function retryable(error: ProviderError): Failure {
  return { error, retryable: true, retryAfterMs: undefined };
}

function final(error: ProviderError): Failure {
  return { error, retryable: false, retryAfterMs: undefined };
}

/** The endpoint's URL as a message may show it: scrubbed, its query left out. */
function endpoint(ctx: FailureContext): string {
  const [path = "", query] = ctx.baseURL.split("?", 2);
  return scrubSecrets(path) + (query === undefined ? "" : `?${REDACTED}`);
}

/**
 * Server text as a message may quote it: one line, scrubbed (the API key, registered by the
 * provider, and token-shaped substrings), at most DETAIL_LIMIT characters. Folded before it is
 * scrubbed (the scrub reads line ends as command ends), cut after: the scrub sees secrets whole.
 */
function serverText(text: string): string {
  return clip(scrubSecrets(text.replace(/\s+/g, " ").trim()), DETAIL_LIMIT);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
