/**
 * How often a remote MCP server's standing event stream may be opened. The SDK opens it (an HTTP
 * GET) again whenever the server ends it, after the delay the server's `retry:` field asks for,
 * and counts its attempts afresh after each clean end: a server that answered every GET with
 * `retry: 0` and ended it had the client reopen it as fast as the event loop allowed, forever and
 * unlogged (2,000 requests in seconds). So each open waits until at least `minGapMs` after the one
 * before, whatever the server asked; and once more than STREAM_OPENS_PER_MINUTE fall within a
 * minute, the fetch answers as a server without a stream would (405, which the SDK takes as "no
 * stream" and stops) and calls `onTooOften`, which stops the server to be restarted with backoff.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** Opens of the event stream within a minute past which the server is stopped. */
export const STREAM_OPENS_PER_MINUTE = 10;
const MINUTE_MS = 60_000;

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function pause(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    timer.unref();
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** `base` with its GETs (the event stream's opens) spaced by `minGapMs` and counted per minute. */
export function pacedEventStream(base: FetchLike, minGapMs: number, onTooOften: () => void): FetchLike {
  const opens: number[] = [];
  let tooOften = false;
  const noStream = () =>
    new Response(null, { status: 405, statusText: "event stream stopped: reopened too often" });
  return async (url, init) => {
    if ((init?.method ?? "GET").toUpperCase() !== "GET") return base(url, init);
    if (tooOften) return noStream();
    // Each open takes its slot before it waits, so two at once are spaced as well.
    const last = opens.at(-1);
    const at = Math.max(Date.now(), last === undefined ? 0 : last + minGapMs);
    while (opens.length > 0 && (opens[0] ?? 0) <= at - MINUTE_MS) opens.shift();
    opens.push(at);
    if (opens.length > STREAM_OPENS_PER_MINUTE) {
      tooOften = true;
      onTooOften();
      return noStream();
    }
    const wait = at - Date.now();
    if (wait > 0) await pause(wait, init?.signal);
    return base(url, init);
  };
}
