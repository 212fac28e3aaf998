/**
 * A download's body read within a size and a time: the size limit stops the read and cancels the
 * rest, and the deadline's abort (and only it) becomes the note's words.
 */
import { describe, expect, it } from "vitest";
import {
  DOWNLOAD_TIMEOUT_MS,
  downloadDeadline,
  megabytes,
  readBodyWithin,
} from "../../../src/channels/shared/body-within.js";

function streamOf(...chunks: string[]): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  const queue = chunks.map((chunk) => new TextEncoder().encode(chunk));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = queue.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

describe("readBodyWithin", () => {
  it("reads a body within the limit whole, and an absent body as empty", async () => {
    expect((await readBodyWithin(streamOf("ab", "cd").stream, 4, () => new Error("big"))).toString()).toBe(
      "abcd",
    );
    expect((await readBodyWithin(undefined, 4, () => new Error("big"))).byteLength).toBe(0);
  });

  it("throws the caller's error and cancels the rest once the body passes the limit", async () => {
    const body = streamOf("ab", "cd", "ef");
    await expect(readBodyWithin(body.stream, 3, () => new Error("too big"))).rejects.toThrow("too big");
    expect(body.cancelled()).toBe(true);
  });
});

describe("downloadDeadline", () => {
  it("is 60 s unless a channel sets another", () => {
    expect(DOWNLOAD_TIMEOUT_MS).toBe(60_000);
    expect(downloadDeadline().overdue(new DOMException("late", "TimeoutError"))).toBe(
      "the download took longer than 60 s",
    );
  });

  it("aborts its signal at the deadline, and names only that abort as overdue", async () => {
    const deadline = downloadDeadline(20);
    const error = await new Promise((resolve) =>
      deadline.signal.addEventListener("abort", () => resolve(deadline.signal.reason)),
    );
    expect(deadline.overdue(error)).toBe("the download took longer than 0.02 s");
    expect(deadline.overdue(new DOMException("stopped", "AbortError"))).toBeUndefined();
    expect(deadline.overdue(new Error("HTTP 500"))).toBeUndefined();
  });
});

describe("megabytes", () => {
  it("writes a size in MB with one decimal", () => {
    expect(megabytes(1_572_864)).toBe("1.5 MB");
  });
});
