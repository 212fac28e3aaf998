/**
 * The fetch the Slack Web API clients use. Node's own fetch keeps each request's objects alive
 * long enough for a scavenge to promote them, so every call is copied again by the GC: a bare
 * Bolt app answering one DM at a time promoted 1.86 MB per scavenge on Node's fetch and 0.79 MB on
 * node-fetch, and its scavenges shortened from 4.2 to 2.0 ms. Scavenges are what delay an Events
 * API ack at one thread (an envelope that arrives during one waits it out), so the Web API's calls
 * — form or JSON text bodies — go through `postText`, leaner still than node-fetch (see
 * channels/shared/text-post.ts). Anything else (uploads, whose multipart bodies the SDK builds as
 * FormData) stays on Node's fetch, which is what builds those.
 */
import { postText } from "../shared/text-post.js";

/**
 * `fetch` for a `WebClient` given no timeout of its own, giving up on each call after `timeoutMs`:
 * text bodies through `postText`, whose deadline is a timer cleared when the call settles; anything
 * else through Node's fetch, under an AbortSignal.timeout, which also covers the answer's body
 * read after fetch resolves. (The WebClient's own timeout is an AbortSignal.timeout on every call:
 * its timer, a WeakRef and a finalization cell outlive the call by the whole timeout, about 5 % of
 * what a scavenge copied at one reply at a time.)
 */
export function slackFetchWithin(timeoutMs: number): typeof fetch {
  return (input, init) => {
    const body = init?.body;
    if (typeof input !== "string" || typeof body !== "string")
      return fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    // A TextAnswer has what the SDK reads (status, headers, json, text, arrayBuffer); its url is
    // empty (postText never repeats a URL), which only an admin analytics download reads.
    return postText(input, {
      method: init?.method,
      headers: init?.headers,
      body,
      signal: init?.signal,
      timeoutMs,
    }) as unknown as Promise<Response>;
  };
}
