/**
 * Unified diff previews for the approval cards of write_file and edit_file, capped so a huge
 * rewrite still fits a chat message. `diff` is imported on the first preview, so a start never
 * loads it.
 */
import { capOutput } from "../output-cap.js";

/** Default cap for a diff preview, in characters. */
export const DEFAULT_DIFF_PREVIEW_CHARS = 6000;

/** A unified diff of `before` → `after` for `shownPath` (`before` undefined = new file). */
export async function unifiedDiff(
  shownPath: string,
  before: string | undefined,
  after: string,
  maxChars = DEFAULT_DIFF_PREVIEW_CHARS,
): Promise<string> {
  const { createTwoFilesPatch } = await import("diff");
  const patch = createTwoFilesPatch(
    before === undefined ? "/dev/null" : `a/${shownPath}`,
    `b/${shownPath}`,
    before ?? "",
    after,
    undefined,
    undefined,
    { context: 3 },
  );
  const body = patch.replace(/^=+\n/m, "").replace(/^Index:.*\n/m, "");
  return capOutput(body, maxChars, 0.8);
}
