/**
 * When a timezone's UTC offset changes (daylight saving starts or ends): the instants of the next
 * year or so, found by comparing the offset at the ends of each day (each end looked up once, as
 * one day's end is the next day's start) and then halving a day where it differs down to a second.
 * The minimum-interval guard looks at a schedule's runs around them (occurrences.ts), where local
 * times repeat or are skipped.
 */

const DAY_MS = 86_400_000;
/**
 * Days ahead looked at: a year, in which a zone's rules run once through, and more, since a change
 * set on a weekday ("the last Sunday of October") comes up to a week later the next year.
 */
const DAYS_AHEAD = 400;

/** The instants (epoch ms, whole seconds) in the DAYS_AHEAD after `fromMs` at which `zone`'s offset changes. */
export function offsetChanges(zone: string, fromMs: number): number[] {
  const format = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
  const offsetAt = (ms: number) =>
    format.formatToParts(ms).find((part) => part.type === "timeZoneName")?.value;
  const changes: number[] = [];
  let dayStart = fromMs;
  let startOffset = offsetAt(dayStart);
  for (let day = 0; day < DAYS_AHEAD; day++) {
    const dayEnd = dayStart + DAY_MS;
    const endOffset = offsetAt(dayEnd);
    if (endOffset !== startOffset) {
      let before = dayStart;
      let after = dayEnd;
      while (after - before > 1_000) {
        const middle = Math.floor((before + after) / 2);
        if (offsetAt(middle) === startOffset) before = middle;
        else after = middle;
      }
      // The change falls on a whole second, the first after `before`.
      changes.push(Math.floor(before / 1_000) * 1_000 + 1_000);
    }
    dayStart = dayEnd;
    startOffset = endOffset;
  }
  return changes;
}
