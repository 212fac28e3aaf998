/**
 * The fetch grammY's API client uses: calls with a JSON body (every call but uploads) go through
 * `postText` — node-fetch's per-request wrapping was the largest single cost of a reply (see
 * channels/shared/text-post.ts) — and uploads, whose multipart bodies grammY streams, through
 * node-fetch, grammY's default.
 */
import type { ApiClientOptions } from "grammy";
import nodeFetch from "node-fetch";
import { postText } from "../shared/text-post.js";

type GrammyFetch = NonNullable<ApiClientOptions["fetch"]>;

/** `fetch` for grammY's client: `postText` for text bodies, node-fetch for the rest. */
function fetchForGrammy(...[url, init]: Parameters<GrammyFetch>): Promise<{ json(): Promise<unknown> }> {
  const body = init?.body;
  if (typeof url !== "string" || typeof body !== "string") return nodeFetch(url, init);
  return postText(url, { method: init?.method, headers: init?.headers, body, signal: init?.signal });
}

/**
 * The same as grammY's option wants it typed: node-fetch's default export, returning its Response.
 * grammY only calls it, and reads only `json()` of what it returns.
 */
export const telegramFetch = fetchForGrammy as unknown as GrammyFetch;
