/**
 * When a timezone's UTC offset changes (daylight saving starts or ends): the instants of the next
 * year or so, found by comparing the offset a day apart and then halving the day down to a second. The
 * minimum-interval guard looks at a schedule's runs around them (occurrences.ts), where local
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
  for (let day = 0; day < DAYS_AHEAD; day++) {
    let before = fromMs + day * DAY_MS;
    let after = before + DAY_MS;
    const first = offsetAt(before);
    if (first === offsetAt(after)) continue;
    while (after - before > 1_000) {
      const middle = Math.floor((before + after) / 2);
      if (offsetAt(middle) === first) before = middle;
      else after = middle;
    }
    // The change falls on a whole second, the first after `before`.
    changes.push(Math.floor(before / 1_000) * 1_000 + 1_000);
  }
  return changes;
}
