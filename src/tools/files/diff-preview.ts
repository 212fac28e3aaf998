/**
 * Unified diff previews for the approval cards of write_file and edit_file. A diff is shown only
 * whole, up to what one model reply may hold: the card shows what fits a chat message and posts
 * the rest beside it as a file (channels/shared/card-attachment.ts), so the person deciding can
 * read every line the write would put there — a line hidden in the middle of a long change is
 * what an injected model would try. A longer (or too slow) diff is not cut: the tools show the
 * text they write instead, which no reply makes longer. The diff runs on the event loop and
 * costs up to lines × edits, so it gives up after a time limit (a shell-made file of 200,000
 * lines against 2,000 new ones would otherwise freeze the whole service for over a minute).
 * `diff` is imported on the first preview, so a start never loads it. */
import { MAX_REPLY_CHARS } from "../../core/messages.js";

/** The longest diff shown: a whole reply's worth. */
const MAX_DIFF_CHARS = MAX_REPLY_CHARS;

/** Longest the diff may hold the event loop, in milliseconds. */
const DIFF_TIME_LIMIT_MS = 500;

/** Lines of a text, a final newline not counting as the start of another. */
export function countLines(text: string): number {
  return text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/**
 * A unified diff of `before` → `after` for `shownPath` (`before` undefined = new file), or
 * undefined when it cannot be shown whole: longer than a reply, or too slow to compute.
 */
export async function unifiedDiff(
  shownPath: string,
  before: string | undefined,
  after: string,
): Promise<string | undefined> {
  const { createTwoFilesPatch } = await import("diff");
  const patch = createTwoFilesPatch(
    before === undefined ? "/dev/null" : `a/${shownPath}`,
    `b/${shownPath}`,
    before ?? "",
    after,
    undefined,
    undefined,
    { context: 3, timeout: DIFF_TIME_LIMIT_MS },
  );
  if (patch === undefined) return undefined;
  const body = patch.replace(/^=+\n/m, "").replace(/^Index:.*\n/m, "");
  return body.length <= MAX_DIFF_CHARS ? body : undefined;
}

/** How a card says a change is shown as the text written, not as a diff. */
export const NO_DIFF_NOTE = "the change is too large to show as a diff";
