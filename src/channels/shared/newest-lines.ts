/**
 * Status lines cut to a size by dropping the oldest: what the agent does now matters most. Both
 * platforms' status blocks (Slack's plan and tool sections, Telegram's live-preview status) keep
 * the newest lines that fit and put a marker of their own where the older ones were.
 */

/**
 * The newest of `lines` whose lengths (by `lengthOf`, plus one separator each) fit in `room`, in
 * order, and how many older ones were dropped.
 */
export function newestLines(
  lines: readonly string[],
  room: number,
  lengthOf: (line: string) => number = (line) => line.length,
): { readonly kept: string[]; readonly dropped: number } {
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i] as string;
    const length = lengthOf(line) + 1;
    if (size + length > room) break;
    kept.unshift(line);
    size += length;
  }
  return { kept, dropped: lines.length - kept.length };
}
