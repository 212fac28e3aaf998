/**
 * The ISO text of a Date, the last one kept: toISOString costs about a microsecond, and one reply
 * stamps the time several times within a millisecond (its turn's start, its messages, its
 * record's versions), so the text of an equal time is handed back instead of formatted again.
 */

let lastTime = Number.NaN;
let lastText = "";

/** `date.toISOString()` (a RangeError for an invalid date, as there). */
export function isoTime(date: Date): string {
  const time = date.getTime();
  if (time !== lastTime) {
    lastText = date.toISOString();
    lastTime = time;
  }
  return lastText;
}
