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

/** `fetch` for `WebClient`: `postText` for text bodies, Node's fetch for the rest. */
export const slackFetch: typeof fetch = (input, init) => {
  const body = init?.body;
  if (typeof input !== "string" || typeof body !== "string") return fetch(input, init);
  // A TextAnswer has what the SDK reads (status, headers, json, text, arrayBuffer); its url is
  // empty (postText never repeats a URL), which only an admin analytics download reads.
  return postText(input, {
    method: init?.method,
    headers: init?.headers,
    body,
    signal: init?.signal,
  }) as unknown as Promise<Response>;
};
